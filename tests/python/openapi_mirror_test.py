#!/usr/bin/python3
"""The Python client's API mirrors the contract (no servers needed).

    tests/python/openapi_mirror_test.py [unittest arguments]

  - every /v1 operation the package declares (corral.operations) is in
    docs/api/openapi.yaml with that method and path, its path parameters, only query
    parameters the document lists, and an Idempotency-Key exactly where the document
    takes one;
  - every operation of the areas the client covers (jobs, datasets, runs, models,
    features, drift) is wrapped, but for those listed here with the reason;
  - every /local operation is the one docs/agent-protocol.md describes;
  - the package, the test worker and examples/torch_ddp.py parse as Python 3.9.

The document is read with a few regular expressions over its layout (paths at two
spaces, methods at four, parameters as one-line flow mappings), which the standard
library allows; a layout they do not recognise fails the parse check first.
"""

import ast
import glob
import os
import re
import sys
import unittest

sys.dont_write_bytecode = True  # nothing written into the source tree
HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "python"))

import corral  # noqa: E402,F401  (imports every module, so every Operation is declared)
from corral.operations import local_operations, v1_operations  # noqa: E402

METHODS = ("get", "post", "put", "delete", "patch")
# Operations of the covered areas the client leaves out on purpose.
NOT_WRAPPED = {
    ("PUT", "/v1/datasets/{id}/versions/{version}"): "always refused: a version is immutable",
}
COVERED = ("/v1/jobs", "/v1/datasets", "/v1/runs", "/v1/models", "/v1/features")
# Shared parameters, by their $ref name: (name, in).
REFS = {"Limit": ("limit", "query"), "Cursor": ("cursor", "query"),
        "JobId": ("id", "path"), "NodeId": ("id", "path")}


def openapi_operations(path=os.path.join(ROOT, "docs", "api", "openapi.yaml")):
    """{(METHOD, path): the text of that operation's block} from the document's paths."""
    with open(path, encoding="utf-8") as f:
        lines = f.read().splitlines()
    start = lines.index("paths:") + 1
    ops, current_path, current_op = {}, None, None
    for line in lines[start:]:
        if line and not line.startswith(" "):
            break  # the next top-level key
        m = re.match(r"^  (/\S*):\s*$", line)
        if m:
            current_path, current_op = m.group(1), None
            continue
        m = re.match(r"^    (\w+):(.*)$", line)
        if m and m.group(1) in METHODS:
            current_op = (m.group(1).upper(), current_path)
            ops[current_op] = m.group(2)
            continue
        if current_op and line.startswith("      "):
            ops[current_op] += "\n" + line
    return ops


def parameters(block):
    """{(name, in)} of an operation's block: inline ones and the shared $refs."""
    found = set(re.findall(r"\{name: (\w+), in: (query|path)", block))
    for ref in re.findall(r"#/components/parameters/(\w+)", block):
        if ref in REFS:
            found.add(REFS[ref])
    return found


class OpenApiMirrorTest(unittest.TestCase):

    @classmethod
    def setUpClass(cls):
        cls.document = openapi_operations()

    def test_the_document_parses_into_its_operations(self):
        self.assertGreater(len(self.document), 80)
        self.assertIn(("POST", "/v1/jobs"), self.document)
        self.assertIn(("POST", "/v1/nodes/{id}/cordon"), self.document)  # a flow mapping
        self.assertEqual(parameters(self.document[("GET", "/v1/runs/{id}/metrics")]),
                         {("id", "path"), ("name", "query"), ("limit", "query"),
                          ("cursor", "query")})

    def test_every_wrapped_operation_is_in_the_document_as_declared(self):
        ops = v1_operations()
        self.assertGreater(len(ops), 40)
        for op in ops:
            with self.subTest(op=f"{op.method} {op.path}"):
                key = (op.method, op.path)
                self.assertTrue(key in self.document, "not in docs/api/openapi.yaml")
                block = self.document[key]
                declared = parameters(block)
                self.assertEqual({(p, "path") for p in op.path_params},
                                 {d for d in declared if d[1] == "path"})
                for name in op.query:
                    self.assertIn((name, "query"), declared, f"query parameter {name}")
                self.assertEqual(op.idempotency_key, "IdempotencyKey" in block,
                                 "Idempotency-Key sent where the document takes none, "
                                 "or not sent where it does")

    def test_every_operation_of_the_covered_areas_is_wrapped(self):
        wrapped = {(op.method, op.path) for op in v1_operations()}
        self.assertEqual(len(wrapped), len(v1_operations()), "an operation declared twice")
        for key in sorted(self.document):
            if key[1].startswith(COVERED) and key not in NOT_WRAPPED:
                with self.subTest(op=f"{key[0]} {key[1]}"):
                    self.assertTrue(key in wrapped, "the client does not wrap it")
        print(f"the client wraps {len(wrapped)} of the document's {len(self.document)} "
              "operations", file=sys.stderr)

    def test_every_local_operation_is_the_agent_protocols(self):
        with open(os.path.join(ROOT, "docs", "agent-protocol.md"), encoding="utf-8") as f:
            protocol = f.read()
        self.assertEqual(len(local_operations()), 3)
        for op in local_operations():
            with self.subTest(op=f"{op.method} {op.path}"):
                self.assertIn(f"{op.method} {{CORRAL_AGENT_URL}}{op.path}", protocol)


class Python39Test(unittest.TestCase):

    def test_the_sources_parse_as_python_3_9(self):
        files = sorted(glob.glob(os.path.join(ROOT, "python", "corral", "*.py")))
        files += [os.path.join(HERE, "worker.py"), os.path.join(HERE, "client_test.py"),
                  os.path.join(ROOT, "examples", "torch_ddp.py")]
        self.assertGreater(len(files), 10)
        for path in files:
            with self.subTest(path=os.path.relpath(path, ROOT)):
                with open(path, encoding="utf-8") as f:
                    ast.parse(f.read(), path, feature_version=(3, 9))


if __name__ == "__main__":
    unittest.main(verbosity=2)

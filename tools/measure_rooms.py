#!/usr/bin/env python3
"""The shape measures of issue 40 (docs/architecture.md#measures), for a tree or a commit.

  tools/measure_rooms.py            # the work tree
  tools/measure_rooms.py REV        # a commit (read with git show; nothing checked out)

Prints files and lines per module and per folder of src/server, the largest files and
functions, how `store::Tx` hands out its repositories, the server files and parameters
that take a whole `store::Tx&` or a narrow repository, and the files that decode tenant,
node and reservation JSON. A function is counted from a line at column 0 that opens a
body to the `}` at column 0 that closes it: a heuristic that fits this code's
clang-format style.
"""
import collections
import re
import subprocess
import sys

rev = sys.argv[1] if len(sys.argv) > 1 else None


def files():
    if rev:
        out = subprocess.run(["git", "ls-tree", "-r", "--name-only", rev, "src"],
                             capture_output=True, text=True, check=True).stdout
    else:
        out = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "src"],
                             capture_output=True, text=True, check=True).stdout
    return [f for f in out.split() if f.endswith((".cc", ".h"))]


def read(path):
    if rev:
        return subprocess.run(["git", "show", f"{rev}:{path}"], capture_output=True,
                              text=True, check=True).stdout
    with open(path, encoding="utf-8") as f:
        return f.read()


texts = {f: read(f) for f in files()}
per_module = collections.defaultdict(lambda: [0, 0])
for f, t in texts.items():
    module = f.split("/")[1]
    per_module[module][0] += 1
    per_module[module][1] += t.count("\n")
print("module      files  lines")
for m, (n, lines) in sorted(per_module.items()):
    print(f"{m:<10} {n:>6} {lines:>6}")
per_folder = collections.defaultdict(lambda: [0, 0])
for f, t in texts.items():
    if f.startswith("src/server/"):
        folder = f.split("/")[2] if f.count("/") > 2 else "."
        per_folder[folder][0] += 1
        per_folder[folder][1] += t.count("\n")
print("\nsrc/server   files  lines")
for m, (n, lines) in sorted(per_folder.items()):
    print(f"  {m:<10} {n:>6} {lines:>6}")

print("\nlargest files:")
for f, t in sorted(texts.items(), key=lambda kv: -kv[1].count("\n"))[:6]:
    print(f"  {t.count(chr(10)):>5}  {f}")

functions = []
for f, t in texts.items():
    if not f.endswith(".cc"):
        continue
    lines = t.split("\n")
    start = None
    for i, line in enumerate(lines):
        if start is None and line and not line[0].isspace() and line.rstrip().endswith("{") \
                and "(" in "".join(lines[max(0, i - 3):i + 1]) \
                and not re.match(r"(namespace|struct|class|enum|extern|union)\b", line):
            start = i
        elif start is not None and line.startswith("}"):
            functions.append((i - start + 1, f, start + 1))
            start = None
print("\nlargest functions:")
for n, f, line in sorted(functions, reverse=True)[:5]:
    print(f"  {n:>5}  {f}:{line}")

store_h = texts.get("src/store/store.h", "")
tx_body = store_h.split("class Tx", 1)[1].split("\n};", 1)[0] if "class Tx" in store_h else ""
bases = re.findall(r"public (\w+Repo)", tx_body.split("{", 1)[0])
accessors = re.findall(r"virtual (\w+Repo)& \w+\(\) = 0;", tx_body)
repo_methods = {}
for f, t in texts.items():
    if f.startswith("src/store/") and f.endswith(".h"):
        for m in re.finditer(r"class (\w+Repo) \{(.*?)\n\};", t, re.S):
            repo_methods[m.group(1)] = len(re.findall(r"\bvirtual\b(?!\s*~)", m.group(2)))
if bases:
    print(f"\nstore::Tx inherits {len(bases)} repositories, "
          f"{sum(repo_methods.get(b, 0) for b in bases)} methods")
else:
    largest = max(repo_methods.items(), key=lambda kv: kv[1])
    print(f"\nstore::Tx hands out {len(accessors)} repositories by name ({len(accessors)} methods); "
          f"the largest, {largest[0]}, has {largest[1]}")
tx_callers = [f for f, t in texts.items() if f.startswith("src/server/") and "store::Tx&" in t]
print(f"server files taking store::Tx&: {len(tx_callers)}")
narrow = sorted({f for f, t in texts.items() if f.startswith("src/server/")
                 and re.search(r"store::\w+Repo&", t)})
print(f"server files taking a narrow repository (store::XRepo&): {len(narrow)}")


def params(pattern):
    return sum(len(re.findall(pattern, t)) for f, t in texts.items()
               if f.startswith("src/server/") and f.endswith(".cc"))


whole, narrow_params = params(r"store::Tx& \w+[,)]"), params(r"store::\w+Repo& \w+[,)]")
print(f"server parameters of type store::Tx&: {whole}, of a narrow repository: {narrow_params}")
for what, decoder in (("tenant", "tenant_config_from_json("), ("node", "node_from_json("),
                      ("reservation", "reservation_from_json(")):
    decoders = sorted(f for f, t in texts.items() if decoder in t and not f.endswith(".h"))
    print(f"files decoding {what} JSON: {len(decoders)}: {' '.join(decoders)}")

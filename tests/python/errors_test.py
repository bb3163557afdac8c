#!/usr/bin/python3
"""corral.errors: each answer shape the package meets becomes its typed error.

    tests/python/errors_test.py [unittest arguments]

The shapes: corrald's {"error": {code, message, field, details}}, the agent's /local
errors (no details), a 409 code of the agent protocol, a 429 with Retry-After, and a
body that is no Corral error at all (a proxy's page). client_test.py meets the same
errors from real processes; this one needs none.
"""

import os
import sys
import unittest

sys.dont_write_bytecode = True  # nothing written into the source tree
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))

import corral  # noqa: E402
from corral.errors import error_from_answer  # noqa: E402


class ErrorFromAnswerTest(unittest.TestCase):

    def test_corralds_error_keeps_every_detail(self):
        e = error_from_answer(400, """{"error": {"code": "invalid_argument",
            "message":
              "resources.gpus: must be between 1 and 16384, got 0; command: must not be empty",
            "field": "resources.gpus",
            "details": [{"field": "resources.gpus", "reason": "must be between 1 and 16384, got 0"},
                        {"field": "command", "reason": "must not be empty"}]}}""",
                              operation="POST /v1/jobs")
        self.assertIsInstance(e, corral.InvalidArgument)
        self.assertEqual((e.status, e.code, e.field), (400, "invalid_argument", "resources.gpus"))
        self.assertEqual(e.details, [("resources.gpus", "must be between 1 and 16384, got 0"),
                                     ("command", "must not be empty")])
        self.assertEqual(str(e.details[1]), "command: must not be empty")
        self.assertEqual(str(e), "POST /v1/jobs: HTTP 400 invalid_argument: resources.gpus: "
                                 "must be between 1 and 16384, got 0; command: must not be empty")

    def test_an_agents_error_gets_one_detail_from_its_message_and_field(self):
        e = error_from_answer(400, '{"error": {"code": "invalid_argument", '
                                   '"message": "must be an absolute path", "field": "path"}}')
        self.assertEqual(e.details, [corral.FieldError("path", "must be an absolute path")])
        e = error_from_answer(401, '{"error": {"code": "unauthenticated", "message": '
                                   '"a worker token (CORRAL_WORKER_TOKEN) is required"}}')
        self.assertIsInstance(e, corral.Unauthenticated)
        self.assertEqual(e.details, [("", "a worker token (CORRAL_WORKER_TOKEN) is required")])
        self.assertEqual(str(e.details[0]), "a worker token (CORRAL_WORKER_TOKEN) is required")

    def test_each_code_is_its_class_and_the_409s_are_conflicts(self):
        expected = {"not_found": corral.NotFound, "permission_denied": corral.PermissionDenied,
                    "already_exists": corral.AlreadyExists, "aborted": corral.Aborted,
                    "failed_precondition": corral.FailedPrecondition, "stale": corral.Stale,
                    "fenced": corral.Fenced, "unavailable": corral.Unavailable,
                    "internal": corral.Internal, "data_loss": corral.DataLoss}
        for code, cls in expected.items():
            with self.subTest(code=code):
                e = error_from_answer(409, f'{{"error": {{"code": "{code}", "message": "m"}}}}')
                self.assertIs(type(e), cls)
                self.assertEqual(e.code, code)
        for cls in (corral.AlreadyExists, corral.Aborted, corral.FailedPrecondition,
                    corral.Stale, corral.Fenced):
            self.assertTrue(issubclass(cls, corral.Conflict))
        self.assertTrue(issubclass(corral.ApiError, corral.CorralError))
        self.assertTrue(issubclass(corral.WaitTimeout, TimeoutError))

    def test_a_429_carries_its_retry_after(self):
        e = error_from_answer(429, '{"error": {"code": "resource_exhausted", '
                                   '"message": "tenant ml: submit rate"}}', retry_after="3")
        self.assertIsInstance(e, corral.ResourceExhausted)
        self.assertEqual(e.retry_after_s, 3)

    def test_an_answer_that_is_no_corral_error_is_typed_by_its_status(self):
        e = error_from_answer(503, "<html>upstream gone</html>")
        self.assertIsInstance(e, corral.Unavailable)
        self.assertEqual((e.code, e.message, e.details),
                         ("unavailable", "<html>upstream gone</html>", []))
        e = error_from_answer(502, "")
        self.assertIsInstance(e, corral.Internal)
        self.assertEqual((e.code, e.message), ("http_502", "HTTP 502"))
        self.assertIs(type(error_from_answer(418, "teapot")), corral.ApiError)


if __name__ == "__main__":
    unittest.main(verbosity=2)

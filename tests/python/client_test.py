#!/usr/bin/python3
"""The Python client (python/corral) against a real corrald and a real corral-agent.

    tests/python/client_test.py BUILD_DIR [unittest arguments]

BUILD_DIR is a build whose src/ holds corrald and corral-agent (and examples/trainer/
corral-trainer, which the cluster helper puts on PATH). It starts corrald on a
temporary SQLite store and one simulated 8-GPU node on loopback
(tests/dashboard/cluster.py), then runs, through `corral.Client` and workers that use
`corral.job`:

  - a training job whose worker logs metrics, writes and reports a checkpoint and
    crashes; its second attempt restores from that checkpoint, looks features up at
    a point in time and reports its model: the run's points, checkpoint, artifact
    digest and manifest are checked through the client, and the rank logs of both
    attempts;
  - drift: a version registered from that run's model, its reference set, two
    predictions logged by a job with an API token, delayed labels judged, a report;
  - the registry: versions promoted through their gates, approved, rolled back, a
    retraining template; a dataset version registered once, its status moved; a run
    reproduced;
  - typed errors carrying the API's details (a bad spec, unknown ids, a bad token,
    an unreachable server, the agent's own refusals of a token and of a metric's
    name, a 409 of the drift log);
  - lists followed through their cursors, wait with a timeout, cancel;
  - examples/torch_ddp.py as a 2-rank gloo job (skipped without torch).
"""

import hashlib
import json
import os
import subprocess
import sys
import tempfile
import unittest

sys.dont_write_bytecode = True  # nothing written into the source tree

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
PYTHON_DIR = os.path.join(ROOT, "python")
sys.path.insert(0, PYTHON_DIR)
sys.path.insert(0, os.path.join(ROOT, "tests", "dashboard"))

import corral  # noqa: E402
from cluster import Cluster  # noqa: E402

# Every job waits at most this long: corrald and the agent run under ASan in the test
# command, beside other tests, on 2 cores.
WAIT_S = 120
# A fixed instant for the feature values (2026-12-04), far from the test's clock.
T = 1_796_400_000_000

CONFIG = """\
tenants:
  ml:
    quotas: {H100: {guaranteed: 8, borrowLimit: 8}}
agents:
  restartBackoffMs: 200
"""

cluster = None
admin = None
member = None
member_token = None
ckpt_root = None


def spec(name, command, gpus=1, env=None, pythonpath=True, **extra):
    """A job spec of tenant ml whose workers import corral from this checkout (with
    pythonpath) and write no bytecode beside it."""
    body = {"name": name, "tenant": "ml",
            "resources": {"gpus": gpus, "gpuTypes": ["H100"]},
            "checkpoint": {"dir": os.path.join(ckpt_root, name), "intervalSeconds": 60},
            "maxRuntime": "10m",
            "env": {"PYTHONDONTWRITEBYTECODE": "1", **(env or {})},
            "command": command}
    if pythonpath:
        body["env"]["PYTHONPATH"] = PYTHON_DIR
    body.update(extra)
    return body


def worker(*args):
    return [sys.executable, os.path.join(HERE, "worker.py")] + [str(a) for a in args]


def eventually(read, done, what):
    """Calls read() until done(its answer), within WAIT_S, and returns that answer."""
    answer = {}

    def check():
        answer["value"] = read()
        return done(answer["value"])
    cluster.wait_until(check, timeout=WAIT_S, what=what)
    return answer["value"]


def sha256_file(path):
    with open(path, "rb") as f:
        return "sha256:" + hashlib.sha256(f.read()).hexdigest()


class TrainingJobTest(unittest.TestCase):
    """One job through a crash and a restore, then what its run recorded."""

    @classmethod
    def setUpClass(cls):
        admin.features.register("user-stats", "v1", {"clicks": "int"},
                                source="kafka://clicks", tenant="ml")
        written = admin.features.write("user-stats", "v1", [
            {"entity": "u1", "eventTimeMs": T - 30_000, "values": {"clicks": 1}},
            {"entity": "u1", "eventTimeMs": T + 1_000, "values": {"clicks": 9}},  # after T
            {"entity": "u2", "eventTimeMs": T - 120_000, "values": {"clicks": 4}},  # past the TTL
        ], watermarks={"kafka://clicks": T})
        assert written["written"] == 3, written
        crash_file = os.path.join(ckpt_root, "train.crash")
        submitted = admin.jobs.submit(spec("train", worker("train", 6, 3, "user-stats@v1", T,
                                                           crash_file)))
        job_id = submitted["id"]
        # Attempt 1 crashes once corrald has recorded its checkpoint (worker.py).
        eventually(lambda: admin.jobs.get(job_id)["lastCheckpoint"],
                   lambda last: last and last["step"] == 3, "attempt 1's checkpoint recorded")
        open(crash_file, "w").close()
        cls.job = admin.jobs.wait(job_id, timeout_s=WAIT_S, poll_s=0.2)
        # Reports travel apart from the worker's exit: the last one, the model, may
        # reach corrald after the job has succeeded.
        eventually(lambda: admin.runs.artifacts(job_id),
                   lambda artifacts: any(a["kind"] == "artifact" for a in artifacts),
                   "the model reported")
        cls.logs = {a: admin.jobs.logs(job_id, attempt=a) for a in (1, 2)}

    def log_line(self, attempt, prefix):
        lines = [l for l in self.logs[attempt].splitlines() if l.startswith(prefix)]
        self.assertTrue(lines, f"no line starting {prefix!r} in attempt {attempt}'s log:\n"
                               f"{self.logs[attempt]}")
        return lines[-1]

    def test_the_job_succeeds_on_its_second_attempt(self):
        self.assertEqual(self.job["phase"], "succeeded", self.job)
        self.assertEqual(self.job["attempt"], 2)

    def test_the_agent_refuses_a_bad_report_naming_its_field(self):
        self.assertEqual(self.log_line(1, "refused="),
                         "refused=400 invalid_argument metrics[0].name: "
                         "must be 1 to 128 of letters, digits, '_', '.', '/', '-'")

    def test_the_second_attempt_restores_the_checkpoint_the_first_reported(self):
        path = os.path.join(ckpt_root, "train", "step-000000003-attempt-1")
        self.assertIn(f"checkpoint step 3 at {path}", self.log_line(1, "worker: checkpoint"))
        self.assertEqual(self.log_line(2, "worker: restored"),
                         f"worker: restored step 3 from {path}")
        last = self.job["lastCheckpoint"]
        self.assertEqual((last["attempt"], last["step"], last["uri"]), (1, 3, path))
        self.assertEqual(last["checksum"], sha256_file(path))
        self.assertEqual(last["bytes"], os.path.getsize(path))
        run = admin.runs.get(self.job["id"])
        self.assertEqual(run["attemptHistory"][1]["restoredFrom"], {"uri": path, "step": 3})

    def test_every_step_is_one_point_of_the_attempt_that_reported_it(self):
        points = admin.runs.metrics(self.job["id"], name="loss")
        self.assertEqual([(p["step"], p["attempt"]) for p in points],
                         [(s, 1 if s <= 3 else 2) for s in range(6)])
        for p in points:  # corrald keeps 15 significant digits
            self.assertAlmostEqual(p["value"], 1.0 / (p["step"] + 1), places=12)
        # One point a page: the cursor is followed to the end, and a limit stops early.
        paged = corral.Client(cluster.url, cluster.admin_token, page_size=1).runs
        self.assertEqual(paged.metrics(self.job["id"], name="loss"), points)
        self.assertEqual(paged.metrics(self.job["id"], limit=4), points[:4])
        [summary] = admin.runs.get(self.job["id"])["metrics"]
        self.assertEqual((summary["name"], summary["points"], summary["lastStep"]), ("loss", 6, 5))
        self.assertAlmostEqual(summary["lastValue"], 1.0 / 6, places=12)

    def test_the_model_and_the_checkpoint_are_the_runs_artifacts(self):
        artifacts = admin.runs.artifacts(self.job["id"])
        by_kind = {a["kind"]: a for a in artifacts}
        model = os.path.join(ckpt_root, "train", "model")
        self.assertEqual(by_kind["artifact"]["name"], "model")
        self.assertEqual(by_kind["artifact"]["uri"], model)
        self.assertEqual(by_kind["artifact"]["digest"], sha256_file(model))
        self.assertEqual(by_kind["artifact"]["bytes"], os.path.getsize(model))
        self.assertEqual(by_kind["checkpoint"]["step"], 3)

    def test_the_feature_lookup_is_point_in_time_and_joins_the_manifest(self):
        answer = json.loads(self.log_line(2, "lookup=")[len("lookup="):])
        u1, u2 = answer["results"]
        self.assertEqual((u1["entity"], u1["eventTimeMs"], u1["values"]),
                         ("u1", T - 30_000, {"clicks": 1}))  # never the value after T
        # Its only value is older than the TTL.
        self.assertEqual(u2, {"entity": "u2", "atMs": T, "eventTimeMs": None, "values": None})
        self.assertEqual(answer["watermarks"], {"kafka://clicks": T})
        # The member endpoint answers the same rows the same way.
        direct = admin.features.lookup("user-stats", "v1", [("u1", T), ("u2", T)], ttl_ms=60_000)
        self.assertEqual(direct["results"], answer["results"])
        self.assertEqual([(f["name"], f["version"]) for f in admin.features.list()],
                         [("user-stats", "v1")])
        features = admin.runs.get(self.job["id"])["manifest"]["features"]
        self.assertEqual([(f["set"], f["lookups"], f["rows"], f["latestAtMs"]) for f in features],
                         [("user-stats@v1", 1, 2, T)])

    def test_predictions_logged_in_a_job_are_judged_by_delayed_labels(self):
        model = next(a for a in admin.runs.artifacts(self.job["id"]) if a["kind"] == "artifact")
        version = admin.models.register("ranker", "v1", run=self.job["id"],
                                        artifact_uri=model["uri"], digest=model["digest"])
        self.assertEqual((version["version"], version["tenant"]), ("v1", "ml"))
        admin.drift.set_reference("ranker", "v1",
                                  features={"prediction": [0.1, 0.5, 0.8, 0.9],
                                            "label": [0, 1, 1, 1]},
                                  thresholds={"mae": 0.1})
        # The serving side here is a job with a member token in its secretEnv (names
        # starting CORRAL_ are the agent's, so the token goes under a name of its own).
        serve = admin.jobs.submit(spec("serve", worker("serve", "ranker", "v1"),
                                       env={"SERVING_URL": cluster.url},
                                       secretEnv={"SERVING_TOKEN": member_token}))
        serve = admin.jobs.wait(serve["id"], timeout_s=WAIT_S, poll_s=0.2)
        self.assertEqual(serve["phase"], "succeeded", admin.jobs.logs(serve["id"]))
        self.assertIn("worker: logged 2 predictions", admin.jobs.logs(serve["id"]))
        # A repeat logs nothing twice; another value under a logged id is refused.
        again = member.drift.log_predictions("ranker", "v1", [("req-1", 0.9)], segment="eu")
        self.assertEqual((again["logged"], again["alreadyLogged"]), (0, 1))
        with self.assertRaises(corral.Conflict) as refused:
            member.drift.log_predictions("ranker", "v1", [("req-1", 0.1)], segment="eu")
        self.assertEqual(refused.exception.status, 409)
        # The labels come later, one of them for a prediction never logged.
        labels = member.drift.log_labels("ranker", "v1", {"req-1": 1, "req-2": 1, "req-9": 0})
        self.assertEqual((labels["labeled"], labels["unknown"], labels["unknownIds"]),
                         (2, 1, ["req-9"]))
        [report] = labels["reports"]
        self.assertEqual((report["kind"], report["segment"]), ("labels", "eu"))
        self.assertEqual(report["performance"]["labeled"], 2)
        self.assertAlmostEqual(report["performance"]["mae"], (0.1 + 0.8) / 2)
        self.assertTrue(report["drifted"])  # mae 0.45 against a threshold of 0.1
        self.assertEqual(report["retraining"]["outcome"], "no template")
        # A sample of current predictions, like the reference: no drift.
        current = member.drift.report("ranker", "v1", {"prediction": [0.1, 0.5, 0.8, 0.9]})
        self.assertEqual((current["kind"], current["drifted"]), ("features", False))
        self.assertEqual([r["id"] for r in member.drift.reports("ranker", "v1")],
                         [current["id"], report["id"]])  # newest first

    def test_a_version_is_promoted_through_its_gates_and_rolled_back(self):
        model = next(a for a in admin.runs.artifacts(self.job["id"]) if a["kind"] == "artifact")
        register = dict(run=self.job["id"], artifact_uri=model["uri"], digest=model["digest"])
        member.models.register("scorer", "v1", **register)
        gates = {"metrics": [{"metric": "loss", "max": 0.5}], "approvals": ["safety"]}
        member.models.register("scorer", "v2", gates=gates, **register)
        self.assertEqual(member.models.register("scorer", "v2", gates=gates, **register)["version"],
                         "v2")  # the same content again answers it
        with self.assertRaises(corral.InvalidArgument) as changed:
            member.models.register("scorer", "v2", gates={"approvals": ["legal"]}, **register)
        self.assertEqual(changed.exception.field, "version")
        member.models.move_alias("scorer", "production", "v1", reason="first")
        with self.assertRaises(corral.Conflict) as gated:
            member.models.move_alias("scorer", "production", "v2")
        self.assertIn("safety", gated.exception.message)
        with self.assertRaises(corral.PermissionDenied):  # its registrant never approves it
            member.models.approve("scorer", "v2", "safety")
        admin.models.approve("scorer", "v2", "safety", reason="reviewed")
        moved = member.models.move_alias("scorer", "production", "v2", reason="better loss")
        self.assertEqual(moved["version"], "v2")
        back = member.models.rollback("scorer", "production", reason="latency")
        self.assertEqual(back["version"], "v1")
        self.assertEqual(member.models.alias("scorer", "production")["version"], "v1")
        history = member.models.alias_history("scorer", "production")
        self.assertEqual([(m["kind"], m["to"]) for m in history],
                         [("move", "v1"), ("move", "v2"), ("rollback", "v1")])
        versions = member.models.get("scorer")["versions"]
        self.assertEqual([v["version"] for v in versions], ["v1", "v2"])
        self.assertEqual(member.models.version("scorer", "v2")["approved"][0]["name"], "safety")
        self.assertIn("scorer", [m["id"] for m in member.models.list()])
        # The job a drifted report would submit: set, read and taken away.
        template = spec("retrain-scorer", ["true"])
        self.assertEqual(member.drift.set_retraining("scorer", template)["job"]["name"],
                         "retrain-scorer")
        self.assertEqual(member.drift.retraining("scorer")["job"]["name"], "retrain-scorer")
        self.assertTrue(member.drift.delete_retraining("scorer")["deleted"])


class ErrorTest(unittest.TestCase):
    """Refusals arrive as the typed errors, with the API's details."""

    def test_a_bad_spec_is_invalid_argument_with_every_detail(self):
        with self.assertRaises(corral.InvalidArgument) as caught:
            admin.jobs.submit({"name": "bad", "resources": {"gpus": 0}, "command": []})
        e = caught.exception
        self.assertEqual((e.status, e.code, e.field), (400, "invalid_argument", "resources.gpus"))
        self.assertEqual(e.details[0], corral.FieldError("resources.gpus",
                                                         "must be between 1 and 16384, got 0"))
        self.assertIn("command", [d.field for d in e.details])
        self.assertEqual(e.operation, "POST /v1/jobs")
        self.assertIn("resources.gpus: must be between 1 and 16384, got 0", str(e))

    def test_a_yaml_spec_with_mistakes_names_each_line_of_them(self):
        with self.assertRaises(corral.InvalidArgument) as caught:
            admin.jobs.submit("name: bad\nresources: {gpus: 1}\ncommand: [x]\nnope: 1\n")
        self.assertEqual(caught.exception.field, "nope")

    def test_unknown_objects_are_not_found(self):
        for call in (lambda: admin.jobs.get(999999), lambda: admin.runs.get(999999),
                     lambda: admin.models.get("nosuch"),
                     lambda: admin.features.get("nosuch", "v1")):
            with self.assertRaises(corral.NotFound) as caught:
                call()
            self.assertEqual(caught.exception.status, 404)

    def test_a_wrong_token_is_unauthenticated(self):
        with self.assertRaises(corral.Unauthenticated):
            corral.Client(cluster.url, "not-a-token").whoami()
        self.assertEqual(member.whoami()["tenant"], "ml")

    def test_a_server_that_does_not_answer_is_unreachable(self):
        with self.assertRaises(corral.Unreachable) as caught:
            corral.Client("http://127.0.0.1:9", "t", retries=1).jobs.list()
        self.assertIn("tried 2 times", str(caught.exception))

    def test_the_agent_refuses_a_wrong_worker_token(self):
        status, node = cluster.api("GET", "/v1/nodes/py1")
        self.assertEqual(status, 200, node)
        agent_url = node["agent"]["url"]
        env = {"CORRAL_AGENT_URL": agent_url, "CORRAL_WORKER_TOKEN": "not-a-worker",
               "CORRAL_JOB_ID": "1", "CORRAL_ATTEMPT": "1"}
        job = corral.Job(env)
        with self.assertRaises(corral.Unauthenticated) as caught:
            job.log_metrics({"loss": 1.0}, step=0)
        self.assertIn("CORRAL_WORKER_TOKEN", caught.exception.message)
        with self.assertRaises(ValueError) as nan:
            job.log_metrics({"loss": float("nan")}, step=7)
        self.assertEqual(str(nan.exception), "metrics.loss: must be finite, got nan at step 7")

    def test_outside_a_job_there_is_no_job(self):
        self.assertIsNone(corral.job.current({}))
        with self.assertRaises(corral.NotInJob) as caught:
            corral.Job({"CORRAL_AGENT_URL": "http://127.0.0.1:1"})
        self.assertIn("CORRAL_WORKER_TOKEN, CORRAL_JOB_ID, CORRAL_ATTEMPT unset",
                      str(caught.exception))


class DatasetTest(unittest.TestCase):

    def test_a_version_is_registered_once_and_its_status_moves(self):
        digest = "sha256:" + "ab" * 32
        version = admin.datasets.register("webtext", "v1", "s3://corpus/webtext/v1/", digest,
                                          1 << 30, status="passed", tenant="ml")
        self.assertEqual((version["ref"], version["status"]), ("webtext@v1", "passed"))
        again = admin.datasets.register("webtext", "v1", "s3://corpus/webtext/v1/", digest,
                                        1 << 30, status="passed", tenant="ml")
        self.assertEqual(again["createdAtMs"], version["createdAtMs"])
        with self.assertRaises(corral.InvalidArgument) as other:
            admin.datasets.register("webtext", "v1", "s3://corpus/webtext/v1-b/", digest, 1 << 30,
                                    tenant="ml")
        self.assertEqual(other.exception.field, "uri")
        quarantined = member.datasets.set_status("webtext", "v1", "quarantined", reason="pii")
        self.assertEqual((quarantined["status"], quarantined["statusReason"]),
                         ("quarantined", "pii"))
        self.assertEqual(member.datasets.version("webtext", "v1")["status"], "quarantined")
        self.assertEqual([v["version"] for v in member.datasets.versions("webtext")], ["v1"])
        self.assertEqual(member.datasets.get("webtext")["tenant"], "ml")
        self.assertIn("webtext", [d["id"] for d in member.datasets.list()])
        self.assertEqual(member.datasets.jobs("webtext", "v1"), [])


class ListWaitCancelTest(unittest.TestCase):

    def test_wait_gives_up_at_its_timeout_and_a_cancel_ends_the_job(self):
        job = admin.jobs.submit(spec("sleeper", ["sleep", "600"]))
        running = admin.jobs.wait(job["id"], timeout_s=WAIT_S, poll_s=0.2, phases={"running"})
        self.assertEqual(running["phase"], "running")
        with self.assertRaises(corral.WaitTimeout) as caught:
            admin.jobs.wait(job["id"], timeout_s=0.3, poll_s=0.1)
        self.assertEqual(caught.exception.job["phase"], "running")
        self.assertRegex(str(caught.exception),
                         rf"^job {job['id']} is running \(.*\) after 0.3 s, waiting for "
                         "cancelled, failed, succeeded$")
        self.assertEqual(admin.jobs.cancel(job["id"], reason="test over")["phase"], "cancelled")
        self.assertEqual(admin.jobs.wait(job["id"], timeout_s=WAIT_S)["phase"], "cancelled")
        with self.assertRaises(corral.FailedPrecondition):
            admin.jobs.cancel(job["id"])
        kinds = [e["kind"] for e in admin.jobs.events(job["id"])]
        self.assertIn("cancelled", kinds)
        # Its run again, under a new id, until cancelled too.
        again = admin.runs.reproduce(job["id"])
        self.assertEqual(again["reproduces"], job["id"])
        self.assertEqual(admin.jobs.cancel(again["id"])["phase"], "cancelled")

    def test_lists_follow_their_cursors_and_stop_at_a_limit(self):
        ids = [admin.jobs.submit(spec(f"held-{i}", ["true"], gpus=9))["id"] for i in range(3)]
        paged = corral.Client(cluster.url, cluster.admin_token, page_size=2)
        try:
            everything = [j["id"] for j in admin.jobs.list(tenant="ml")]
            self.assertEqual([j["id"] for j in paged.jobs.list(tenant="ml")], everything)
            self.assertEqual(everything, sorted(everything))
            self.assertTrue(set(ids) <= set(everything))
            self.assertEqual([j["id"] for j in paged.jobs.list(tenant="ml", limit=3)],
                             everything[:3])
            pending = [j["id"] for j in admin.jobs.list(phase=["pending"], tenant="ml")]
            self.assertTrue(set(ids) <= set(pending))
            self.assertEqual([r["id"] for r in paged.runs.list(tenant="ml")], everything)
        finally:
            for job_id in ids:
                admin.jobs.cancel(job_id)


@unittest.skipUnless(subprocess.run([sys.executable, "-c", "import torch"],
                                    capture_output=True).returncode == 0,
                     "no torch for this python (Debian: python3-torch)")
class TorchDdpTest(unittest.TestCase):
    """examples/torch_ddp.py as corral-agent runs it: 2 ranks, gloo on the CPU."""

    def test_it_reports_its_loss_and_checkpoints_through_corral(self):
        script = os.path.join(ROOT, "examples", "torch_ddp.py")
        job = admin.jobs.submit(spec(
            "torch-ddp", [sys.executable, script, "--steps", "20", "--checkpoint-every", "10",
                          "--batch", "16"], gpus=2,
            resources={"gpus": 2, "gpuTypes": ["H100"], "gpusPerNode": 2},
            # It finds corral in the checkout itself, as it would run from a clone.
            env={"GLOO_SOCKET_IFNAME": "lo", "OMP_NUM_THREADS": "1"}, pythonpath=False))
        job = admin.jobs.wait(job["id"], timeout_s=WAIT_S, poll_s=0.5)
        self.assertEqual(job["phase"], "succeeded", admin.jobs.logs(job["id"]))
        self.assertIn("final loss=", admin.jobs.logs(job["id"]))
        # The last points are reported just before the exit, and may arrive after it.
        points = eventually(lambda: admin.runs.metrics(job["id"], name="loss"),
                            lambda points: len(points) >= 20, "20 points of loss")
        self.assertEqual([p["step"] for p in points], list(range(1, 21)))
        checkpoints = [a for a in admin.runs.artifacts(job["id"]) if a["kind"] == "checkpoint"]
        self.assertEqual([c["step"] for c in checkpoints], [10])
        self.assertEqual(checkpoints[0]["digest"], sha256_file(checkpoints[0]["uri"]))


def main():
    global cluster, admin, member, member_token, ckpt_root
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    build = sys.argv[1]
    config = tempfile.NamedTemporaryFile("w", suffix=".yaml", delete=False)
    config.write(CONFIG)
    config.close()
    ok = False
    try:
        with Cluster(os.path.join(build, "src"), os.path.join(build, "examples", "trainer"),
                     config.name, agents=[("py1", "leaf1", "rack1")]) as c:
            cluster = c
            ckpt_root = os.path.join(c.data_dir, "ckpt")
            admin = corral.Client(c.url, c.admin_token)
            member_token = c.mint_token("member", "ml")
            member = corral.Client(c.url, member_token)
            program = unittest.main(argv=[sys.argv[0]] + sys.argv[2:], exit=False, verbosity=2)
            ok = program.result.wasSuccessful()
            if not ok:
                c.stop(dump_log=True)
    finally:
        os.unlink(config.name)
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()

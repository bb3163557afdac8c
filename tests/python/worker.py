"""The worker that tests/python/client_test.py runs under real agents, using corral.

    worker.py train STEPS FAIL_AT FEATURE_SET AT_MS CRASH_FILE
        Sends a metric with a bad name (refused by the agent: a `refused=` line), then
        reports `loss` = 1/(step+1) for steps 0..STEPS-1, resuming after the step of
        CORRAL_RESTORE_FROM when set. On attempt 1 it writes and reports a checkpoint at
        FAIL_AT and, once CRASH_FILE exists, exits 1 (a crash), so attempt 2 must
        restore from it. On the
        attempt that finishes it looks FEATURE_SET up for entities u1 and u2 at AT_MS,
        prints the answer as one `lookup=` JSON line, and writes and reports its model.
    worker.py serve MODEL VERSION
        The serving side inside a job: logs two predictions for drift through the /v1
        API, with the server and token its spec passed it (SERVING_URL, SERVING_TOKEN).

Each step it takes is printed, for the test to read through corral.Client().jobs.logs.
"""

import json
import os
import sys
import time

import corral
from corral.files import write_atomic


def train(steps, fail_at, feature_set, at_ms, crash_file):
    job = corral.job.current()
    if job is None:
        sys.exit("worker: not started by corral-agent")
    print(f"worker: job {job.job_id} attempt {job.attempt} rank {job.rank}", flush=True)
    try:  # the agent's own refusal, with the field it names
        job.log_metrics({"bad name!": 1.0}, step=0)
    except corral.InvalidArgument as e:
        detail = e.details[0]
        print(f"refused={e.status} {e.code} {detail.field}: {detail.reason}", flush=True)
    start = 0
    if job.restore_from:
        with open(job.restore_from) as f:
            restored = json.load(f)["step"]
        print(f"worker: restored step {restored} from {job.restore_from}", flush=True)
        start = restored + 1
    for step in range(start, steps):
        job.log_metrics({"loss": 1.0 / (step + 1)}, step=step)
        if step == fail_at and job.attempt == 1:
            state = json.dumps({"step": step}).encode()
            path = job.save_checkpoint(step, lambda f: f.write(state))
            print(f"worker: checkpoint step {step} at {path}; crashing", flush=True)
            # The agent forwards reports on its own, after this call returns: the test
            # lets the worker crash once corrald has the checkpoint, or the report
            # could reach it after the next attempt began, and be refused as stale.
            while not os.path.exists(crash_file):
                time.sleep(0.05)
            sys.exit(1)
    answer = job.lookup_features(feature_set, [("u1", at_ms), ("u2", at_ms)], ttl_ms=60_000)
    print("lookup=" + json.dumps(answer, sort_keys=True), flush=True)
    model = os.path.join(job.checkpoint_dir, "model")
    write_atomic(model, lambda f: f.write(b"weights after %d steps" % steps))
    artifact = job.log_artifact("model", path=model)
    print(f"worker: model {artifact['digest']}; done", flush=True)


def serve(model, version):
    client = corral.Client(os.environ["SERVING_URL"], os.environ["SERVING_TOKEN"])
    logged = client.drift.log_predictions(model, version, {"req-1": 0.9, "req-2": 0.2},
                                           segment="eu")
    print(f"worker: logged {logged['logged']} predictions", flush=True)


def main():
    if sys.argv[1:2] == ["train"] and len(sys.argv) == 7:
        train(int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], int(sys.argv[5]), sys.argv[6])
    elif sys.argv[1:2] == ["serve"] and len(sys.argv) == 4:
        serve(sys.argv[2], sys.argv[3])
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()

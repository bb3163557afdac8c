"""Inside a job: the worker side of Corral, through the node's agent.

corral-agent starts each worker with CORRAL_AGENT_URL and CORRAL_WORKER_TOKEN (its
loopback server and this worker's own token), the job's id and attempt, the
checkpoint directory and the checkpoint to restore from (docs/agent-protocol.md §2).
Job reads them and speaks the agent's /local endpoints (§4):

    job = corral.job.current()                 # None when not run by corral-agent
    state = load(job.restore_from) if job and job.restore_from else fresh()
    job.log_metrics({"loss": 0.31}, step=100)
    job.save_checkpoint(100, lambda f: torch.save(state, f))   # written whole, reported
    job.lookup_features("user-stats@v1", [("u42", at_ms)], ttl_ms=86_400_000)

Reports are queued by the agent, which forwards them to corrald (retrying while it is
away) and answers at once; a lookup waits for corrald's answer. A refusal raises the
typed errors of corral.errors. Thread safety: a Job holds no state between calls;
threads may share one.
"""

import json
import math
import os

from .errors import NotInJob
from .features import lookup_rows
from .files import sha256_digest, size_of, write_atomic
from .transport import Transport
from .operations import Operation

__all__ = ["Job", "current", "MAX_POINTS", "MAX_ARTIFACTS"]

# Both are keyed by corrald (a checkpoint by job, attempt and step; a point by name and
# step; an artifact by uri), and a lookup only reads: a repeat changes nothing.
CHECKPOINT = Operation("POST", "/local/checkpoint", api="local", repeatable=True)
RUN_REPORT = Operation("POST", "/local/run", api="local", repeatable=True)
FEATURE_LOOKUP = Operation("POST", "/local/features/lookup", api="local", repeatable=True)

# What one /local/run report may hold (docs/agent-protocol.md, Run reports).
MAX_POINTS = 1000
MAX_ARTIFACTS = 100

REQUIRED = ("CORRAL_AGENT_URL", "CORRAL_WORKER_TOKEN", "CORRAL_JOB_ID", "CORRAL_ATTEMPT")


def _int(environ, name, default=None):
    text = environ.get(name, "")
    if text == "":
        return default
    try:
        return int(text)
    except ValueError:
        raise NotInJob(f"{name}: must be an integer, got {text!r}") from None


class Job:
    """The job this process is a worker of, as its agent described it.

    Attributes: job_id, attempt, rank, world_size, local_rank, local_world_size,
    node_rank; checkpoint_dir and restore_from (None when empty: restore_from is set
    on an attempt after the first when an earlier one left a checkpoint); array_job,
    array_index, array_count (None outside a job array); sweep_params (a dict, empty
    outside a sweep); agent_url.
    """

    def __init__(self, environ=None, timeout_s=30.0, retries=5):
        env = os.environ if environ is None else environ
        missing = [name for name in REQUIRED if not env.get(name)]
        if missing:
            raise NotInJob(f"not a Corral worker: {', '.join(missing)} unset "
                           "(corral-agent sets them for the workers it starts)")
        self.agent_url = env["CORRAL_AGENT_URL"]
        self.job_id = _int(env, "CORRAL_JOB_ID")
        self.attempt = _int(env, "CORRAL_ATTEMPT")
        self.rank = _int(env, "RANK", 0)
        self.world_size = _int(env, "WORLD_SIZE", 1)
        self.local_rank = _int(env, "LOCAL_RANK", 0)
        self.local_world_size = _int(env, "LOCAL_WORLD_SIZE", 1)
        self.node_rank = _int(env, "NODE_RANK", 0)
        self.checkpoint_dir = env.get("CORRAL_CHECKPOINT_DIR") or None
        self.restore_from = env.get("CORRAL_RESTORE_FROM") or None
        self.array_job = _int(env, "CORRAL_ARRAY_JOB_ID")
        self.array_index = _int(env, "CORRAL_ARRAY_INDEX")
        self.array_count = _int(env, "CORRAL_ARRAY_COUNT")
        try:
            self.sweep_params = json.loads(env.get("CORRAL_SWEEP_PARAMS") or "{}")
        except ValueError:
            raise NotInJob("CORRAL_SWEEP_PARAMS: must be a JSON object") from None
        # The agent is on this node: a short timeout, and retries while it restarts
        # (a 503 from a lookup while corrald is away is also worth a few more tries).
        self._t = Transport(self.agent_url, env["CORRAL_WORKER_TOKEN"], timeout_s=timeout_s,
                            retries=retries, retry_pause_s=0.25)

    def __repr__(self):
        return f"Job({self.job_id}, attempt={self.attempt}, rank={self.rank})"

    # ---- metrics and artifacts ------------------------------------------------------

    def log_metrics(self, metrics, step):
        """Reports {name: value} at `step` (an integer, 0 or more) as the run's points.

        A name is 1 to 128 of letters, digits, _ . / - ; a value must be finite. The
        run keys a point by (name, step): reporting a step again replaces it, so report
        a metric from one rank (or give each rank's its own name).
        """
        self.log_points([(name, step, value) for name, value in metrics.items()])

    def log_points(self, points):
        """Reports (name, step, value) points, in reports of at most 1,000; a value is
        anything float() takes (a 0-d tensor too, read only here)."""
        body = []
        for name, step, value in points:
            value = float(value)
            if not math.isfinite(value):
                raise ValueError(f"metrics.{name}: must be finite, got {value} at step {step}")
            body.append({"name": name, "step": int(step), "value": value})
        for start in range(0, len(body), MAX_POINTS):
            self._t.call(RUN_REPORT, body={"metrics": body[start:start + MAX_POINTS]})

    def log_artifact(self, name, path=None, uri=None, digest=None, size_bytes=None):
        """Reports a file the run produced: a local path (digest and size read from it),
        or a uri elsewhere (SCHEME://...) with its digest ("sha256:<hex>") and size_bytes.

        The bytes stay where they are; corrald keeps where they are and how to verify
        them, and a model version can be registered from the artifact (docs/models.md).
        """
        if (path is None) == (uri is None):
            raise ValueError("path, uri: give exactly one")
        if path is not None:
            uri = os.path.abspath(path)
            digest = digest or sha256_digest(uri)
            if size_bytes is None:
                size_bytes = size_of(uri)
        elif digest is None or size_bytes is None:
            raise ValueError(f"digest, size_bytes: required for an artifact at {uri}")
        artifact = {"name": name, "uri": uri, "digest": digest, "bytes": int(size_bytes)}
        self._t.call(RUN_REPORT, body={"artifacts": [artifact]})
        return artifact

    # ---- checkpoints ----------------------------------------------------------------

    def checkpoint_path(self, step):
        """CORRAL_CHECKPOINT_DIR/step-<step, 9 digits>-attempt-<attempt>, the sample
        trainer's names: newer steps sort last, and no attempt overwrites another's."""
        if not self.checkpoint_dir:
            raise ValueError("CORRAL_CHECKPOINT_DIR: empty: the job spec has no checkpoint.dir")
        return os.path.join(self.checkpoint_dir, f"step-{int(step):09d}-attempt-{self.attempt}")

    def save_checkpoint(self, step, write, path=None, throughput=None, checksum=True):
        """Writes a checkpoint whole (write(f) on a temporary file, then a rename) and
        reports it; returns its path (default: checkpoint_path(step)).

        throughput: samples/s since the previous checkpoint, which the scheduler learns
        the job's scaling from (docs/scheduling.md); checksum: False skips reading the
        file back for its SHA-256 (worth it for checkpoints of many GiB).
        """
        path = path or self.checkpoint_path(step)
        write_atomic(path, write)
        self.report_checkpoint(path, step, throughput=throughput, checksum=checksum)
        return path

    def report_checkpoint(self, path, step, throughput=None, checksum=True):
        """Reports a checkpoint already written whole (a file, or a directory holding
        COMPLETE or .metadata): the next attempt gets it as restore_from."""
        path = os.path.abspath(path)
        report = {"step": int(step), "path": path, "bytes": size_of(path)}
        if checksum and os.path.isfile(path):
            report["checksum"] = sha256_digest(path)
        if throughput:
            report["throughput"] = float(throughput)
        self._t.call(CHECKPOINT, body=report)
        return report

    # ---- features -------------------------------------------------------------------

    def lookup_features(self, feature_set, rows, ttl_ms):
        """Point in time, through the agent: for each (entity, at_ms) row, the latest
        value at or before at_ms and at most ttl_ms older.

        feature_set: "NAME@VERSION" of the job's tenant. Answers {results: [{entity,
        atMs, eventTimeMs, values}], watermarks}, eventTimeMs and values None for a row
        with no value in reach; the run's manifest records the lookup (docs/runs.md,
        Features read).
        """
        body = {"set": feature_set, "rows": lookup_rows(rows), "ttlMs": int(ttl_ms)}
        return self._t.call(FEATURE_LOOKUP, body=body)


def current(environ=None):
    """The Job this process is a worker of, or None when corral-agent did not start it."""
    env = os.environ if environ is None else environ
    if not all(env.get(name) for name in REQUIRED):
        return None
    return Job(env)

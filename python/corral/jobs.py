"""Jobs through the /v1 API: submit, list, get, events, wait, logs, cancel.

A job is a dict as the API answers it (openapi.yaml, components.schemas.Job); a spec
is a dict (sent as JSON), a str of YAML, or a path (pathlib.Path) to a YAML or JSON
file. docs/jobspec.md has every field and rule.
"""

import os
import time

from .errors import WaitTimeout
from .operations import Operation
from .pages import collect

__all__ = ["Jobs", "TERMINAL_PHASES"]

TERMINAL_PHASES = frozenset({"succeeded", "failed", "cancelled"})

SUBMIT = Operation("POST", "/v1/jobs", idempotency_key=True)
LIST = Operation("GET", "/v1/jobs",
                 query=("tenant", "phase", "gpuType", "after", "limit", "cursor"))
GET = Operation("GET", "/v1/jobs/{id}")
EVENTS = Operation("GET", "/v1/jobs/{id}/events", query=("limit", "cursor"))
LOGS = Operation("GET", "/v1/jobs/{id}/logs", query=("rank", "attempt", "tailBytes"))
CANCEL = Operation("POST", "/v1/jobs/{id}/cancel", idempotency_key=True)


class Jobs:
    """client.jobs: one tenant's or every tenant's jobs, as the token may see them."""

    def __init__(self, transport):
        self._t = transport

    def submit(self, spec, idempotency_key=None):
        """Submits a job spec and returns the new job (its id, phase, normalized spec).

        idempotency_key: the same key and spec again answer the first job instead of a
        second one (one is made per call otherwise, so the call's own retries are safe).
        """
        if isinstance(spec, dict):
            return self._t.call(SUBMIT, body=spec, idempotency_key=idempotency_key)
        if isinstance(spec, os.PathLike):
            with open(spec, encoding="utf-8") as f:
                spec = f.read()
        if not isinstance(spec, str):
            raise TypeError(f"spec: must be a dict, YAML text or a path, got {type(spec).__name__}")
        # JSON is YAML, so a file of either goes as YAML.
        return self._t.call(SUBMIT, text=spec, content_type="application/yaml",
                            idempotency_key=idempotency_key)

    def list(self, tenant=None, phase=None, gpu_type=None, after=None, limit=None):
        """Jobs by id; phase is one phase or several (a list). Every page, or `limit` jobs."""
        if phase is not None and not isinstance(phase, str):
            phase = ",".join(phase)
        query = {"tenant": tenant, "phase": phase, "gpuType": gpu_type, "after": after}
        return collect(self._t, LIST, "jobs", query=query, limit=limit)

    def get(self, job_id):
        """The job with its allocation, attempts, last checkpoint and cost."""
        return self._t.call(GET, path={"id": job_id})

    def events(self, job_id, limit=None):
        """The job's events {timeMs, kind, message}, oldest first."""
        return collect(self._t, EVENTS, "events", path={"id": job_id}, limit=limit)

    def wait(self, job_id, timeout_s=None, poll_s=1.0, phases=TERMINAL_PHASES):
        """Reads the job every poll_s seconds until its phase is one of `phases`.

        Returns the job as last read; raises WaitTimeout (carrying it) after timeout_s
        seconds (None: no limit). The default phases are the terminal ones.
        """
        phases = frozenset([phases] if isinstance(phases, str) else phases)
        deadline = None if timeout_s is None else time.monotonic() + timeout_s
        while True:
            job = self.get(job_id)
            if job.get("phase") in phases:
                return job
            if deadline is not None and time.monotonic() >= deadline:
                reason = f" ({job['reason']})" if job.get("reason") else ""
                raise WaitTimeout(f"job {job_id} is {job.get('phase')}{reason} after "
                                  f"{timeout_s:g} s, waiting for {', '.join(sorted(phases))}", job)
            pause = poll_s
            if deadline is not None:
                pause = min(poll_s, max(0.0, deadline - time.monotonic()))
            time.sleep(pause)

    def logs(self, job_id, rank=0, attempt=None, tail_bytes=None):
        """A rank's log as text, fetched by corrald from the agent that ran it.

        attempt: default the job's current one; tail_bytes: default the last MiB.
        """
        return self._t.call(LOGS, path={"id": job_id},
                            query={"rank": rank, "attempt": attempt, "tailBytes": tail_bytes},
                            raw=True)

    def cancel(self, job_id, reason=None, idempotency_key=None):
        """Cancels the job and returns it; FailedPrecondition when it already ended."""
        body = {"reason": reason} if reason is not None else None
        return self._t.call(CANCEL, path={"id": job_id}, body=body,
                            idempotency_key=idempotency_key)

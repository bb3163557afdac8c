"""Training runs through the /v1 API (docs/runs.md): a job is its run, with its id.

A run holds its manifest (dataset versions, code, image, config hash, the feature
sets its workers read), each attempt as placed, the metric points and artifacts its
workers reported (corral.job), and its checkpoints.
"""

from .operations import Operation
from .pages import collect

__all__ = ["Runs"]

LIST = Operation("GET", "/v1/runs", query=("tenant", "status", "dataset", "limit", "cursor"))
GET = Operation("GET", "/v1/runs/{id}")
METRICS = Operation("GET", "/v1/runs/{id}/metrics", query=("name", "limit", "cursor"))
ARTIFACTS = Operation("GET", "/v1/runs/{id}/artifacts")
REPRODUCE = Operation("POST", "/v1/runs/{id}/reproduce", idempotency_key=True)


class Runs:
    """client.runs"""

    def __init__(self, transport):
        self._t = transport

    def list(self, tenant=None, status=None, dataset=None, limit=None):
        """Runs by id; dataset "DATASET@VERSION": only the runs admitted on it."""
        query = {"tenant": tenant, "status": status, "dataset": dataset}
        return collect(self._t, LIST, "runs", query=query, limit=limit)

    def get(self, run_id):
        """The run: manifest, attemptHistory, metrics (each name's newest), artifacts."""
        return self._t.call(GET, path={"id": run_id})

    def metrics(self, run_id, name=None, limit=None):
        """Metric points {name, step, value, attempt, atMs}, by name then step."""
        return collect(self._t, METRICS, "points", path={"id": run_id}, query={"name": name},
                       limit=limit)

    def artifacts(self, run_id):
        """Reported artifacts (kind "artifact") and checkpoints (kind "checkpoint")."""
        return collect(self._t, ARTIFACTS, "artifacts", path={"id": run_id})

    def reproduce(self, run_id, idempotency_key=None):
        """Submits the run's normalized spec again; returns the new run (with reproduces)."""
        return self._t.call(REPRODUCE, path={"id": run_id}, idempotency_key=idempotency_key)

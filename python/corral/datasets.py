"""Dataset versions through the /v1 API (docs/datasets.md).

A version is immutable and content-addressed: registering the same content again
answers it, other content under its name is refused (InvalidArgument naming the first
field that differs). A job trains only on versions that have passed.
"""

from .operations import Operation
from .pages import collect

__all__ = ["Datasets"]

LIST = Operation("GET", "/v1/datasets", query=("limit", "cursor"))
GET = Operation("GET", "/v1/datasets/{id}")
VERSIONS = Operation("GET", "/v1/datasets/{id}/versions", query=("limit", "cursor"))
REGISTER = Operation("POST", "/v1/datasets/{id}/versions", idempotency_key=True)
VERSION = Operation("GET", "/v1/datasets/{id}/versions/{version}")
SET_STATUS = Operation("POST", "/v1/datasets/{id}/versions/{version}/status", repeatable=True)
JOBS = Operation("GET", "/v1/datasets/{id}/versions/{version}/jobs", query=("limit", "cursor"))


class Datasets:
    """client.datasets: the datasets and versions the token's tenant sees."""

    def __init__(self, transport):
        self._t = transport

    def list(self, limit=None):
        """Datasets: {id, tenant, versions, latestAtMs}."""
        return collect(self._t, LIST, "datasets", limit=limit)

    def get(self, dataset):
        return self._t.call(GET, path={"id": dataset})

    def versions(self, dataset, limit=None):
        """The dataset's versions, by version."""
        return collect(self._t, VERSIONS, "versions", path={"id": dataset}, limit=limit)

    def register(self, dataset, version, uri, digest, size_bytes, schema_hash=None,
                 parents=None, privacy=None, status=None, tenant=None, idempotency_key=None):
        """Registers a version and returns it.

        digest and schema_hash: "sha256:" and 64 lowercase hex digits; parents:
        ["DATASET@VERSION"]; privacy: "tenant-confidential" or {"shared": [tenant]};
        status: "pending" (the default) or "passed".
        """
        body = {"version": version, "uri": uri, "digest": digest, "sizeBytes": size_bytes}
        for key, value in (("schemaHash", schema_hash), ("parents", parents),
                           ("privacy", privacy), ("status", status), ("tenant", tenant)):
            if value is not None:
                body[key] = value
        return self._t.call(REGISTER, path={"id": dataset}, body=body,
                            idempotency_key=idempotency_key)

    def version(self, dataset, version):
        return self._t.call(VERSION, path={"id": dataset, "version": version})

    def set_status(self, dataset, version, status, reason=None):
        """Moves the quality status: pending, passed or quarantined (with a reason)."""
        body = {"status": status}
        if reason is not None:
            body["reason"] = reason
        return self._t.call(SET_STATUS, path={"id": dataset, "version": version}, body=body)

    def jobs(self, dataset, version, limit=None):
        """The jobs admitted on the version that the token sees."""
        return collect(self._t, JOBS, "jobs", path={"id": dataset, "version": version},
                       limit=limit)

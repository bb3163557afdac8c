"""Feature set versions through the /v1 API (docs/features.md).

Values carry event times; a point-in-time lookup answers, for each (entity, instant),
the latest value at or before the instant and at most ttl_ms older, never a later one.
A training job looks features up through its agent instead (corral.job), so its run
records what it read.
"""

from .operations import Operation
from .pages import collect

__all__ = ["Features", "lookup_rows"]

LIST = Operation("GET", "/v1/features")
REGISTER = Operation("POST", "/v1/features/{name}/versions", idempotency_key=True)
GET = Operation("GET", "/v1/features/{name}/versions/{version}")
WRITE = Operation("POST", "/v1/features/{name}/versions/{version}/values", idempotency_key=True)
LOOKUP = Operation("POST", "/v1/features/{name}/versions/{version}/lookup", repeatable=True)


def lookup_rows(rows):
    """Rows as the API takes them: from (entity, at_ms) pairs or {entity, atMs} dicts."""
    out = []
    for i, row in enumerate(rows):
        if isinstance(row, dict):
            out.append(row)
        elif isinstance(row, (tuple, list)) and len(row) == 2:
            out.append({"entity": row[0], "atMs": row[1]})
        else:
            raise TypeError(f"rows[{i}]: must be (entity, at_ms) or "
                            f"{{'entity', 'atMs'}}, got {row!r}")
    return out


class Features:
    """client.features"""

    def __init__(self, transport):
        self._t = transport

    def list(self):
        """Feature set versions: {name, version, tenant, schema, source, ...}."""
        return collect(self._t, LIST, "featureSets")

    def register(self, name, version, schema, source=None, tenant=None, idempotency_key=None):
        """Registers a version; schema maps each feature to float, int, bool or string."""
        body = {"version": version, "schema": schema}
        if source is not None:
            body["source"] = source
        if tenant is not None:
            body["tenant"] = tenant
        return self._t.call(REGISTER, path={"name": name}, body=body,
                            idempotency_key=idempotency_key)

    def get(self, name, version):
        """The version with its schema, source and the sources' watermarks."""
        return self._t.call(GET, path={"name": name, "version": version})

    def write(self, name, version, values, watermarks=None, idempotency_key=None):
        """Appends up to 10,000 values {entity, eventTimeMs, values}; returns {written}.

        watermarks: {source: ms}, each source's promise that everything up to then
        has been delivered. The key makes a retried batch be written once.
        """
        body = {"values": values}
        if watermarks is not None:
            body["watermarks"] = watermarks
        return self._t.call(WRITE, path={"name": name, "version": version}, body=body,
                            idempotency_key=idempotency_key)

    def lookup(self, name, version, rows, ttl_ms):
        """Point in time: {results: [{entity, atMs, eventTimeMs, values}], watermarks}.

        rows: (entity, at_ms) pairs or {entity, atMs} dicts, answered in their order;
        a row with no value in reach has eventTimeMs and values None.
        """
        body = {"rows": lookup_rows(rows), "ttlMs": ttl_ms}
        return self._t.call(LOOKUP, path={"name": name, "version": version}, body=body)

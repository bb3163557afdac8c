"""The model registry through the /v1 API (docs/models.md).

A version is registered from an artifact (or checkpoint) its run reported, with the
gates a promotion must pass; aliases (production, canary, any name) move only through
those gates, and every move is kept.
"""

from .operations import Operation
from .pages import collect

__all__ = ["Models"]

LIST = Operation("GET", "/v1/models", query=("limit", "cursor"))
GET = Operation("GET", "/v1/models/{id}")
REGISTER = Operation("POST", "/v1/models/{id}/versions", idempotency_key=True)
VERSION = Operation("GET", "/v1/models/{id}/versions/{version}")
APPROVE = Operation("POST", "/v1/models/{id}/versions/{version}/approvals", repeatable=True)
ALIAS = Operation("GET", "/v1/models/{id}/aliases/{alias}")
MOVE_ALIAS = Operation("POST", "/v1/models/{id}/aliases/{alias}", idempotency_key=True)
ROLLBACK = Operation("POST", "/v1/models/{id}/aliases/{alias}/rollback", repeatable=True)
HISTORY = Operation("GET", "/v1/models/{id}/aliases/{alias}/history")


class Models:
    """client.models"""

    def __init__(self, transport):
        self._t = transport

    def list(self, limit=None):
        """Models: {id, tenant, versions, latestAtMs}."""
        return collect(self._t, LIST, "models", limit=limit)

    def get(self, model):
        """The model with its versions (and their approvals) and aliases."""
        return self._t.call(GET, path={"id": model})

    def register(self, model, version, run, artifact_uri, digest, input_schema=None,
                 output_schema=None, gates=None, idempotency_key=None):
        """Registers a version from an artifact of `run` (its uri and digest) and returns it.

        gates: {"metrics": [...], "improvement": [...], "schemaCompatible": bool,
        "approvals": [...]} as docs/models.md gives them.
        """
        body = {"version": version, "run": run, "artifactUri": artifact_uri, "digest": digest}
        for key, value in (("inputSchema", input_schema), ("outputSchema", output_schema),
                           ("gates", gates)):
            if value is not None:
                body[key] = value
        return self._t.call(REGISTER, path={"id": model}, body=body,
                            idempotency_key=idempotency_key)

    def version(self, model, version):
        return self._t.call(VERSION, path={"id": model, "version": version})

    def approve(self, model, version, name, reason=None):
        """Records the approval `name` a gate of the version asks for."""
        body = {"name": name}
        if reason is not None:
            body["reason"] = reason
        return self._t.call(APPROVE, path={"id": model, "version": version}, body=body)

    def alias(self, model, alias):
        """Where the alias points: version, canary, endpoint, gated, updatedAtMs."""
        return self._t.call(ALIAS, path={"id": model, "alias": alias})

    def move_alias(self, model, alias, version, reason=None, endpoint=None, gated=None,
                   canary=None, idempotency_key=None):
        """Points the alias at `version`; Conflict naming each failing gate when gated.

        canary: {"version": V, "weight": share of traffic in (0, 1)}.
        """
        body = {"version": version}
        for key, value in (("reason", reason), ("endpoint", endpoint), ("gated", gated),
                           ("canary", canary)):
            if value is not None:
                body[key] = value
        return self._t.call(MOVE_ALIAS, path={"id": model, "alias": alias}, body=body,
                            idempotency_key=idempotency_key)

    def rollback(self, model, alias, reason=None):
        """Moves the alias back to where its last move took it from, with no gate."""
        body = {"reason": reason} if reason is not None else None
        return self._t.call(ROLLBACK, path={"id": model, "alias": alias}, body=body)

    def alias_history(self, model, alias):
        """Every move of the alias, oldest first."""
        return collect(self._t, HISTORY, "moves", path={"id": model, "alias": alias})

"""Every HTTP operation the package calls, declared once.

An Operation is a method and a path template exactly as the contract spells it:
docs/api/openapi.yaml for the /v1 API, docs/agent-protocol.md for the agent's /local
endpoints. The transport (corral.transport) takes nothing else, so no call can reach a
path that is not declared here, and tests/python/openapi_mirror_test.py checks every
declared /v1 operation, its query parameters and its Idempotency-Key against the
OpenAPI document. Operations are module constants; the list is filled at import and
never changes after, so reading it from several threads is safe.
"""

import re

__all__ = ["Operation", "ALL", "v1_operations", "local_operations"]

ALL = []

_PLACEHOLDER = re.compile(r"\{([A-Za-z_]+)\}")


class Operation:
    """One (method, path) of an API, with the query parameters the package sends.

    api: "v1" (corrald's API, in openapi.yaml) or "local" (an agent's loopback
    endpoints for its workers). idempotency_key: the operation takes an
    Idempotency-Key header, so the transport sends one and may retry the call.
    repeatable: a POST whose repeat changes nothing without a key (a lookup, or a
    report the server keys itself), so the transport may retry it too.
    """

    def __init__(self, method, path, query=(), idempotency_key=False, api="v1",
                 repeatable=False):
        if api not in ("v1", "local"):
            raise ValueError(f"api: must be v1 or local, got {api!r}")
        self.method = method
        self.path = path
        self.query = tuple(query)
        self.idempotency_key = idempotency_key
        self.api = api
        self.repeatable = repeatable
        self.path_params = tuple(_PLACEHOLDER.findall(path))
        ALL.append(self)

    @property
    def retry_safe(self):
        """Whether sending it twice has the effect of sending it once."""
        return self.method in ("GET", "PUT", "DELETE") or self.idempotency_key or self.repeatable

    def __repr__(self):
        return f"Operation({self.method} {self.path})"


def v1_operations():
    """The /v1 operations, in declaration order."""
    return [op for op in ALL if op.api == "v1"]


def local_operations():
    """The agent's /local operations, in declaration order."""
    return [op for op in ALL if op.api == "local"]

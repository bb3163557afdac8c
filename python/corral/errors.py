"""The exceptions the package raises.

Every refusal of corrald or an agent is an ApiError of the class its `code` names
(docs/api/openapi.yaml, components.schemas.Error), carrying the answer's message,
field and `details` (every error found, each a FieldError with its own field and
reason), so a caller can tell a spec's three mistakes apart without reading text:

    try:
        client.jobs.submit(spec)
    except corral.InvalidArgument as e:
        for d in e.details:
            print(d.field, d.reason)

The 409 codes (already_exists, aborted, failed_precondition, stale, fenced) share the
base class Conflict. A server that could not be reached is Unreachable; it never
answered, so it carries no code.
"""

import json
from typing import NamedTuple

__all__ = [
    "CorralError", "NotInJob", "Unreachable", "WaitTimeout", "FieldError", "ApiError",
    "InvalidArgument", "Unauthenticated", "PermissionDenied", "NotFound", "Conflict",
    "AlreadyExists", "Aborted", "FailedPrecondition", "Stale", "Fenced",
    "ResourceExhausted", "Unavailable", "Internal", "DataLoss", "error_from_answer",
]


class CorralError(Exception):
    """Anything the package raises on purpose."""


class NotInJob(CorralError):
    """The environment lacks what corral-agent sets for a worker."""


class Unreachable(CorralError):
    """No answer: the connection failed or timed out (after the retries allowed)."""


class WaitTimeout(CorralError, TimeoutError):
    """Jobs.wait() gave up; `job` is the job as last read."""

    def __init__(self, message, job):
        super().__init__(message)
        self.job = job


class FieldError(NamedTuple):
    """One entry of an error's details: the input's path and the rule it broke."""

    field: str
    reason: str

    def __str__(self):
        return f"{self.field}: {self.reason}" if self.field else self.reason


class ApiError(CorralError):
    """A refusal, as the server answered it.

    status: the HTTP status; code: the error code (invalid_argument, not_found, ...);
    message: the whole failure; field: the (first) offending input's path, "" when
    none; details: [FieldError], one per error found; retry_after_s: the Retry-After
    header's whole seconds, or None; operation: "METHOD /path" that was called.
    """

    def __init__(self, status, code, message, field="", details=(), retry_after_s=None,
                 operation=""):
        self.status = status
        self.code = code
        self.message = message
        self.field = field
        self.details = list(details)
        self.retry_after_s = retry_after_s
        self.operation = operation
        super().__init__(str(self))

    def __str__(self):
        where = f"{self.operation}: " if self.operation else ""
        return f"{where}HTTP {self.status} {self.code}: {self.message}"


class InvalidArgument(ApiError):
    """400: bad input; details name every field at fault."""


class Unauthenticated(ApiError):
    """401: no token, or one the server does not know (any more)."""


class PermissionDenied(ApiError):
    """403: the token's role or tenant may not do this."""


class NotFound(ApiError):
    """404: no such object, or one of a tenant the caller may not see."""


class Conflict(ApiError):
    """409: the state refuses the call; see the subclass for whether to retry."""


class AlreadyExists(Conflict):
    """409 already_exists."""


class Aborted(Conflict):
    """409 aborted: a conflicting write; retrying the call may succeed."""


class FailedPrecondition(Conflict):
    """409 failed_precondition: not in this state; retry only once the state changes."""


class Stale(Conflict):
    """409 stale: a report for an attempt that is over."""


class Fenced(Conflict):
    """409 fenced: an agent session or replica that lost its epoch."""


class ResourceExhausted(ApiError):
    """429: over a rate or a limit; retry_after_s says when to try again."""


class Unavailable(ApiError):
    """503: try again (the transport already did, for calls safe to repeat)."""


class Internal(ApiError):
    """500: the server failed."""


class DataLoss(Internal):
    """500 data_loss."""


_BY_CODE = {
    "invalid_argument": InvalidArgument,
    "unauthenticated": Unauthenticated,
    "permission_denied": PermissionDenied,
    "not_found": NotFound,
    "already_exists": AlreadyExists,
    "aborted": Aborted,
    "failed_precondition": FailedPrecondition,
    "stale": Stale,
    "fenced": Fenced,
    "resource_exhausted": ResourceExhausted,
    "unavailable": Unavailable,
    "internal": Internal,
    "data_loss": DataLoss,
}

# For an answer without a Corral error body (a proxy's page, a 413 cut short).
_BY_STATUS = {
    400: (InvalidArgument, "invalid_argument"),
    401: (Unauthenticated, "unauthenticated"),
    403: (PermissionDenied, "permission_denied"),
    404: (NotFound, "not_found"),
    409: (Conflict, "aborted"),
    413: (InvalidArgument, "invalid_argument"),
    429: (ResourceExhausted, "resource_exhausted"),
    503: (Unavailable, "unavailable"),
}


def error_from_answer(status, text, retry_after=None, operation=""):
    """The ApiError for a non-2xx answer: its class from the body's code, else the status.

    An agent's /local errors have no details; one is made from message and field, so
    `details` is never empty for an error that has a message.
    """
    error = {}
    try:
        body = json.loads(text) if text else {}
        if isinstance(body, dict) and isinstance(body.get("error"), dict):
            error = body["error"]
    except ValueError:
        pass
    code = error.get("code") if isinstance(error.get("code"), str) else ""
    cls = _BY_CODE.get(code)
    if cls is None:
        cls, fallback = _BY_STATUS.get(status, (Internal if status >= 500 else ApiError, ""))
        code = code or fallback or f"http_{status}"
    message = error.get("message") or (text or "").strip()[:500] or f"HTTP {status}"
    field = error.get("field") or ""
    details = []
    for d in error.get("details") or []:
        if isinstance(d, dict):
            details.append(FieldError(str(d.get("field", "")), str(d.get("reason", ""))))
    if not details and error.get("message"):
        # The field's own reason is the message without its "field: " prefix, if any.
        reason = message[len(field) + 2:] if field and message.startswith(field + ": ") else message
        details.append(FieldError(field, reason))
    retry_after_s = None
    if retry_after is not None:
        try:
            retry_after_s = int(retry_after)
        except ValueError:
            pass
    return cls(status, code, message, field, details, retry_after_s, operation)

"""The one HTTP path of the package: an Operation, its arguments, and the answer.

Both sides use it: corral.client against corrald's /v1 API with an API token, and
corral.job against the local agent with the worker's token. It sends JSON (or a
given text body), a bearer token and, for operations that take one, an
Idempotency-Key; it answers the parsed JSON (or text), and raises the typed error of
corral.errors for any refusal.

Retries: an operation that is safe to repeat (GET, PUT, DELETE, or one sent with an
Idempotency-Key, which the server answers once) is tried again on a failed
connection and on 503, with doubling pauses; nothing else is repeated, since a call
that reached the server may have taken effect.

Thread safety: a Transport holds no state between calls; several threads may share it.
"""

import http.client
import json
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid

from ._version import __version__
from .errors import Unavailable, Unreachable, error_from_answer
from .operations import Operation

__all__ = ["Transport"]


class Transport:
    """Calls Operations on one server (base_url) with one bearer token.

    timeout_s: each try's socket timeout. retries: how many more tries a call safe
    to repeat gets; retry_pause_s: the first pause between tries, doubled each time.
    page_size: the items a list asks for per page (1 to 10000; corral.pages).
    """

    def __init__(self, base_url, token, timeout_s=30.0, retries=3, retry_pause_s=0.2,
                 page_size=1000):
        if not base_url:
            raise ValueError("base_url: must be a URL such as http://127.0.0.1:8470, got none")
        if not 1 <= page_size <= 10000:
            raise ValueError(f"page_size: must be between 1 and 10000, got {page_size}")
        self.page_size = page_size
        self.base_url = base_url.rstrip("/")
        self.token = token
        self.timeout_s = timeout_s
        self.retries = retries
        self.retry_pause_s = retry_pause_s

    def call(self, op, path=None, query=None, body=None, text=None, content_type=None,
             idempotency_key=None, raw=False, timeout_s=None):
        """Calls op and returns its answer: parsed JSON, or the text when raw.

        path: the values of the path's {placeholders}; query: parameters (None values
        are left out; each must be one op declares); body: sent as JSON; text: sent as
        it is with content_type (a YAML job spec). An empty answer is None.
        """
        if not isinstance(op, Operation):
            raise TypeError(f"op: must be an Operation, got {type(op).__name__}")
        url = self.base_url + _fill_path(op, path or {}) + _query_string(op, query or {})
        headers = {"Accept": "application/json", "User-Agent": f"corral-python/{__version__}"}
        if self.token:
            headers["Authorization"] = f"Bearer {self.token}"
        data = None
        if text is not None:
            data = text.encode("utf-8")
            headers["Content-Type"] = content_type or "text/plain"
        elif body is not None:
            data = json.dumps(body, allow_nan=False).encode("utf-8")
            headers["Content-Type"] = "application/json"
        if op.idempotency_key:
            # One key for every try of this call: the server answers a repeat once.
            headers["Idempotency-Key"] = idempotency_key or uuid.uuid4().hex
        elif idempotency_key:
            raise ValueError(f"idempotency_key: {op.method} {op.path} takes none")
        name = f"{op.method} {op.path}"
        tries = 1 + (self.retries if op.retry_safe else 0)
        pause = self.retry_pause_s
        for attempt in range(tries):
            last = attempt == tries - 1
            request = urllib.request.Request(url, data=data, method=op.method, headers=headers)
            try:
                with urllib.request.urlopen(request, timeout=timeout_s or self.timeout_s) as r:
                    answer = r.read().decode("utf-8", errors="replace")
                    kind = r.headers.get("Content-Type", "")
            except urllib.error.HTTPError as e:
                error = error_from_answer(e.code, e.read().decode("utf-8", errors="replace"),
                                          e.headers.get("Retry-After"), name)
                if isinstance(error, Unavailable) and not last:
                    time.sleep(pause)
                    pause *= 2
                    continue
                raise error from None
            except (urllib.error.URLError, http.client.HTTPException, OSError) as e:
                # No answer: refused, reset, timed out, or cut off mid-answer.
                if not last:
                    time.sleep(pause)
                    pause *= 2
                    continue
                reason = getattr(e, "reason", e)
                raise Unreachable(f"{name}: cannot reach {self.base_url}: {reason} "
                                  f"(tried {tries} time{'s' if tries > 1 else ''})") from None
            if raw:
                return answer
            if not answer:
                return None
            if "json" not in kind:
                return answer
            return json.loads(answer)
        raise AssertionError("unreachable: the loop returns or raises")


def _fill_path(op, values):
    missing = [p for p in op.path_params if p not in values]
    extra = [p for p in values if p not in op.path_params]
    if missing or extra:
        raise ValueError(f"{op.method} {op.path}: path parameters missing {missing}, "
                         f"unknown {extra}")
    path = op.path
    for name in op.path_params:
        value = values[name]
        if value is None or value == "":
            raise ValueError(f"{name}: must not be empty")
        path = path.replace("{" + name + "}", urllib.parse.quote(str(value), safe=""))
    return path


def _query_string(op, params):
    params = {k: v for k, v in params.items() if v is not None}
    unknown = sorted(set(params) - set(op.query))
    if unknown:
        raise ValueError(f"{op.method} {op.path}: no query parameter {', '.join(unknown)}")
    if not params:
        return ""
    # Booleans as the API spells them; everything else as its text.
    pairs = [(k, ("true" if v else "false") if isinstance(v, bool) else str(v))
             for k, v in params.items()]
    return "?" + urllib.parse.urlencode(pairs)

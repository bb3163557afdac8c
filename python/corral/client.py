"""A client of corrald's /v1 API, for use outside a job (or inside one given a token).

    import corral
    client = corral.Client()              # CORRAL_SERVER and CORRAL_TOKEN, as the CLI
    job = client.jobs.submit({"name": "ft", "resources": {"gpus": 1},
                              "command": ["python3", "ft.py"]})
    job = client.jobs.wait(job["id"], timeout_s=3600)
    print(client.jobs.logs(job["id"]), client.runs.get(job["id"])["metrics"])

Each group of calls is one attribute: jobs, datasets, runs, models, features, drift.
Answers are the API's JSON as dicts and lists (docs/api/openapi.yaml); refusals raise
the typed errors of corral.errors. Thread safety: a Client holds no state between
calls; threads may share one.
"""

import os

from .datasets import Datasets
from .drift import Drift
from .features import Features
from .transport import Transport
from .jobs import Jobs
from .models import Models
from .operations import Operation
from .runs import Runs

__all__ = ["Client", "DEFAULT_SERVER"]

DEFAULT_SERVER = "http://127.0.0.1:8470"

WHOAMI = Operation("GET", "/v1/whoami")


def _config_file(environ):
    """The `key: value` lines of the CLI's config file (docs/cli.md), as a dict."""
    base = environ.get("XDG_CONFIG_HOME") or os.path.join(environ.get("HOME", ""), ".config")
    values = {}
    try:
        with open(os.path.join(base, "corral", "config.yaml"), encoding="utf-8") as f:
            for line in f:
                key, colon, value = line.partition(":")
                if line.startswith("#") or not colon:
                    continue
                values[key.strip(" \t\"'")] = value.strip(" \t\r\n\"'")
    except OSError:
        pass
    return values


class Client:
    """corrald's /v1 API with one token.

    server: corrald's URL, else CORRAL_SERVER, else `server:` in
    ~/.config/corral/config.yaml, else http://127.0.0.1:8470. token: the same way
    (CORRAL_TOKEN, `token:`). timeout_s: each try's limit; retries: further tries of a
    call safe to repeat, after a failed connection or a 503; page_size: items per page
    of a list (every page is read). environ: read instead of os.environ.
    """

    def __init__(self, server=None, token=None, timeout_s=30.0, retries=3, page_size=1000,
                 environ=None):
        environ = os.environ if environ is None else environ
        config = None
        if not server or not token:
            config = _config_file(environ)
        server = server or environ.get("CORRAL_SERVER") or config.get("server") or DEFAULT_SERVER
        token = token or environ.get("CORRAL_TOKEN") or config.get("token") or None
        self.server = server.rstrip("/")
        self._transport = Transport(self.server, token, timeout_s=timeout_s, retries=retries,
                                    page_size=page_size)
        self.jobs = Jobs(self._transport)
        self.datasets = Datasets(self._transport)
        self.runs = Runs(self._transport)
        self.models = Models(self._transport)
        self.features = Features(self._transport)
        self.drift = Drift(self._transport)

    def whoami(self):
        """The token's id, role and tenant: a cheap check that the token works."""
        return self._transport.call(WHOAMI)

    def __repr__(self):
        return f"Client({self.server!r})"

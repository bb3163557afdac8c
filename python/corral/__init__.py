"""Corral's Python client (docs/python.md).

Inside a job, corral.job.current() is the worker's side: metrics, artifacts,
checkpoints and point-in-time feature lookups through the node's agent. Anywhere,
corral.Client() is a client of corrald's /v1 API: jobs, datasets, runs, models,
features and drift. Standard library only; Python 3.9 or newer.
"""

from . import job
from ._version import __version__
from .client import Client
from .errors import (Aborted, AlreadyExists, ApiError, Conflict, CorralError, DataLoss,
                     FailedPrecondition, FieldError, Fenced, Internal, InvalidArgument, NotFound,
                     NotInJob, PermissionDenied, ResourceExhausted, Stale, Unauthenticated,
                     Unavailable, Unreachable, WaitTimeout)
from .job import Job

__all__ = [
    "__version__", "Client", "Job", "job", "CorralError", "ApiError", "FieldError",
    "NotInJob", "Unreachable", "WaitTimeout", "InvalidArgument", "Unauthenticated",
    "PermissionDenied", "NotFound", "Conflict", "AlreadyExists", "Aborted",
    "FailedPrecondition", "Stale", "Fenced", "ResourceExhausted", "Unavailable", "Internal",
    "DataLoss",
]

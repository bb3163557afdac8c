"""Files as the worker contract wants them: whole or absent, with their digest.

docs/jobspec.md ("Checkpoints and restarts"): a checkpoint is written under a
temporary name and renamed when whole, so an attempt that dies mid-write leaves no
file the next attempt could mistake for one. The agent skips names that start with
"." or "tmp" when it looks for the newest checkpoint itself.
"""

import hashlib
import os

__all__ = ["write_atomic", "sha256_digest", "size_of"]

_CHUNK = 1 << 20


def write_atomic(path, write):
    """Calls write(f) on a binary file under a temporary name, then renames it to path.

    The data and the rename are flushed to disk (fsync of the file, then of its
    directory) before this returns, so a crash leaves the old state or the new one.
    """
    directory = os.path.dirname(os.path.abspath(path))
    os.makedirs(directory, exist_ok=True)
    tmp = os.path.join(directory, f".tmp-{os.path.basename(path)}-{os.getpid()}")
    try:
        with open(tmp, "wb") as f:
            write(f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
    return path


def sha256_digest(path):
    """"sha256:" and the file's 64 lowercase hex digits, read a MiB at a time."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(_CHUNK), b""):
            h.update(chunk)
    return "sha256:" + h.hexdigest()


def size_of(path):
    """A file's size in bytes, or the total of the files under a directory."""
    if not os.path.isdir(path):
        return os.path.getsize(path)
    total = 0
    for root, _, names in os.walk(path):
        for name in names:
            total += os.path.getsize(os.path.join(root, name))
    return total

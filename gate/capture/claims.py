"""Who is flushing: each flush holds an exclusive lock on a file of its own for as long as
it lives. The kernel drops the lock when the process dies, however it dies (kill -9
included), so a free lock means the claims in that name are orphans.
"""

from __future__ import annotations

import fcntl
import os
import secrets
import socket

from gate.capture.paths import private_dir


class ClaimLock:
    """This process's claimer name, proven alive by a held lock file."""

    def __init__(self, state_dir: str):
        self.directory = private_dir(os.path.join(state_dir, "claims"))
        host = "".join(c for c in socket.gethostname() if c.isalnum() or c in "-_")[:40] or "host"
        self.name = f"{host}-{os.getpid()}-{secrets.token_hex(4)}"
        self._fd: int | None = None

    def __enter__(self) -> "ClaimLock":
        path = os.path.join(self.directory, self.name + ".lock")
        self._fd = os.open(path, os.O_CREAT | os.O_RDWR, 0o600)
        fcntl.flock(self._fd, fcntl.LOCK_EX)
        return self

    def __exit__(self, *exc) -> None:
        if self._fd is not None:
            _remove(os.path.join(self.directory, self.name + ".lock"))
            os.close(self._fd)
            self._fd = None


def claimer_alive(state_dir: str, name: str) -> bool:
    """True while the flush that took `name` holds its lock. A missing file is a dead claimer."""
    if not name or "/" in name or name.startswith("."):
        return False
    path = os.path.join(state_dir, "claims", name + ".lock")
    try:
        fd = os.open(path, os.O_RDWR)
    except FileNotFoundError:
        return False
    except OSError:
        return True  # cannot tell: leave its items alone
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    except OSError:
        return True
    finally:
        os.close(fd)  # closing drops the lock we may have taken
    return False


def forget(state_dir: str, name: str) -> None:
    """Remove a dead claimer's lock file once its items are back in the queue."""
    if name and "/" not in name and not name.startswith("."):
        _remove(os.path.join(state_dir, "claims", name + ".lock"))


def _remove(path: str) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass

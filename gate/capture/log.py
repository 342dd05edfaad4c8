"""The capture log: one line per hook run or flush problem, in the state directory.

A hook may print nothing (the editor would show or inject it), so this file is where its
problems go. Lines carry counts, ids and redacted errors, never a window's text or the key.
The file is cut to its last half when it passes MAX_BYTES, so it never grows without end.
"""

from __future__ import annotations

import os
import time

LOG_FILE = "capture.log"
MAX_BYTES = 1_000_000


def log_line(state_dir: str, message: str) -> None:
    """Append one line; a log that cannot be written (full disk) is silently skipped."""
    from gate.platform.secret import redact

    path = os.path.join(state_dir, LOG_FILE)
    line = f"{time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime())} [{os.getpid()}] {redact(message)}\n"
    line = " ".join(line.split("\n")[:-1]).replace("\r", " ") + "\n"  # one entry, one line
    try:
        os.makedirs(state_dir, mode=0o700, exist_ok=True)
        fd = os.open(path, os.O_CREAT | os.O_APPEND | os.O_WRONLY, 0o600)
        with os.fdopen(fd, "a", encoding="utf-8", errors="replace") as handle:
            handle.write(line)
            size = handle.tell()
        if size > MAX_BYTES:
            _shrink(path)
    except OSError:
        pass


def _shrink(path: str) -> None:
    with open(path, "rb") as handle:
        handle.seek(-MAX_BYTES // 2, os.SEEK_END)
        tail = handle.read()
    tail = tail[tail.find(b"\n") + 1:]
    temp = path + ".tmp"
    fd = os.open(temp, os.O_CREAT | os.O_TRUNC | os.O_WRONLY, 0o600)
    with os.fdopen(fd, "wb") as handle:
        handle.write(tail)
    os.replace(temp, path)

"""Parsed fixture files, kept by content, so a big fixture set is parsed once.

Parsing 100,000 fixtures of YAML takes seconds; reading them back as JSON takes a
fraction of one. Only files that passed the fast path's checks (gate/evaluation/fixtures.py)
are kept, under a key made from the file's bytes, this engine's version and the
code that checked them: a changed file or checker simply misses. An entry that
cannot be read is a miss, and one that cannot be written is no error. Entries
are JSON, not pickles: reading one runs no code.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile

from gate import __version__
from gate.engine.cache import cache_dir

_checker = None


def _checker_code() -> bytes:
    """The source of the code that decides what a fixture file holds and whether it is valid."""
    global _checker
    if _checker is None:
        digest = hashlib.sha256(__version__.encode())
        here = os.path.dirname(os.path.abspath(__file__))
        for name in ("fixtures.py", "fixturecache.py"):
            try:
                with open(os.path.join(here, name), "rb") as handle:
                    digest.update(handle.read())
            except OSError:
                digest.update(name.encode())
        _checker = digest.digest()
    return _checker


def _path(raw: bytes) -> str:
    key = hashlib.sha256(_checker_code() + raw).hexdigest()[:32]
    return os.path.join(cache_dir(), "fixtures", f"{key}.json")


def get(raw: bytes):
    """(entries, their lines) as stored for a file with these bytes, or None."""
    try:
        with open(_path(raw), encoding="utf-8") as handle:
            entry = json.load(handle)
        data, lines = entry["data"], entry["lines"]
        if isinstance(data, list) and isinstance(lines, list) and len(data) == len(lines):
            return data, lines
    except Exception:  # missing, unreadable or not what we wrote: a miss
        pass
    return None


def put(raw: bytes, data: list, lines: list) -> None:
    """Keep (entries, lines) for these bytes, if JSON gives back exactly what YAML gave."""
    try:
        text = json.dumps({"data": data, "lines": lines}, ensure_ascii=False)
        if json.loads(text)["data"] != data:  # a non-string key, a date...: not JSON's to keep
            return
        target = _path(raw)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=os.path.dirname(target), suffix=".tmp")
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.replace(tmp, target)
    except (OSError, TypeError, ValueError):
        pass

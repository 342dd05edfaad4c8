"""Load a classifier for a rules file, skipping YAML and jsonschema when we can.

An editor hook calls `gate classify` once per window, so parsing YAML and
importing jsonschema on every call would dominate its cost. The validated
revision is pickled under a key made from the file's bytes and this engine's
version; a changed file or a new engine simply misses the cache.
"""

from __future__ import annotations

import hashlib
import os
import pickle
import tempfile

from gate import __version__

_FORMAT = 1  # bump when the pickled model's shape changes


def cache_dir() -> str:
    base = os.environ.get("GATE_CACHE_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache"), "gate")
    return base


def load_classifier(path: str, *, use_cache: bool = True):
    """The compiled classifier for `path`; raises GateError for bad rules."""
    from gate.compiler import compile_revision

    return compile_revision(load_revision_cached(path, use_cache=use_cache))


def load_revision_cached(path: str, *, use_cache: bool = True):
    from gate.errors import GateError, Problem

    try:
        with open(path, "rb") as handle:
            raw = handle.read()
    except OSError as exc:
        raise GateError(Problem(path, f"cannot read rules file: {exc.strerror or exc}")) from None
    key = hashlib.sha256(raw + f"\0{__version__}\0{_FORMAT}".encode()).hexdigest()[:24]
    cached = os.path.join(cache_dir(), f"{key}.pickle")
    if use_cache:
        try:
            with open(cached, "rb") as handle:
                return pickle.load(handle)
        except Exception:  # a missing, stale or corrupt cache entry is only a miss
            pass
    from gate.compiler import compile_revision
    from gate.loader import load_revision

    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise GateError(Problem(path, f"rules file is not UTF-8: {exc}")) from None
    revision = load_revision(path, text=text)
    compile_revision(revision)  # only a revision that compiles is worth caching
    if use_cache:
        _store(cached, revision)
    return revision


def _store(target: str, revision) -> None:
    """Write atomically; a cache we cannot write is not an error."""
    try:
        os.makedirs(os.path.dirname(target), exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=os.path.dirname(target), suffix=".tmp")
        with os.fdopen(fd, "wb") as handle:
            pickle.dump(revision, handle, protocol=pickle.HIGHEST_PROTOCOL)
        os.replace(tmp, target)
    except OSError:
        pass

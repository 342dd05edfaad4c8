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

_FORMAT = 2  # bump when the pickled model's shape changes


def cache_dir() -> str:
    base = os.environ.get("GATE_CACHE_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache"), "gate")
    return base


def load_classifier(path: str, *, use_cache: bool = True):
    """The compiled classifier for `path`; raises GateError for bad rules."""
    return load_compiled_revision(path, use_cache=use_cache)[1]


def load_compiled_revision(path: str, *, use_cache: bool = True):
    """(revision, classifier) for `path`; raises GateError for bad rules.

    From the cache, the revision was validated and compiled when it was stored, so
    it is compiled lazily (each pattern on first use) with the pattern analysis
    the entry kept (gate/engine/literals.py): a hook pays only for what its window uses.
    A cached revision has no YAML source places (only errors need them).
    """
    from gate.engine.compiler import compile_revision

    revision, facts, compiled = _load(path, use_cache)
    if compiled is not None:
        return revision, compiled
    if facts is not None:
        from gate.engine.literals import remember

        remember(facts)
        try:
            return revision, compile_revision(revision, lazy=True)
        except Exception:  # an entry this engine cannot compile is only a miss
            revision, _, compiled = _load(path, use_cache, refresh=True)
            if compiled is not None:
                return revision, compiled
    return revision, compile_revision(revision)


def _analysis_code() -> bytes:
    """The source of the code that derives the cached pattern facts: an entry made by
    other code (a development checkout between releases) must miss, not mislead."""
    here = os.path.dirname(os.path.abspath(__file__))
    digest = hashlib.sha256()
    # patterns.py turns keywords into the literals the prefilter and the sets are built from
    for name in ("literals.py", "prefilter.py", "patternset.py", os.path.join("..", "language", "patterns.py")):
        try:
            with open(os.path.join(here, name), "rb") as handle:
                digest.update(handle.read())
        except OSError:
            digest.update(name.encode())
    return digest.digest()


def load_revision_cached(path: str, *, use_cache: bool = True):
    """The validated revision for `path` (from the cache: without its YAML source places)."""
    return _load(path, use_cache)[0]


def _load(path: str, use_cache: bool, refresh: bool = False):
    """(revision, cached pattern facts or None, classifier compiled on a miss or None)."""
    from gate.language.errors import GateError, Problem

    try:
        with open(path, "rb") as handle:
            raw = handle.read()
    except FileNotFoundError:
        raise GateError(Problem(path, "no such file")) from None  # as the YAML loader says it
    except OSError as exc:
        raise GateError(Problem(path, f"cannot read rules file: {exc.strerror or exc}")) from None
    key = hashlib.sha256(raw + f"\0{__version__}\0{_FORMAT}\0".encode() + _analysis_code()).hexdigest()[:24]
    cached = os.path.join(cache_dir(), f"{key}.pickle")
    if use_cache and not refresh:
        try:
            with open(cached, "rb") as handle:
                entry = pickle.load(handle)
            if isinstance(entry, dict):
                if entry.get("format") == _FORMAT:
                    return entry["revision"], entry["facts"], None
            elif hasattr(entry, "policy"):  # a bare revision, as format 1 stored it
                return entry, None, None
        except Exception:  # a missing, stale or corrupt cache entry is only a miss
            pass
    from gate.engine.compiler import compile_revision
    from gate.engine.literals import known
    from gate.language.loader import load_revision

    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise GateError(Problem(path, f"rules file is not UTF-8: {exc}")) from None
    revision = load_revision(path, text=text)
    compiled = compile_revision(revision)  # only a revision that compiles is worth caching
    if use_cache:
        _store(cached, revision, known())
    return revision, None, compiled


def _store(target: str, revision, facts: dict) -> None:
    """Write atomically; a cache we cannot write is not an error.

    The revision is kept without its YAML source places (only error messages use
    them, and a cached revision has none), so loading it never imports yaml."""
    import dataclasses

    entry = {"format": _FORMAT, "revision": dataclasses.replace(revision, source=None), "facts": facts}
    try:
        os.makedirs(os.path.dirname(target), exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=os.path.dirname(target), suffix=".tmp")
        with os.fdopen(fd, "wb") as handle:
            pickle.dump(entry, handle, protocol=pickle.HIGHEST_PROTOCOL)
        os.replace(tmp, target)
    except (OSError, pickle.PicklingError, TypeError):
        pass

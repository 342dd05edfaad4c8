"""A clean lint remembered: `gate lint rules/*.yaml` (a pre-commit hook, a CI step) reads every
revision, each takes seconds, and most have not changed since they last linted clean. Within a
file, most of the time is the adversarial search of each pattern, and revisions share most of
their patterns (a fitted revision all of them): a pattern that finished within budget is
remembered too, under the hash of its text and flags and the same code.

A file is remembered as clean under the hash of its bytes, gate's version and the source of
the gate package (code and schemas): any change to the file or to the code that lints it
misses. Only clean results are kept: a problem is found again each time, so a fix is seen
at once, and a timing-dependent finding (a slow pattern) is never frozen in.
"""

from __future__ import annotations

import hashlib
import os

from gate import __version__
from gate.engine.cache import cache_dir

_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_code_digest = None


def is_known_clean(path: str) -> bool:
    key = _key(path)
    return key is not None and os.path.exists(_marker(key))


def remember_clean(path: str) -> None:
    key = _key(path)
    if key is None:
        return
    _touch(_marker(key), os.path.abspath(path) + "\n")


def is_known_fast(pattern: str, flags: int) -> bool:
    return os.path.exists(_marker(_pattern_key(pattern, flags), "lint-patterns"))


def remember_fast(pattern: str, flags: int) -> None:
    _touch(_marker(_pattern_key(pattern, flags), "lint-patterns"), "")


def _pattern_key(pattern: str, flags: int) -> str:
    return _digest(f"{pattern}\0{flags}".encode("utf-8", "surrogatepass"))


def _marker(key: str, kind: str = "lint") -> str:
    return os.path.join(cache_dir(), kind, key)


def _touch(marker: str, text: str) -> None:
    try:
        os.makedirs(os.path.dirname(marker), exist_ok=True)
        with open(marker + f".{os.getpid()}", "w", encoding="utf-8") as handle:
            handle.write(text)
        os.replace(marker + f".{os.getpid()}", marker)
    except OSError:  # a read-only or full cache is only a slower next lint
        pass


def _key(path: str) -> str | None:
    try:
        with open(path, "rb") as handle:
            raw = handle.read()
    except OSError:
        return None  # the lint itself says what is wrong with the path
    return _digest(raw)


def _digest(data: bytes) -> str:
    """`data` under this version of gate and this very code."""
    return hashlib.sha256(data + f"\0{__version__}\0".encode() + _code()).hexdigest()[:32]


def _code() -> bytes:
    global _code_digest
    if _code_digest is None:
        digest = hashlib.sha256()
        for folder, dirs, files in sorted(os.walk(_PACKAGE, followlinks=True)):  # a checkout links schemas/
            dirs[:] = sorted(d for d in dirs if d != "__pycache__")
            for name in sorted(files):
                if name.endswith((".py", ".json")):
                    with open(os.path.join(folder, name), "rb") as handle:
                        digest.update(name.encode() + b"\0" + handle.read())
        _code_digest = digest.digest()
    return _code_digest

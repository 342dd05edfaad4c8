"""Rules files from git: `REV:path` -> the file's text at that revision.

A pull request diffs the file it changes (`gate diff HEAD~1:rules/v2.1.yaml
rules/v2.1.yaml`), so either side of a comparison may come from history. The
path after the colon is taken relative to the current directory, like every
other path on the command line.
"""

from __future__ import annotations

import os
import subprocess

from gate.language.errors import GateError, Problem


def split_spec(spec: str) -> tuple[str, str] | None:
    """('REV', 'path') for a `REV:path` spec; None for a plain path.

    A spec that names an existing file is a path even if it has a colon in it.
    """
    if os.path.exists(spec) or ":" not in spec:
        return None
    rev, _, path = spec.partition(":")
    if not rev or not path:
        return None
    return rev, path


def is_git_spec(spec: str) -> bool:
    return split_spec(spec) is not None


def read_spec(spec: str) -> str | None:
    """The text of `REV:path`, or None when `spec` is a plain path (read it yourself).

    Raises GateError with one clear line when git, the revision or the path is missing.
    """
    parts = split_spec(spec)
    if parts is None:
        return None
    rev, path = parts
    if _git("rev-parse", "--is-inside-work-tree") is None:
        raise GateError(Problem(spec, "not inside a git repository, so a REV:path spec cannot be read"))
    if _git("rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}") is None:
        raise GateError(Problem(spec, f"git has no revision '{rev}'"))
    if os.path.isabs(path):
        path = os.path.relpath(path)
    relative = path if path.startswith(("./", "../")) else "./" + path  # ./ = relative to the cwd
    text = _git("show", f"{rev}:{relative}")
    if text is None:
        raise GateError(Problem(spec, f"'{path}' does not exist in git revision '{rev}'"))
    return text


def _git(*args) -> str | None:
    try:
        result = subprocess.run(["git", *args], capture_output=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return None
    if result.returncode != 0:
        return None
    return result.stdout.decode("utf-8", errors="surrogateescape")

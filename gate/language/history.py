"""Which rules file, in a folder or in its git history, has a given policy id."""

from __future__ import annotations

import os
import subprocess

from gate.language.errors import GateError
from gate.language.loader import load_revision


def find_policy(policy: str, rules_dir: str = "rules") -> list[str]:
    """Every rules file with this policy id: in `rules_dir`, then in its git history.

    Returns places as paths or `REV:path`; files that do not load are skipped,
    since an unloadable file cannot have produced a decision.
    """
    found = []
    if os.path.isdir(rules_dir):
        for name in sorted(os.listdir(rules_dir)):
            if name.endswith((".yaml", ".yml")):
                path = os.path.join(rules_dir, name)
                try:
                    if load_revision(path).policy == policy:
                        found.append(path)
                except GateError:
                    continue
    for rev, path, text in _git_history(rules_dir):
        try:
            if load_revision(path, text=text, display_name=f"{rev}:{path}").policy == policy:
                found.append(f"{rev[:12]}:{path}")
        except GateError:
            continue
    return found


def _git_history(rules_dir: str):
    """(commit, path, text) for every version of every rules file git knows."""
    where = os.path.realpath(rules_dir)
    # Ask the repository that holds rules_dir, not the one around the current
    # directory; the directory may be gone from the work tree, so start from
    # its nearest existing parent. Every later command runs at the top level,
    # where the pathspec and the listed paths are relative to the repository.
    anchor = where
    while not os.path.isdir(anchor) and os.path.dirname(anchor) != anchor:
        anchor = os.path.dirname(anchor)

    def git(*args, cwd) -> str | None:
        try:
            result = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, timeout=60)
        except (OSError, subprocess.TimeoutExpired):
            return None
        return result.stdout if result.returncode == 0 else None

    top = git("rev-parse", "--show-toplevel", cwd=anchor)
    if top is None:
        return
    top = top.strip()
    prefix = os.path.relpath(where, top)
    if prefix == ".." or prefix.startswith(".." + os.sep):
        return
    log = git("log", "--format=%H", "--", prefix, cwd=top)
    seen_blobs = set()
    for commit in (log or "").split():
        listing = git("ls-tree", "-r", commit, "--", prefix, cwd=top) or ""
        for line in listing.splitlines():
            meta, _, path = line.partition("\t")
            blob = meta.split()[2]
            if not path.endswith((".yaml", ".yml")) or blob in seen_blobs:
                continue
            seen_blobs.add(blob)
            text = git("cat-file", "blob", blob, cwd=top)
            if text is not None:
                yield commit, path, text

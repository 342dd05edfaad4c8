"""The repository a session works in, as the platform's app id: the git-remote slug.

Read from .git/config directly (no git process: the hook runs on every turn), following
worktrees and submodules to the config they share, so every clone and worktree of one
repository gets the same id.
"""

from __future__ import annotations

import configparser
import os
import re

_SCHEME = re.compile(r"^[a-z][a-z0-9+.-]*://", re.I)


def repository_id(cwd: str) -> str:
    """'owner-repo' from the origin remote (the first remote without one); without any
    remote, the name of the repository's folder (or of `cwd` outside a repository)."""
    top, git_dir = _find_git(os.path.abspath(cwd or "."))
    if git_dir is not None:
        url = _remote_url(git_dir)
        if url:
            slug = slug_of(url)
            if slug:
                return slug
    return _clean(os.path.basename((top or os.path.abspath(cwd or ".")).rstrip(os.sep))) or "local"


def slug_of(url: str) -> str:
    """git@github.com:Owner/Repo.git, https://host/owner/repo, ssh://git@host:22/group/sub/repo.git
    -> 'owner-repo' (the last two path parts, lower-cased: hosts ignore the case of both)."""
    url = url.strip()
    if _SCHEME.match(url):
        rest = _SCHEME.sub("", url)
        path = rest.split("/", 1)[1] if "/" in rest else ""  # drop user@host:port
    elif ":" in url and not url.startswith("/"):
        path = url.split(":", 1)[1]  # scp-like: user@host:owner/repo.git
    else:
        path = url  # a local path remote
    path = path.split("?", 1)[0].strip("/")
    if path.endswith(".git"):
        path = path[:-4]
    parts = [_clean(p) for p in path.split("/") if p and p not in (".", "..")]
    parts = [p for p in parts if p]
    return "-".join(parts[-2:]).lower() if parts else ""


def _clean(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip("-.")


def _find_git(start: str) -> tuple[str | None, str | None]:
    """(work tree top, the git dir whose config names the remotes) for the repository above `start`."""
    here = start
    while True:
        dot_git = os.path.join(here, ".git")
        if os.path.isdir(dot_git):
            return here, _common_dir(dot_git)
        if os.path.isfile(dot_git):  # a worktree or submodule: "gitdir: <path>"
            try:
                with open(dot_git, encoding="utf-8", errors="replace") as handle:
                    line = handle.readline().strip()
            except OSError:
                return here, None
            if line.startswith("gitdir:"):
                target = os.path.join(here, line[len("gitdir:"):].strip())
                return here, _common_dir(os.path.normpath(target))
            return here, None
        parent = os.path.dirname(here)
        if parent == here:
            return None, None
        here = parent


def _common_dir(git_dir: str) -> str:
    """A worktree's git dir points at the main one through 'commondir'."""
    try:
        with open(os.path.join(git_dir, "commondir"), encoding="utf-8") as handle:
            return os.path.normpath(os.path.join(git_dir, handle.read().strip()))
    except OSError:
        return git_dir


def _remote_url(git_dir: str) -> str:
    parser = configparser.RawConfigParser(strict=False, interpolation=None)
    try:
        parser.read(os.path.join(git_dir, "config"), encoding="utf-8")
    except (configparser.Error, UnicodeDecodeError):
        return ""
    remotes = {}
    for section in parser.sections():
        match = re.match(r'remote\s+"(.*)"$', section)
        if match and parser.has_option(section, "url"):
            remotes[match.group(1)] = parser.get(section, "url")
    if "origin" in remotes:
        return remotes["origin"]
    return next(iter(remotes.values()), "")

"""Write a starting rules repository: the first revision, starter fixtures, the
schemas the editor lines point at, the pre-commit config and the CI workflow.

Everything is built in memory first, so a revision that does not load or a
directory that may not be written leaves the target as it was.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from dataclasses import dataclass, field
from datetime import datetime, timezone
from importlib import resources
from pathlib import Path

from gate.language import versions
from gate.language.errors import GateError, Problem
from gate.scaffold.revision import first_revision

FIRST_REVISION = "v1.0"

# Template files (gate/scaffold/files/) and where they go; dot-files are stored
# without their dot so packaging tools do not skip them.
_TEMPLATE = (
    ("README.md", "README.md"),
    ("gitignore", ".gitignore"),
    ("pre-commit-config.yaml", ".pre-commit-config.yaml"),
    ("github-workflow.yml", ".github/workflows/gate.yml"),
)
_SCHEMAS = ("rules.schema.json", "fixtures.schema.json")


@dataclass
class InitResult:
    directory: Path
    source: str  # the shipped revision it started from, e.g. "v2.3"
    policy: str  # the new revision's policy id
    written: list[str] = field(default_factory=list)  # relative paths, in writing order
    replaced: list[str] = field(default_factory=list)  # of those, files that existed (--force)
    git: str = ""  # what was done about git, for the message


def init_repository(directory: str, *, force: bool = False, day: str | None = None) -> InitResult:
    """Write the starting repository into `directory` (created when missing).
    Raises GateError for a directory that is not empty (unless `force`) or not writable."""
    target = Path(directory)
    if target.exists() and not target.is_dir():
        raise GateError(Problem(directory, "exists and is not a directory"))
    present = sorted(os.listdir(target)) if target.is_dir() else []
    if present and not force:
        shown = ", ".join(present[:5]) + (", ..." if len(present) > 5 else "")
        raise GateError(Problem(directory, f"is not empty ({shown}); gate init writes a new repository into an "
                                           "empty directory (--force writes into this one, replacing files of "
                                           "the same name)"))

    source_path, source_text = newest_shipped_revision()
    day = day or datetime.now(timezone.utc).strftime("%Y-%m-%d")
    rules_text, policy, source_name = first_revision(source_text, source_path, name=FIRST_REVISION, day=day)
    files = {f"rules/{FIRST_REVISION}.yaml": rules_text.encode("utf-8")}
    files.update(_template_files())
    schemas = resources.files("gate").joinpath("schemas")
    for name in _SCHEMAS:
        files[f"schemas/{name}"] = schemas.joinpath(name).read_bytes()

    result = InitResult(target, source=source_name, policy=policy)
    try:
        for relative, data in files.items():
            path = target / relative
            if path.exists():
                result.replaced.append(relative)
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
            result.written.append(relative)
    except OSError as exc:
        raise GateError(Problem(str(exc.filename or directory), f"cannot write: {exc.strerror or exc}")) from None
    result.git = _git_init(target)
    return result


def newest_shipped_revision() -> tuple[str, str]:
    """(display path, text) of the highest-versioned rules file gate ships."""
    shipped = resources.files("gate.scaffold").joinpath("shipped_rules")
    names = [entry.name for entry in shipped.iterdir() if entry.name.endswith((".yaml", ".yml"))]
    if not names:
        raise GateError(Problem("gate/scaffold/shipped_rules", "this gate was installed without its rules files"))
    newest = versions.newest(names)
    return f"rules/{newest}", shipped.joinpath(newest).read_text(encoding="utf-8")


def _template_files() -> dict[str, bytes]:
    template = resources.files("gate.scaffold").joinpath("files")
    files = {destination: template.joinpath(source).read_bytes() for source, destination in _TEMPLATE}
    starter = template.joinpath("fixtures")
    for entry in sorted(starter.iterdir(), key=lambda e: e.name):
        if entry.name.endswith(".yaml"):
            files[f"fixtures/{entry.name}"] = entry.read_bytes()
    return files


def _git_init(target: Path) -> str:
    """A new repository needs git for pre-commit and for `gate diff REV:path`; one
    inside an existing work tree is left to that tree."""
    git = shutil.which("git")
    if git is None:
        return "git not found: run `git init` yourself"
    inside = subprocess.run([git, "rev-parse", "--is-inside-work-tree"], cwd=target, capture_output=True, text=True)
    if inside.returncode == 0 and inside.stdout.strip() == "true":
        return "inside an existing git work tree: nothing initialized"
    done = subprocess.run([git, "init", "-q"], cwd=target, capture_output=True, text=True)
    return "git repository initialized" if done.returncode == 0 else f"git init failed: {done.stderr.strip()}"

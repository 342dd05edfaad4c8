"""`gate hook install claude-code`: put gate's hook entries into Claude Code's settings.

The settings file belongs to the person: everything else in it is kept as it was, a second
install changes nothing, a real change is preceded by a backup of the old file, and a dry
run prints the diff without writing. Entries are recognised by their command, so a gate
installed somewhere else replaces its old entries instead of adding a second set.
"""

from __future__ import annotations

import difflib
import json
import os
import shlex
import shutil
import sys
import time
from dataclasses import dataclass

from gate.language.errors import GateError, Problem

EVENTS = ("Stop", "PreCompact", "SessionEnd")
HOOK_ARGS = ("hook", "claude-code")
TIMEOUT_S = 5


@dataclass(frozen=True)
class Plan:
    path: str
    before: str  # "" when the file does not exist
    after: str

    @property
    def changed(self) -> bool:
        return self.before != self.after

    def diff(self) -> str:
        lines = difflib.unified_diff(self.before.splitlines(keepends=True), self.after.splitlines(keepends=True),
                                     fromfile=self.path if self.before else "/dev/null", tofile=self.path)
        return "".join(lines)


def settings_path(*, project: bool, cwd: str, home: str | None = None) -> str:
    if project:
        from gate.capture.repository import _find_git

        top, _ = _find_git(os.path.abspath(cwd))
        return os.path.join(top or os.path.abspath(cwd), ".claude", "settings.json")
    return os.path.join(home or os.path.expanduser("~"), ".claude", "settings.json")


def hook_command(executable: str | None = None) -> str:
    """The command Claude Code runs: this gate, by absolute path (the editor's PATH may not have
    it, and a `gate` found on PATH may belong to another environment)."""
    return " ".join([shlex.quote(executable or _this_gate()), *HOOK_ARGS])


def _this_gate() -> str:
    running = sys.argv[0] if sys.argv else ""
    if os.path.basename(running).startswith("gate") and os.path.isfile(running):
        return os.path.abspath(running)
    beside = os.path.join(os.path.dirname(sys.executable), "gate")  # the script of this environment
    if os.path.isfile(beside):
        return beside
    return shutil.which("gate") or "gate"


def is_gate_hook(entry) -> bool:
    if not isinstance(entry, dict) or not isinstance(entry.get("command"), str):
        return False
    try:
        argv = shlex.split(entry["command"])
    except ValueError:
        return False
    return tuple(argv[-2:]) == HOOK_ARGS and "gate" in os.path.basename(argv[0] if argv else "")


def plan_install(path: str, command: str) -> Plan:
    """What the settings file would become; GateError when it is not a settings object we can merge into."""
    try:
        with open(path, encoding="utf-8") as handle:
            before = handle.read()
    except FileNotFoundError:
        before = ""
    except (OSError, UnicodeDecodeError) as exc:
        raise GateError(Problem(path, f"cannot read the settings: {exc}; nothing was written")) from None
    settings = _parse(path, before)
    merged = merge_hooks(path, settings, command)
    if merged == settings and before:
        return Plan(path, before, before)
    return Plan(path, before, json.dumps(merged, indent=_indent_of(before), ensure_ascii=False) + "\n")


def merge_hooks(path: str, settings: dict, command: str) -> dict:
    """`settings` with exactly one gate entry per event (same command, same timeout), others untouched."""
    merged = json.loads(json.dumps(settings))  # a deep copy to compare against
    hooks = merged.setdefault("hooks", {})
    if not isinstance(hooks, dict):
        raise GateError(Problem(path, "hooks: expected an object of event -> list of matchers; nothing was written"))
    wanted = {"type": "command", "command": command, "timeout": TIMEOUT_S}
    for event in EVENTS:
        groups = hooks.setdefault(event, [])
        if not isinstance(groups, list):
            raise GateError(Problem(path, f"hooks.{event}: expected a list of matchers; nothing was written"))
        ours = [h for g in groups if isinstance(g, dict) and isinstance(g.get("hooks"), list)
                for h in g["hooks"] if is_gate_hook(h)]
        if ours == [wanted]:
            continue
        kept = []
        for group in groups:
            if isinstance(group, dict) and isinstance(group.get("hooks"), list):
                inner = [h for h in group["hooks"] if not is_gate_hook(h)]
                if not inner and len(inner) != len(group["hooks"]):
                    continue  # the group held only our old entry
                group = {**group, "hooks": inner}
            kept.append(group)
        kept.append({"hooks": [wanted]})
        hooks[event] = kept
    return merged


def write_plan(plan: Plan, *, now=time.time) -> str | None:
    """Write the new settings atomically, after a backup of the old file; returns the backup path."""
    directory = os.path.dirname(plan.path)
    os.makedirs(directory, exist_ok=True)
    backup = None
    mode = 0o644
    if plan.before:
        stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime(now()))
        backup = f"{plan.path}.bak-{stamp}"
        shutil.copy2(plan.path, backup)
        mode = os.stat(plan.path).st_mode & 0o777
    temp = f"{plan.path}.gate-tmp-{os.getpid()}"
    fd = os.open(temp, os.O_CREAT | os.O_TRUNC | os.O_WRONLY, mode)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(plan.after)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temp, plan.path)
    except BaseException:
        try:
            os.unlink(temp)
        except OSError:
            pass
        raise
    return backup


def _indent_of(text: str):
    """The file's own indentation, so a merge changes only what it must (2 spaces for a new file)."""
    for line in text.splitlines():
        stripped = line.lstrip(" \t")
        if stripped and stripped != line:
            lead = line[: len(line) - len(stripped)]
            return "\t" if lead.startswith("\t") else len(lead)
    return 2


def _parse(path: str, text: str) -> dict:
    if not text.strip():
        return {}
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise GateError(Problem(path, f"not valid JSON: {exc.msg}; nothing was written", exc.lineno, exc.colno)) from None
    if not isinstance(data, dict):
        raise GateError(Problem(path, "expected a JSON object of settings; nothing was written"))
    return data

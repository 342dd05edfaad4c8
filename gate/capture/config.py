"""The capture configuration: one TOML file, checked field by field.

    rules = "/home/me/gate/rules/v2.3.yaml"   # relative paths are read from this file's folder
    level = "balanced"                        # default: the revision's default_level
    user_id = "alice"
    recent_shapes = 32                        # shapes of a session's last windows kept for repeats

    [platform]
    base_url = "https://api.mem0.ai"
    api_key_env = "MEM0_API_KEY"              # the key itself is never in this file
    org_id = ""                               # both or neither: a project override
    project_id = ""

    [flush]
    max_attempts = 12                         # failed sends (429/5xx/timeout) before an item is parked
    backoff_seconds = 30                      # between those, doubling, capped at max_backoff_seconds
    max_backoff_seconds = 21600
"""

from __future__ import annotations

import os
import re
import tomllib
from dataclasses import dataclass, field, fields

from gate.language.errors import GateError, Problem

DEFAULT_BASE_URL = "https://api.mem0.ai"
DEFAULT_KEY_ENV = "MEM0_API_KEY"


@dataclass(frozen=True)
class PlatformConfig:
    base_url: str = DEFAULT_BASE_URL
    api_key_env: str = DEFAULT_KEY_ENV
    org_id: str = ""
    project_id: str = ""
    timeout: float = 30.0  # seconds per HTTP call
    retries: int = 4  # the client's own retries of one call on 429/5xx
    retry_backoff: float = 0.5  # first wait of those retries (Retry-After wins when sent)


@dataclass(frozen=True)
class FlushConfig:
    max_attempts: int = 12
    backoff_seconds: float = 30.0
    max_backoff_seconds: float = 21600.0


@dataclass(frozen=True)
class CaptureConfig:
    path: str  # the file it came from ("" when built in code)
    rules: str
    level: str | None = None
    user_id: str = ""
    recent_shapes: int = 32
    platform: PlatformConfig = field(default_factory=PlatformConfig)
    flush: FlushConfig = field(default_factory=FlushConfig)


_TOP = {"rules": str, "level": str, "user_id": str, "recent_shapes": int}
_TABLES = {"platform": PlatformConfig, "flush": FlushConfig}
_NUMBER = (int, float)


def load_config(path: str) -> CaptureConfig:
    """The configuration in `path`; GateError (file, line, field, what is expected) when it is wrong."""
    try:
        with open(path, "rb") as handle:
            raw = handle.read()
    except FileNotFoundError:
        raise GateError(Problem(path, "no such file; `gate hook install claude-code` writes one")) from None
    except OSError as exc:
        raise GateError(Problem(path, f"cannot read the configuration: {exc.strerror or exc}")) from None
    text = raw.decode("utf-8", "replace")
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        where = re.search(r"\(at line (\d+), column (\d+)\)", str(exc))
        message = re.sub(r"\s*\(at line \d+, column \d+\)", "", str(exc))
        line, column = (int(where.group(1)), int(where.group(2))) if where else (None, None)
        raise GateError(Problem(path, f"not valid TOML: {message}", line, column)) from None
    return _build(path, text, data)


def _build(path: str, text: str, data: dict) -> CaptureConfig:
    problems: list[Problem] = []

    def problem(key: str, message: str, table: str | None = None) -> None:
        name = f"{table}.{key}" if table else key
        problems.append(Problem(path, f"{name}: {message}", _line_of(text, key, table)))

    top: dict = {}
    tables: dict = {}
    for key, value in data.items():
        if key in ("api_key", "key") or (isinstance(value, dict) and "api_key" in value):
            table = key if isinstance(value, dict) else None
            problem("api_key", "the API key is read only from the environment variable named by "
                    "platform.api_key_env; remove it from this file", table)
        elif key in _TABLES:
            if not isinstance(value, dict):
                problem(key, "expected a table [" + key + "]")
                continue
            tables[key] = _table(key, value, _TABLES[key], problem)
        elif key in _TOP:
            if _TOP[key] is int and (not isinstance(value, int) or isinstance(value, bool) or value < 0):
                problem(key, "expected a whole number >= 0")
            elif _TOP[key] is str and not isinstance(value, str):
                problem(key, "expected a string")
            else:
                top[key] = value
        else:
            problem(key, f"unknown setting; expected one of {', '.join([*_TOP, *_TABLES])}")
    if "rules" not in data:
        problems.append(Problem(path, "rules: missing; expected the path of a rules file"))
    platform = tables.get("platform", PlatformConfig())
    if bool(platform.org_id) != bool(platform.project_id):
        problem("org_id" if platform.org_id else "project_id",
                "a project override needs both org_id and project_id (the platform ignores half of one)",
                "platform")
    if problems:
        raise GateError(problems)
    rules = top["rules"]
    if not os.path.isabs(os.path.expanduser(rules)):
        rules = os.path.join(os.path.dirname(os.path.abspath(path)), rules)
    return CaptureConfig(path=path, rules=os.path.expanduser(rules), level=top.get("level") or None,
                         user_id=top.get("user_id", ""), recent_shapes=top.get("recent_shapes", 32),
                         platform=platform, flush=tables.get("flush", FlushConfig()))


def _table(name: str, value: dict, cls, problem):
    known = {f.name: f for f in fields(cls)}
    kept = {}
    for key, item in value.items():
        spec = known.get(key)
        if spec is None:
            problem(key, f"unknown setting; expected one of {', '.join(known)}", name)
            continue
        default = spec.default
        if isinstance(default, str):
            if not isinstance(item, str):
                problem(key, "expected a string", name)
                continue
        elif isinstance(default, int) and not isinstance(default, bool) and not isinstance(default, float):
            if not isinstance(item, int) or isinstance(item, bool) or item < 0:
                problem(key, "expected a whole number >= 0", name)
                continue
        elif not isinstance(item, _NUMBER) or isinstance(item, bool) or item < 0:
            problem(key, "expected a number >= 0", name)
            continue
        kept[key] = float(item) if isinstance(default, float) else item
    return cls(**kept)


def _line_of(text: str, key: str, table: str | None) -> int | None:
    """The line where `key` is set (inside [table] when given), for the error message."""
    current = None
    for number, line in enumerate(text.splitlines(), 1):
        stripped = line.strip()
        header = re.match(r"\[\s*([A-Za-z0-9_.-]+)\s*\]", stripped)
        if header:
            current = header.group(1)
            if table is None and current == key:
                return number
            continue
        if re.match(rf"{re.escape(key)}\s*=", stripped) and current == table:
            return number
    return None


def render_config(*, rules: str, user_id: str, level: str | None = None,
                  key_env: str = DEFAULT_KEY_ENV, base_url: str = DEFAULT_BASE_URL) -> str:
    """A starting configuration, as `gate hook install` writes it when there is none."""
    lines = ["# gate capture: read by `gate hook claude-code` and `gate flush`.",
             f"rules = {_toml_string(rules)}"]
    lines.append(f"level = {_toml_string(level)}" if level else
                 "# level = \"balanced\"        # default: the revision's default_level")
    lines += [f"user_id = {_toml_string(user_id)}", "",
              "[platform]", f"base_url = {_toml_string(base_url)}",
              f"api_key_env = {_toml_string(key_env)}   # the key is read from the environment, never from here",
              "# org_id = \"\"                 # both or neither: write to another project of the key's org",
              "# project_id = \"\"", ""]
    return "\n".join(lines)


def _toml_string(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'

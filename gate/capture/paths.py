"""Where capture keeps things: XDG directories, overridable for tests and odd set-ups."""

from __future__ import annotations

import os


def _home() -> str:
    return os.path.expanduser("~")


def state_dir(environ=None) -> str:
    """$XDG_STATE_HOME/gate (default ~/.local/state/gate): the spool and the logs."""
    env = os.environ if environ is None else environ
    base = env.get("XDG_STATE_HOME") or os.path.join(_home(), ".local", "state")
    return os.path.join(base, "gate")


def config_path(environ=None) -> str:
    """$GATE_CONFIG, else $XDG_CONFIG_HOME/gate/config.toml (default ~/.config/gate/config.toml)."""
    env = os.environ if environ is None else environ
    if env.get("GATE_CONFIG"):
        return env["GATE_CONFIG"]
    base = env.get("XDG_CONFIG_HOME") or os.path.join(_home(), ".config")
    return os.path.join(base, "gate", "config.toml")


def private_dir(path: str) -> str:
    """Create `path` (mode 0700) if it is missing; the spool holds what people said."""
    os.makedirs(path, mode=0o700, exist_ok=True)
    return path

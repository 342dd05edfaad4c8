"""Shared pieces of the capture tests: a tiny revision, a private home (XDG dirs, a git
repository with a remote, a config), a session transcript that grows, and runners for the
real `gate` command in a subprocess. Everything talks real HTTP to gate's own emulator.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

from platform_helpers import KEY, KEY_ENV
from transcriptkit import ClaudeSession, text, tool_use

RULES_YAML = r"""
schema_version: 1
revision: cap1.0
description: A tiny revision for the capture tests.
levels: [conservative, balanced, aggressive]
default_level: balanced
vocabularies: {}
fragments: {}
drop_rules:
  - id: heartbeat
    description: Training progress frames are mechanical noise.
    scope: turn
    role: any
    min_level: conservative
    when: {match: {pattern: '\bepoch\s*\d', keywords: [epoch, Epoch]}}
    examples:
      match: ["Epoch 3 loss=0.4"]
      no_match: ["we deploy on Fridays"]
  - id: recent-shape
    description: The same shape as a window the session saw recently.
    scope: window
    role: any
    min_level: conservative
    when: {recent_shape: true}
    examples:
      match:
        - window: "Reindex at 41%: 2,050 of 5,000 pages"
          recent: ["Reindex at 12%: 600 of 5,000 pages"]
      no_match:
        - window: "We deploy from main only."
          recent: ["Reindex at 12%: 600 of 5,000 pages"]
signals:
  - id: we-decided
    description: An explicit decision.
    role: user
    min_level: conservative
    weights: {decision: 3}
    when: {match: {pattern: '\bwe decided\b', keywords: [decided]}}
    examples:
      match: [{role: user, content: "we decided to use Postgres"}]
      no_match: [{role: user, content: "we use Postgres"}]
  - id: i-prefer
    description: A stated preference of the developer.
    role: user
    min_level: conservative
    weights: {preference: 3}
    when: {match: {pattern: '\bI prefer\b', keywords: [prefer]}}
    examples:
      match: [{role: user, content: "I prefer tabs"}]
      no_match: [{role: user, content: "tabs are used"}]
flag:
  thresholds: {conservative: 3, balanced: 2, aggressive: 1}
categories:
  preference: How the developer likes to work.
  decision: A choice the team made, with its reason.
  convention: A rule of the codebase.
  insight: A non-obvious fact about the system.
  runbook: A confirmed procedure.
instructions: |
  Store only durable facts about the project.
noise_markers:
  - id: epoch
    description: training epoch counter
    pattern: '\bepoch\s*\d'
thresholds:
  hard_drop_recall: 0.95
  extract_recall: 0.8
"""

REMOTE = "git@github.com:Acme/Shop-API.git"
APP_ID = "acme-shop-api"
USER_ID = "dev-alice"


class CaptureHome:
    """A person's machine in a temporary folder: HOME, XDG dirs, a repository, the config."""

    def __init__(self, root, *, base_url: str = "http://127.0.0.1:9", **flush):
        self.root = root
        self.home = root / "home"
        self.repo = root / "shop"
        for path in (self.home, self.repo / ".git"):
            path.mkdir(parents=True, exist_ok=True)
        (self.repo / ".git" / "config").write_text(
            f'[core]\n\tbare = false\n[remote "origin"]\n\turl = {REMOTE}\n\tfetch = +refs/heads/*:refs/remotes/origin/*\n')
        self.rules = root / "rules.yaml"
        self.rules.write_text(RULES_YAML)
        self.state_home = root / "state"
        self.config_home = root / "config"
        self.env = {
            "PATH": os.environ.get("PATH", ""), "HOME": str(self.home), "LANG": "C.UTF-8",
            "XDG_STATE_HOME": str(self.state_home), "XDG_CONFIG_HOME": str(self.config_home),
            "GATE_CACHE_DIR": os.environ.get("GATE_CACHE_DIR", str(root / "cache")),
            KEY_ENV: KEY,
        }
        self.write_config(base_url, **flush)

    @property
    def state_dir(self):
        return self.state_home / "gate"

    @property
    def config_file(self):
        return self.config_home / "gate" / "config.toml"

    def write_config(self, base_url: str, *, max_attempts: int = 12, backoff_seconds: float = 30,
                     retries: int = 2, timeout: float = 5.0) -> None:
        self.config_file.parent.mkdir(parents=True, exist_ok=True)
        self.config_file.write_text(
            f'rules = "{self.rules}"\nuser_id = "{USER_ID}"\n\n'
            f'[platform]\nbase_url = "{base_url}"\napi_key_env = "{KEY_ENV}"\n'
            f'timeout = {float(timeout)}\nretries = {retries}\nretry_backoff = 0.01\n\n'
            f'[flush]\nmax_attempts = {max_attempts}\nbackoff_seconds = {float(backoff_seconds)}\n')

    def event(self, transcript, name: str = "Stop", session_id: str = "sess-1") -> str:
        return json.dumps({"session_id": session_id, "transcript_path": str(transcript),
                           "hook_event_name": name, "cwd": str(self.repo), "permission_mode": "default"})

    def hook(self, transcript, name: str = "Stop", session_id: str = "sess-1", **kwargs):
        """The hook in this process (fast); returns its HookReport."""
        from gate.capture.hook import run_hook

        kwargs.setdefault("start_flush", False)
        return run_hook(self.event(transcript, name, session_id), environ=self.env, **kwargs)

    def gate(self, *args, stdin: str = "", env: dict | None = None, timeout: float = 60, **popen):
        """The real `gate` command in a subprocess."""
        return subprocess.run([sys.executable, "-c", "from gate.cli import main; main()", *args],
                              input=stdin, capture_output=True, text=True, env={**self.env, **(env or {})},
                              cwd=str(self.repo), timeout=timeout, **popen)

    def start_gate(self, *args, **popen) -> subprocess.Popen:
        return subprocess.Popen([sys.executable, "-c", "from gate.cli import main; main()", *args],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=self.env,
                                cwd=str(self.repo), **popen)

    def flush_here(self):
        """`gate flush` in this process (fast); returns its FlushReport."""
        from gate.capture.config import load_config
        from gate.capture.flush import flush, make_client

        config = load_config(str(self.config_file))
        client, why = make_client(config, self.env)
        assert client is not None, why
        with client, self.spool() as spool:
            return flush(spool, client, config)

    def spool(self):
        from gate.capture.spool import Spool

        return Spool(str(self.state_dir))


def heartbeat_exchange(session: ClaudeSession, n: int) -> None:
    """A training run whose every visible line is a progress frame: dropped, never sent."""
    session.prompt("kick off the training run")
    session.reply(tool_use(f"tu-train-{n}", "Bash", {"command": "python train.py --epochs 10"}))
    session.tool_results((f"tu-train-{n}", f"Epoch {n}/10 loss=0.{40 - n} ETA {12 - n}m"))
    session.reply(text(f"Epoch {n}/10 loss=0.{40 - n}"))


def decision_exchange(session: ClaudeSession, what: str) -> None:
    session.prompt(f"we decided to {what}, the old way cost us a weekend of on-call")
    session.reply(text("Understood, I'll follow that from now on."))


def preference_exchange(session: ClaudeSession, what: str) -> None:
    session.prompt(f"I prefer {what}, please stick to it")
    session.reply(text("Will do."))


def chatter_exchange(session: ClaudeSession) -> None:
    session.prompt("ok thanks, looks fine")
    session.reply(text("Glad it works."))


def sent_adds(emu) -> list:
    """Bodies of every add the emulator received (retried ones included)."""
    return [r.body for r in emu.writes_seen() if r.path == "/v3/memories/add/"]


def spool_bytes(home: CaptureHome) -> bytes:
    """Everything capture wrote under the state directory (spool, WAL, log)."""
    out = b""
    for dirpath, _, files in os.walk(home.state_dir):
        for name in files:
            try:
                with open(os.path.join(dirpath, name), "rb") as handle:
                    out += handle.read()
            except OSError:
                pass
    return out

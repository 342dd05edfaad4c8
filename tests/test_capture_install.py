"""`gate hook install claude-code`: merges into the person's settings, changes nothing the
second time, backs up before a change, and a dry run writes nothing."""

from __future__ import annotations

import json
import os
import sys

from capturekit import CaptureHome

THEIR_SETTINGS = {
    "model": "opus",
    "permissions": {"allow": ["Bash(npm test:*)"]},
    "hooks": {
        "Stop": [{"hooks": [{"type": "command", "command": "notify-send done", "timeout": 3}]}],
        "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "audit-bash"}]}],
    },
}


def _gate_entries(settings: dict) -> dict:
    return {event: [h for g in groups for h in g.get("hooks", []) if h["command"].endswith(" hook claude-code")]
            for event, groups in settings["hooks"].items()}


def _files(folder) -> set:
    return set(os.listdir(folder)) if os.path.isdir(folder) else set()


def test_install_merges_keeps_the_rest_and_is_idempotent(tmp_path):
    home = CaptureHome(tmp_path)
    claude = home.home / ".claude"
    claude.mkdir()
    settings_file = claude / "settings.json"
    settings_file.write_text(json.dumps(THEIR_SETTINGS, indent=4) + "\n")
    before = settings_file.read_text()

    done = home.gate("hook", "install", "claude-code", "--user")
    assert done.returncode == 0, done.stderr
    merged = json.loads(settings_file.read_text())
    assert merged["model"] == "opus" and merged["permissions"] == THEIR_SETTINGS["permissions"]
    assert merged["hooks"]["PreToolUse"] == THEIR_SETTINGS["hooks"]["PreToolUse"]
    assert merged["hooks"]["Stop"][0] == THEIR_SETTINGS["hooks"]["Stop"][0]  # theirs first, untouched
    entries = _gate_entries(merged)
    for event in ("Stop", "PreCompact", "SessionEnd"):
        assert len(entries[event]) == 1
        assert entries[event][0]["type"] == "command" and entries[event][0]["timeout"] == 5
    beside = os.path.join(os.path.dirname(sys.executable), "gate")
    if os.path.isfile(beside):  # the gate of the environment that ran the install, not one on PATH
        assert entries["Stop"][0]["command"] == f"{beside} hook claude-code"
    assert settings_file.read_text().startswith('{\n    "model"')  # their indentation kept
    backups = [n for n in _files(claude) if n.startswith("settings.json.bak-")]
    assert len(backups) == 1 and (claude / backups[0]).read_text() == before
    assert "backup:" in done.stdout
    assert home.config_file.exists()  # the existing config was kept
    assert "exists; kept" in done.stdout

    after_first = settings_file.read_text()
    again = home.gate("hook", "install", "claude-code")
    assert again.returncode == 0 and "already there; nothing written" in again.stdout
    assert settings_file.read_text() == after_first
    assert _files(claude) == {"settings.json", backups[0]}  # no second backup


def test_install_replaces_an_old_gate_entry_instead_of_adding_one(tmp_path):
    home = CaptureHome(tmp_path)
    settings_file = home.repo / ".claude" / "settings.json"
    settings_file.parent.mkdir()
    old = {"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "/old/venv/bin/gate hook claude-code",
                                           "timeout": 5}]}]}}
    settings_file.write_text(json.dumps(old))
    done = home.gate("hook", "install", "claude-code", "--project")
    assert done.returncode == 0, done.stderr
    entries = _gate_entries(json.loads(settings_file.read_text()))
    assert all(len(v) == 1 for v in entries.values()) and len(entries) == 3
    assert "/old/venv" not in settings_file.read_text()


def test_dry_run_prints_the_diff_and_writes_nothing(tmp_path):
    home = CaptureHome(tmp_path)
    os.remove(home.config_file)
    (home.repo / "rules").mkdir()
    (home.repo / "rules" / "v1.0.yaml").write_text(home.rules.read_text())
    done = home.gate("hook", "install", "claude-code", "--project", "--dry-run", "--user-id", "dev-bob")
    assert done.returncode == 0, done.stderr
    out = done.stdout
    settings_file = home.repo / ".claude" / "settings.json"
    assert f"+++ {settings_file}" in out and '+    "SessionEnd": [' in out
    assert f"+++ {home.config_file}" in out and '+user_id = "dev-bob"' in out
    assert f'+rules = "{home.repo / "rules" / "v1.0.yaml"}"' in out
    assert out.rstrip().endswith("dry run: nothing was written")
    assert not settings_file.exists() and not home.config_file.exists()
    # the real run writes exactly what the dry run showed
    assert home.gate("hook", "install", "claude-code", "--project", "--user-id", "dev-bob").returncode == 0
    assert '"SessionEnd"' in settings_file.read_text()
    assert 'user_id = "dev-bob"' in home.config_file.read_text()
    assert "api_key =" not in home.config_file.read_text()


def test_a_settings_file_that_is_not_json_is_left_alone(tmp_path):
    home = CaptureHome(tmp_path)
    claude = home.home / ".claude"
    claude.mkdir()
    (claude / "settings.json").write_text('{\n  "model": "opus",\n  "hooks": {,}\n}\n')
    done = home.gate("hook", "install", "claude-code")
    assert done.returncode == 2
    assert done.stderr.startswith(f"{claude / 'settings.json'}:3:")
    assert "not valid JSON" in done.stderr and "nothing was written" in done.stderr
    assert "Traceback" not in done.stderr
    assert _files(claude) == {"settings.json"}

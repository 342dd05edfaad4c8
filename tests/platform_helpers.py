"""Shared pieces for the platform/live tests: a tiny revision, a small fixture set, the emulator.

Everything runs over real HTTP on loopback against gate's own emulator; nothing is mocked.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal

from gate.platform.emulator import Emulator, EmulatorConfig

# Distinctive so that a grep of every output can prove it never leaks.
KEY = "m0-FAKEkeyXq7ZsecretVALUE91"
KEY_ENV = "GATE_TEST_MEM0_KEY"
ORG = "org_emu"
SCRATCH = "proj_scratch"
DEFAULT_PROJECT = "proj_default"


def default_sigint() -> None:
    """A child's SIGINT as a terminal would deliver it (preexec_fn): a shell that runs the suite in
    the background ignores SIGINT, the child inherits that, and a test's Ctrl-C would reach
    nothing."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


RULES_YAML = r"""
schema_version: 1
revision: t1.0
description: A tiny revision for the live tests.
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
flag:
  thresholds: {conservative: 3, balanced: 2, aggressive: 1}
categories:
  preference: How the developer likes to work.
  decision: A choice the team made, with its reason.
  convention: A rule of the codebase.
  insight: A non-obvious fact about the system.
  runbook: A confirmed procedure.
instructions: |
  Store only durable facts about the project. Never store progress, heartbeats or session status.
noise_markers:
  - id: epoch
    description: training epoch counter
    pattern: '\bepoch\s*\d'
  - id: eta
    description: ETA of a job
    pattern: '\bETA\b'
thresholds:
  hard_drop_recall: 0.95
  extract_recall: 0.8
"""

FIXTURES_YAML = r"""
- id: d-heartbeat
  window: [{role: tool, content: "Epoch 4/10 loss=0.31 ETA 9m"}]
  label: drop
  expect_type: null
  note: A pure heartbeat; never sent, so the live run must skip it.
- id: ex-heartbeat
  window: [{role: user, content: "Epoch 3/10 finished with loss=0.41, ETA 12m for the rest."}]
  label: exclude
  expect_type: null
  note: A heartbeat the instructions must suppress (the leak switch breaks that).
- id: ex-narration
  window: [{role: assistant, content: "I'll run the test suite now and then update the changelog."}]
  label: exclude
  expect_type: null
  note: Assistant narration stores nothing.
- id: ex-status
  window: [{role: user, content: "At 12:45:24 the import job was still running on the box."}]
  label: exclude
  expect_type: null
  note: Session-only status with a clock time stores nothing.
- id: x-decision
  window: [{role: user, content: "we decided to move the job queue to Postgres because SQS costs too much."}]
  label: extract
  expect_type: decision
  note: A cue-word decision; the classifier flags and types it.
- id: x-convention
  window: [{role: user, content: "Every migration file is named with a UTC timestamp prefix."}]
  label: extract
  expect_type: convention
  note: A convention with no cue word; the type comes from expect_type.
- id: x-mixed
  window:
    - {role: tool, content: "Epoch 2/10 loss=0.45 ETA 4m"}
    - {role: user, content: "we decided to keep bastion-2 as the only way into the prod database."}
    - {role: tool, content: "Epoch 3/10 loss=0.44 ETA 3m"}
  label: extract
  expect_type: decision
  note: Mixed window; the payload sent must not carry the heartbeat frames.
"""

EXTRACT_IDS = ("x-decision", "x-convention", "x-mixed")
EXCLUDE_IDS = ("ex-heartbeat", "ex-narration", "ex-status")


def write_inputs(tmp_path, rules: str = RULES_YAML, fixtures: str = FIXTURES_YAML):
    rules_path = tmp_path / "rules.yaml"
    rules_path.write_text(rules)
    fx_path = tmp_path / "fixtures.yaml"
    fx_path.write_text(fixtures)
    return str(rules_path), str(fx_path)


@contextlib.contextmanager
def emulator(**switches):
    switches.setdefault("delay_ms", 60)
    switches.setdefault("retry_after", "0.01")
    config = EmulatorConfig(api_key=KEY, **switches)
    with Emulator(config) as emu:
        yield emu


def live(emu, tmp_path, lines: list | None = None, **overrides) -> tuple[int, dict | None, list]:
    """Run gate's live evaluation against `emu`; returns (exit code, report or None, echoed lines)."""
    from gate.live import run_live

    rules, fixtures = write_inputs(tmp_path)
    lines = [] if lines is None else lines
    report_path = str(tmp_path / "live_report.json")
    kwargs = dict(level=None, project_id=SCRATCH, org_id=ORG, base_url=emu.url if emu else "http://127.0.0.1:9",
                  api_key_env=KEY_ENV, run_id="t1", timeout=5.0, min_settle=0.4, cleanup=False,
                  preflight_only=False, allow_default_project=False, report_path=report_path,
                  report_mode="compact", check=True, echo=lines.append, retry_backoff=0.01,
                  request_timeout=5.0, environ={KEY_ENV: KEY})
    kwargs.update(overrides)
    code = run_live(kwargs.pop("rules", rules), kwargs.pop("fixtures", [fixtures]), **kwargs)
    path = kwargs["report_path"]
    report = json.load(open(path)) if path and os.path.exists(path) else None
    return code, report, lines


def rows_by_id(report: dict) -> dict:
    return {r["id"]: r for r in report["rows"]}


def assert_no_key(*texts) -> None:
    for text in texts:
        assert KEY not in str(text), "the API key leaked into output"
        assert KEY[3:15] not in str(text)

"""`gate apply` (push + read-back verification) and `gate rescore` (no network)."""

from __future__ import annotations

import json

from click.testing import CliRunner

from gate.live.apply import run_apply
from gate.live.rescore import run_rescore
from gate.cli.live import apply as apply_cmd
from gate.cli.live import rescore as rescore_cmd
from platform_helpers import (DEFAULT_PROJECT, KEY, KEY_ENV, ORG, RULES_YAML, SCRATCH, assert_no_key, emulator,
                              live, write_inputs)


def apply_(emu, tmp_path, lines, **kw):
    rules, _ = write_inputs(tmp_path)
    args = dict(project_id=SCRATCH, org_id=ORG, base_url=emu.url, api_key_env=KEY_ENV, dry_run=False,
                echo=lines.append, retry_backoff=0.01, environ={KEY_ENV: KEY})
    args.update(kw)
    return run_apply(rules, **args)


def test_apply_pushes_and_verifies_by_reading_back(tmp_path):
    lines = []
    with emulator() as emu:
        assert apply_(emu, tmp_path, lines) == 0
        config = emu.store.project(ORG, SCRATCH)
        patches = [r for r in emu.requests if r.method == "PATCH"]
        gets_after = [r for r in emu.requests[emu.requests.index(patches[0]):] if r.method == "GET"]
        assert config["custom_instructions"].startswith("Store only durable facts")
        assert [list(c)[0] for c in config["custom_categories"]] == [
            "preference", "decision", "convention", "insight", "runbook"]
        assert len(patches) == 1 and gets_after  # read back after the write
        assert any("verified by reading back" in l for l in lines)
        lines.clear()
        assert apply_(emu, tmp_path, lines) == 0  # idempotent: nothing to write
        assert len([r for r in emu.requests if r.method == "PATCH"]) == 1
        assert any("already match" in l for l in lines)


def test_apply_dry_run_writes_nothing_and_shows_the_change(tmp_path):
    lines = []
    with emulator() as emu:
        emu.store.update_project(ORG, SCRATCH, {"custom_instructions": "Old text.",
                                                "custom_categories": [{"decision": "A choice."}, {"legacy": "x"}]})
        assert apply_(emu, tmp_path, lines, dry_run=True) == 0
        assert all(r.method == "GET" for r in emu.requests)
        assert emu.store.project(ORG, SCRATCH)["custom_instructions"] == "Old text."
    text = "\n".join(lines)
    assert "custom_instructions would change:" in text and "-Old text." in text
    assert "add preference, convention, insight, runbook; remove legacy; update decision" in text
    assert lines[-1] == "dry run: nothing was written"


def test_apply_to_the_keys_own_project_and_usage_errors(tmp_path):
    lines = []
    with emulator() as emu:
        assert apply_(emu, tmp_path, lines, project_id=None, org_id=None) == 0
        assert f"the key resolves to org {ORG} / project {DEFAULT_PROJECT}" in lines
        assert emu.store.project(ORG, DEFAULT_PROJECT)["custom_instructions"]
        n = len(emu.requests)
        assert apply_(emu, tmp_path, lines, org_id=None) == 2  # half an override
        assert apply_(emu, tmp_path, lines, environ={}) == 2
        assert apply_(emu, tmp_path, lines, org_id="org_other") == 1  # the platform refuses
        assert len(emu.requests) == n + 1  # only the refused read was sent
    assert_no_key("\n".join(lines))


def test_apply_cli(tmp_path, monkeypatch):
    rules, _ = write_inputs(tmp_path)
    monkeypatch.setenv(KEY_ENV, KEY)
    with emulator() as emu:
        result = CliRunner().invoke(apply_cmd, ["--rules", rules, "--project-id", SCRATCH, "--org-id", ORG,
                                                "--base-url", emu.url, "--api-key-env", KEY_ENV])
    assert result.exit_code == 0, result.output
    assert "verified by reading back" in result.output
    assert_no_key(result.output)


def _leaky_report(tmp_path) -> str:
    with emulator(leak=True) as emu:
        code, report, _ = live(emu, tmp_path)
    assert report["scores"]["noise_leak_count"] > 0
    return str(tmp_path / "live_report.json")


def test_rescore_with_other_markers_and_thresholds_needs_no_network(tmp_path):
    path = _leaky_report(tmp_path)
    # the emulator is gone: any network use would fail; rescore must not need it
    quiet = RULES_YAML.replace(r"pattern: '\bepoch\s*\d'", "pattern: 'no-such-marker-xyz'").replace(
        r"pattern: '\bETA\b'", "pattern: 'another-absent-marker'")
    strict = RULES_YAML.replace("extract_recall: 0.8", "extract_recall: 0.8\n  exclude_suppression: 0.9")
    (tmp_path / "quiet.yaml").write_text(quiet)
    (tmp_path / "strict.yaml").write_text(strict)
    lines = []
    out = str(tmp_path / "rescored.json")
    assert run_rescore(path, rules_path=str(tmp_path / "quiet.yaml"), out_path=out, check=True,
                       echo=lines.append) == 0
    new = json.load(open(out))
    assert new["scores"]["noise_leak_count"] == 0 and new["rescored"]["original_scores"]["noise_leak_count"] > 0
    assert all(not r["leaks"] for r in new["rows"])
    assert new["rows"] and new["run_id"] == "t1"
    assert any("noise_leak_count" in l and "-> 0" in l for l in lines)
    lines.clear()
    assert run_rescore(path, rules_path=str(tmp_path / "strict.yaml"), check=True, echo=lines.append) == 1
    assert any("exclude_suppression 0.667 below the floor 0.9" in l for l in lines)
    # default: the report's own rules
    assert run_rescore(path, echo=lines.append) == 0


def test_rescore_refuses_what_it_cannot_score(tmp_path):
    rules, _ = write_inputs(tmp_path)
    bad = tmp_path / "offline.json"
    bad.write_text(json.dumps({"policy": "x", "rows": []}))
    lines = []
    assert run_rescore(str(bad), rules_path=rules, echo=lines.append) == 2
    assert "not a live report" in lines[-1]
    assert run_rescore(str(tmp_path / "nope.json"), rules_path=rules, echo=lines.append) == 2
    (tmp_path / "junk.json").write_text("{")
    assert run_rescore(str(tmp_path / "junk.json"), rules_path=rules, echo=lines.append) == 2


def test_rescore_cli_json(tmp_path):
    path = _leaky_report(tmp_path)
    result = CliRunner().invoke(rescore_cmd, [path, "--format", "json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["kind"] == "live" and data["scores"]["noise_leak_count"] > 0

"""The live evaluation end to end against the emulator, over real HTTP on loopback."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap

import pytest

from gate.live.scoring import evaluate_check, live_floors, score_rows
from gate.platform.client import PlatformClient
from gate.platform.contract import Scope, project_scope
from gate.platform.secret import Secret
from platform_helpers import (DEFAULT_PROJECT, EXCLUDE_IDS, EXTRACT_IDS, KEY, KEY_ENV, ORG, SCRATCH,
                              assert_no_key, default_sigint, emulator, live, rows_by_id, write_inputs)


def statuses(report):
    return {r["id"]: r["status"] for r in report["rows"]}


def test_clean_run_scores_and_reports_everything(tmp_path):
    with emulator() as emu:
        code, report, lines = live(emu, tmp_path, report_mode="full")
        writes = emu.writes_seen()
    assert code == 0, "\n".join(lines)
    s = report["scores"]
    assert (s["extract_recall"], s["exclude_suppression"], s["type_match"]) == (1.0, 1.0, 1.0)
    assert s["noise_leak_count"] == 0 and s["memories_written"] == 3 and s["not_measured"] == []
    assert s["per_type"]["decision"]["extract_recall"] == 1.0 and s["per_type"]["insight"]["extract_recall"] is None
    assert set(statuses(report)) == set(EXTRACT_IDS + EXCLUDE_IDS)  # the drop fixture is not sent
    rows = rows_by_id(report)
    assert rows["x-decision"]["stamped_by"] == "classifier" and rows["x-convention"]["stamped_by"] == "fixture"
    assert rows["ex-narration"]["stamped_by"] is None
    assert rows["x-convention"]["types"] == ["convention"]
    assert rows["ex-heartbeat"]["detail"] == "event SUCCEEDED with nothing stored"
    # the mixed window went out as the classifier's payload, without its heartbeat frames
    assert rows["x-mixed"]["sent_from"] == "payload"
    assert all("Epoch" not in m["content"] for m in rows["x-mixed"]["sent"]["messages"])
    # the revision was applied (and read back) before anything was written
    assert writes[0].method == "PATCH" and writes[0].body["custom_instructions"].startswith("Store only durable")
    adds = [w for w in writes if w.path == "/v3/memories/add/"]
    assert len(adds) == 6
    for w in adds:
        fixture = w.body["metadata"]["fixture"]
        assert w.body["user_id"] == f"eval-t1-{fixture}" and w.body["app_id"] == "eval-t1"
        assert w.body["infer"] is True and (w.body["project_id"], w.body["org_id"]) == (SCRATCH, ORG)
        assert set(w.body["metadata"]) == {"type", "policy", "session_id", "fixture"}
        assert w.body["metadata"]["policy"] == report["policy"]
    for key in ("policy", "rules", "run_id", "app_id", "user_id_prefix", "base_url", "written_to", "scores",
                "rows", "thresholds", "check", "interrupted", "cleanup", "generated_at"):
        assert key in report, key
    assert report["written_to"] == {"org_id": ORG, "project_id": SCRATCH}
    assert report["user_id_prefix"] == "eval-t1-" and report["interrupted"] is False
    assert report["check"]["passed"] and report["event_status"] == "reported"
    assert any(l.startswith("waiting for extraction") for l in lines)
    assert any("to clean up by hand" in l and "eval-t1" in l for l in lines)  # no --cleanup: the hint


def test_late_extraction_is_waited_for_through_the_event_status(tmp_path):
    with emulator(late_ms=900, late_match="x-convention") as emu:
        code, report, lines = live(emu, tmp_path, min_settle=0.2)
    row = rows_by_id(report)["x-convention"]
    assert code == 0 and row["status"] == "stored" and row["concluded_after_s"] >= 0.85
    assert report["scores"]["extract_recall"] == 1.0


def test_without_event_status_reads_poll_and_zero_counts_only_after_min_settle(tmp_path):
    with emulator(events=False, late_ms=500, late_match="x-convention") as emu:
        code, report, lines = live(emu, tmp_path, min_settle=0.9)
    rows = rows_by_id(report)
    assert code == 0 and report["event_status"].startswith("not reported")
    assert rows["x-convention"]["status"] == "stored"
    for fid in EXCLUDE_IDS:
        assert rows[fid]["status"] == "suppressed" and rows[fid]["concluded_after_s"] >= 0.9
    assert any("does not report event status" in l for l in lines)


def test_landing_after_min_settle_without_events_is_a_miss_the_report_shows(tmp_path):
    with emulator(events=False, late_ms=3000, late_match="x-convention") as emu:
        code, report, lines = live(emu, tmp_path, min_settle=0.3)
    row = rows_by_id(report)["x-convention"]
    assert row["status"] == "suppressed" and "min-settle" in row["detail"]
    assert abs(report["scores"]["extract_recall"] - 2 / 3) < 1e-9
    assert code == 1 and not report["check"]["passed"]  # below the 0.8 floor, with --check
    assert any("extract misses: x-convention" in l for l in lines)


def test_leaking_memory_is_counted(tmp_path):
    with emulator(leak=True) as emu:
        code, report, lines = live(emu, tmp_path)
    s = report["scores"]
    assert s["noise_leak_count"] > 0 and s["leaking_fixtures"] == ["ex-heartbeat"]
    leak = rows_by_id(report)["ex-heartbeat"]["leaks"][0]
    assert set(leak["markers"]) == {"epoch", "eta"} and "Epoch 3/10" in leak["text"]
    assert s["exclude_suppression"] == 2 / 3
    assert any(l.strip().startswith("leak in ex-heartbeat") for l in lines)


def test_429_and_5xx_bursts_are_survived(tmp_path):
    with emulator(rate_429=0.15, rate_5xx=0.1, seed=3) as emu:
        code, report, lines = live(emu, tmp_path, cleanup=True)
        injected = dict(emu.injected)
    assert injected["429"] > 0 and injected["5xx"] > 0
    assert code == 0, "\n".join(lines)
    assert report["client_stats"]["retries"] >= injected["429"] + injected["5xx"] - 1
    assert report["scores"]["extract_recall"] == 1.0 and report["scores"]["exclude_suppression"] == 1.0
    assert report["cleanup"]["verified"]


def test_cleanup_leaves_zero_memories_verified_by_reads(tmp_path):
    with emulator() as emu:
        code, report, lines = live(emu, tmp_path, cleanup=True)
        c = PlatformClient(emu.url, Secret(KEY), scope=Scope(SCRATCH, ORG))
        left = {r["user_id"]: c.get_all(project_scope(r["user_id"], report["app_id"])).data for r in report["rows"]}
        everything = c.get_all({"app_id": report["app_id"]}).data
        soft = emu.store.count_all()
    assert code == 0 and report["cleanup"]["verified"] and report["cleanup"]["users"] == 6
    assert all(v == [] for v in left.values()) and everything == []
    assert soft == {"live": 0, "deleted": 3}  # deletes are soft: rows persist, reads show none
    assert not any("to clean up by hand" in l for l in lines)


def test_cleanup_that_reads_contradict_is_reported_not_verified(tmp_path):
    # a platform that ignores the DELETE's override ids: the 200 means nothing, the reads say so
    with emulator(honour_delete_scope=False) as emu:
        code, report, lines = live(emu, tmp_path, cleanup=True, timeout=1.0)
    assert code == 1
    assert report["cleanup"]["verified"] is False and sum(report["cleanup"]["remaining"].values()) == 3
    assert any("cleanup NOT verified" in l for l in lines) and any("to clean up by hand" in l for l in lines)


def test_missing_ids_or_key_are_refused_with_nothing_sent(tmp_path):
    with emulator() as emu:
        for missing in ({"project_id": None}, {"org_id": None}, {"project_id": None, "org_id": None}):
            code, report, lines = live(emu, tmp_path, report_path=str(tmp_path / "r.json"), **missing)
            assert code == 2 and report is None
            assert "required for --live" in lines[0] and "--" in lines[0] and "Nothing was sent" in lines[0]
        code, report, lines = live(emu, tmp_path, environ={})
        assert code == 2 and lines[0] == f"key ({KEY_ENV}): absent"
        assert emu.requests == []


def test_the_keys_default_project_is_refused_unless_allowed(tmp_path):
    with emulator() as emu:
        code, report, lines = live(emu, tmp_path, project_id=DEFAULT_PROJECT)
        assert code == 2 and any(l.startswith("refusing: that is the key's own default project") for l in lines)
        assert [r.path for r in emu.requests] == ["/v1/ping/"] and emu.writes_seen() == []
        code, report, lines = live(emu, tmp_path, project_id=DEFAULT_PROJECT, allow_default_project=True,
                                   cleanup=True)
        assert code == 0 and report["written_to"]["project_id"] == DEFAULT_PROJECT


def test_preflight_only_writes_nothing(tmp_path):
    with emulator() as emu:
        code, report, lines = live(emu, tmp_path, preflight_only=True)
        assert code == 0 and report is None
        assert {(r.method, r.path) for r in emu.requests} == {("GET", "/v1/ping/")}
    assert lines[0] == f"key ({KEY_ENV}): present"
    assert f"the key resolves to: org {ORG} / project {DEFAULT_PROJECT}" in lines
    assert f"this run would write to: org {ORG} / project {SCRATCH}" in lines
    assert lines[-1].startswith("preflight ok: a run would send 6 windows")


def test_the_key_never_appears_in_any_output_or_report(tmp_path, capsys):
    with emulator(rate_429=0.1, seed=1) as emu:
        code, report, lines = live(emu, tmp_path, cleanup=True, report_mode="full")
        code2, _, lines2 = live(emu, tmp_path, preflight_only=True)
    with emulator() as emu:  # a key the platform rejects, and a server that goes away
        code3, _, lines3 = live(emu, tmp_path, environ={KEY_ENV: KEY + "x"})
    code4, _, lines4 = live(None, tmp_path, base_url=f"http://127.0.0.1:{emu.port}")
    out = capsys.readouterr()
    report_text = open(tmp_path / "live_report.json").read()
    assert (code, code2, code3, code4) == (0, 0, 2, 1)
    assert_no_key("\n".join(lines + lines2 + lines3 + lines4), report_text, out.out, out.err)


def test_interrupted_run_leaves_a_usable_report_and_the_cleanup_hint(tmp_path):
    lines, pressed = [], []

    def ctrl_c_once(line):
        lines.append(line)
        if line.startswith("waiting for extraction") and not pressed:
            pressed.append(1)
            raise KeyboardInterrupt

    with emulator(delay_ms=3000) as emu:
        code, report, _ = live(emu, tmp_path, lines=lines, echo=ctrl_c_once, cleanup=True)
    assert code == 130
    assert report["interrupted"] is True and "Ctrl-C" in report["interrupt_reason"]
    assert report["check"]["passed"] is False and report["cleanup"]["performed"] is False
    rows = report["rows"]
    assert len(rows) == 6 and all(r["status"] == "in_flight" and r["user_id"].startswith("eval-t1-") for r in rows)
    assert report["scores"]["extract_recall"] is None and len(report["scores"]["not_measured"]) == 6
    assert any("to clean up by hand" in l for l in lines)


def test_network_loss_mid_run_is_an_interruption_with_a_report(tmp_path):
    holder = {}
    lines = []

    def pull_the_plug(line):
        lines.append(line)
        if line.startswith("waiting for extraction") and "emu" in holder:
            holder.pop("emu").stop()

    with emulator(delay_ms=800) as emu:
        holder["emu"] = emu
        code, report, _ = live(emu, tmp_path, lines=lines, echo=pull_the_plug)
    assert code == 1 and report["interrupted"] and "unreachable" in report["interrupt_reason"]
    assert all(r["status"] == "in_flight" for r in report["rows"])
    assert any("to clean up by hand" in l for l in lines)


def test_failed_extraction_is_not_measured_and_fails_the_check(tmp_path):
    with emulator(fail_match="x-decision") as emu:
        code, report, lines = live(emu, tmp_path)
    assert rows_by_id(report)["x-decision"]["status"] == "failed"
    assert report["scores"]["extract_recall"] == 1.0  # of what was measured
    assert code == 1 and any("not measured: x-decision" in f for f in report["check"]["failures"])


@pytest.mark.parametrize("sig,code", [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_a_signal_to_a_real_process_still_writes_the_report(tmp_path, sig, code):
    rules, fixtures = write_inputs(tmp_path)
    report_path = tmp_path / "sig.json"
    with emulator(delay_ms=5000) as emu:
        script = textwrap.dedent(f"""
            import sys
            from gate.live import run_live
            sys.exit(run_live({rules!r}, [{fixtures!r}], project_id={SCRATCH!r}, org_id={ORG!r},
                              base_url={emu.url!r}, api_key_env={KEY_ENV!r}, run_id="sig", timeout=20,
                              min_settle=1, report_path={str(report_path)!r},
                              echo=lambda l: print(l, flush=True)))
        """)
        env = dict(os.environ, **{KEY_ENV: KEY})
        proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True, env=env, preexec_fn=default_sigint)
        out_lines = []
        for line in proc.stdout:
            out_lines.append(line)
            if line.startswith("waiting for extraction"):
                proc.send_signal(sig)
                break
        rest, err = proc.communicate(timeout=20)
    out = "".join(out_lines) + rest
    assert proc.returncode == code, err
    report = json.loads(report_path.read_text())
    assert report["interrupted"] and report["run_id"] == "sig" and len(report["rows"]) == 6
    assert "to clean up by hand" in out
    assert_no_key(out, err, report_path.read_text())


def test_scores_with_empty_denominators_are_not_measured():
    s = score_rows([])
    assert s["extract_recall"] is None and s["exclude_suppression"] is None and s["type_match"] is None
    assert s["noise_leak_count"] == 0 and s["memories_written"] == 0
    only_extract = [{"id": "a", "label": "extract", "expect_type": "decision", "status": "suppressed",
                     "memories": [], "stamped_by": "fixture"}]
    s = score_rows(only_extract)
    assert s["extract_recall"] == 0.0 and s["exclude_suppression"] is None and s["type_match"] is None
    check = evaluate_check(s, {"extract_recall": 0.8, "exclude_suppression": 0.9, "hard_drop_recall": 0.95})
    assert "exclude_suppression not measured (no fixture of its kind concluded)" in check["failures"]
    assert live_floors({"extract_recall": 0.8, "live_extract_recall": 0.6, "hard_drop_recall": 0.95}) == {
        "extract_recall": 0.6}


def test_usage_errors_send_nothing(tmp_path):
    with emulator() as emu:
        assert live(emu, tmp_path, run_id="Bad Id!")[0] == 2
        assert live(emu, tmp_path, report_mode="huge")[0] == 2
        code, _, lines = live(emu, tmp_path, rules=str(tmp_path / "missing.yaml"))
        assert code == 2 and "missing.yaml" in lines[0]
        assert emu.requests == []

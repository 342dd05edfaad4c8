"""gate bench end to end on the embedded SQLite backend, with a tiny LoCoMo-shaped dataset."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from click.testing import CliRunner

from benchkit import tiny_locomo, write_dataset
from gate.bench import cases, noise
from gate.bench.answering import Answer, ContainmentJudge, ExtractiveAnswerer, containment, token_f1
from gate.bench.dataset import DatasetError, parse_dataset
from gate.bench.stores import Hit
from gate.cli import main
from gate.cli.common import newest_rules

RULES = newest_rules("rules")


def bench(*args):
    result = CliRunner().invoke(main, ["bench", *args])
    return result


def run_report(tmp_path, *args, mode="full"):
    out = tmp_path / "report.json"
    result = bench("--dataset", write_dataset(tmp_path), "--report-out", str(out), "--report-mode", mode,
                   "--store-dir", str(tmp_path / "stores"), *args)
    assert result.exit_code == 0, result.output
    return json.loads(out.read_text()), result.output


def test_end_to_end_on_sqlite_gate_beside_no_gate(tmp_path):
    report, output = run_report(tmp_path, "--rules", RULES, "--no-gate", "--noise-rate", "1.5", "--case-set", "full",
                                "--top-k", "5", "--top-k-cutoff", "1", "--top-k-cutoff", "5", "--context-k", "3")
    names = [s["name"] for s in report["systems"]]
    revision = names[1]
    assert names[0] == "no-gate" and report["baseline"] == "no-gate"
    base, gated = report["metrics"]["no-gate"], report["metrics"][revision]
    # every system saw the same 14 real turns and the same noise
    assert base["ingest"]["real_turns"] == gated["ingest"]["real_turns"] == 14
    assert base["ingest"]["noise_injected"] == gated["ingest"]["noise_injected"] == 21
    assert base["ingest"]["noise_stored"] == 21 and base["ingest"]["real_stored"] == 14
    # the gate keeps noise out of the store, and no real turn is lost for it
    assert gated["ingest"]["noise_stored"] < base["ingest"]["noise_stored"]
    assert gated["ingest"]["false_drops"] == 0 and gated["ingest"]["evidence_retention"] == 1.0
    assert gated["ingest"]["stored_items"] == 14 + gated["ingest"]["noise_stored"]
    assert report["deltas"][revision]["ingest.noise_stored"] == gated["ingest"]["noise_stored"] - 21
    # distinctive answers are found: the dog's name, the city, the workshop
    for system in names:
        results = {c["key"]: c["results"][system] for c in report["cases"]}
        assert results["conv-a#1"]["correct"] and results["conv-b#0"]["correct"], system
        assert any(h["source"] == "D1:3" for h in results["conv-a#1"]["hits"])  # 'D1:03' resolved
        assert all(len(r["hits"]) <= 5 for r in results.values())
    assert gated["retrieval"]["5"]["evidence_recall"] >= gated["retrieval"]["1"]["evidence_recall"] > 0
    # the table is printed with both systems and deltas
    assert "false drops per 1,000 real turns" in output and f"{revision} (Δ vs no-gate)" in output
    assert "evidence recall@5" in output and "noise share of top-5" in output
    # the databases were cleaned up
    assert not (tmp_path / "stores").exists() or not any((tmp_path / "stores").rglob("*.sqlite"))


def test_category_5_is_reported_and_never_scored(tmp_path):
    report, output = run_report(tmp_path, "--no-gate", "--case-set", "full")
    metrics = report["metrics"]["no-gate"]
    assert metrics["questions"] == 10 and metrics["scored"] == 8
    assert metrics["by_category"]["adversarial"] == {"questions": 2, "scored": False, "stage_failures": 0}
    assert metrics["overall"]["questions"] == 8
    adversarial = [c for c in report["cases"] if c["category"] == 5]
    assert adversarial and all(c["results"]["no-gate"]["answer"] == "" for c in adversarial)  # never answered
    assert "adversarial questions (reported, unscored)" in output


def test_noise_is_seeded_realistic_and_tagged():
    conversation = parse_dataset([{"sample_id": "s", "conversation": {"session_1": [
        {"speaker": "A", "dia_id": f"D1:{i}", "text": f"turn {i}"} for i in range(1, 401)]}, "qa": []}]).conversations[0]
    first = noise.interleave(conversation, 0.3, seed=7)
    again = noise.interleave(conversation, 0.3, seed=7)
    other = noise.interleave(conversation, 0.3, seed=8)
    assert first == again and first != other
    items = [x for x in first if isinstance(x, noise.NoiseItem)]
    assert len(items) == 120
    assert [t for t in first if not isinstance(t, noise.NoiseItem)] == list(conversation.turns)  # order kept
    assert {x.kind for x in items} == set(noise.KINDS)
    assert len({x.id for x in items}) == len(items)
    texts = [json.dumps(x.window) for x in items if x.kind == "training-heartbeat"]
    assert len(set(texts)) == len(texts)  # numbers vary from frame to frame
    assert noise.interleave(conversation, 0.0, seed=7) == list(conversation.turns)


def test_containment_judge_and_token_f1():
    judge = ContainmentJudge()
    hits = [Hit(text="[3 March, 2024] Ilse: Biscuit sleeps nineteen hours a day.", source="D1:3", kind="real", score=1.0)]
    assert judge.judge("q", "biscuit", Answer(""), hits).correct
    assert judge.judge("q", "Biscuit, nineteen hours!", Answer(""), hits).correct
    assert not judge.judge("q", "Biscuit and a cat", Answer(""), hits).correct
    assert not judge.judge("q", "Biscuit", Answer(""), []).correct
    assert judge.judge("q", "2024", Answer(""), hits).correct  # numeric gold answers
    assert containment("the seesaw", "he hates the seesaws") == 1.0  # plural and function words
    assert containment("", "anything") is None
    assert token_f1("head nurse", "head nurse") == 1.0
    assert token_f1("promoted to head nurse at the clinic", "head nurse") == pytest.approx(2 * 0.5 * 1 / 1.5)
    assert token_f1("Kyoto", "Lagos") == 0.0
    picked = ExtractiveAnswerer().answer("Where is the pottery workshop?", [
        Hit("Wen: I like tea.", "D1:9", "real", 2.0), Hit("Wen: a pottery workshop in Kyoto", "D1:1", "real", 1.0)])
    assert picked.text == "Wen: a pottery workshop in Kyoto"


def test_fast_case_set_is_fixed_and_fills_each_category():
    data = tiny_locomo()
    data[0]["qa"] = [{"question": f"q{c}-{i}", "answer": "x", "evidence": ["D1:1"], "category": c}
                     for c in range(1, 6) for i in range(15)]
    questions = parse_dataset(data).questions
    fast = cases.select(questions, "fast")
    assert fast == cases.select(questions, "fast")
    assert sorted(q.category for q in fast) == sorted([1, 2, 3, 4, 5] * 10)
    temporal = cases.select(questions, "fast-temporal")
    assert len(temporal) == 10 and {q.category for q in temporal} == {2}
    assert cases.shortfall(questions[:30], "fast") == {"open-domain": 0, "single-hop": 0, "adversarial": 0}


def test_dataset_shape_errors_are_one_line(tmp_path):
    data = tiny_locomo()
    data[1]["conversation"]["session_1"][2]["text"] = 42
    result = bench("--dataset", write_dataset(tmp_path, data), "--no-gate")
    assert result.exit_code == 2
    assert result.output.strip().count("\n") == 0
    assert "sample 'conv-b': conversation.session_1[2]: 'text' must be a string" in result.output
    with pytest.raises(DatasetError, match="no session_N keys"):
        parse_dataset([{"sample_id": "x", "conversation": {"speaker_a": "A"}, "qa": []}])
    bad = tmp_path / "bad.json"
    bad.write_text("[{")
    result = bench("--dataset", str(bad))
    assert result.exit_code == 2 and "bad.json:1:3: not JSON" in result.output


def test_sessions_follow_session_keys_and_images_are_appended():
    dataset = parse_dataset(tiny_locomo())
    turns = dataset.conversations[0].turns
    assert [t.session for t in turns] == [1] * 6 + [2] * 4  # session_3 has a date and no turns
    assert turns[3].text.startswith("[9:15 am on 3 March, 2024] Tomas: ")
    assert "a photo of a small wooden boat on a trailer" in turns[3].text and "wooden sailboat restoration" in turns[3].text
    sister = [q for q in dataset.questions if q.key == "conv-b#2"][0]
    assert sister.evidence == ("D1:4",) and sister.unresolved == ("D9:9",)


def test_replay_reanswers_saved_retrieval_without_a_store(tmp_path):
    report, _ = run_report(tmp_path, "--rules", RULES, "--no-gate", "--noise-rate", "0.5", "--case-set", "full")
    out = tmp_path / "replay.json"
    result = CliRunner().invoke(main, ["bench-replay", "--report", str(tmp_path / "report.json"),
                                       "--report-out", str(out)])
    assert result.exit_code == 0, result.output
    replayed = json.loads(out.read_text())
    for name, values in report["metrics"].items():
        assert replayed["metrics"][name]["overall"] == values["overall"]
        assert replayed["metrics"][name]["ingest"] == values["ingest"]
    narrower = CliRunner().invoke(main, ["bench-replay", "--report", str(tmp_path / "report.json"),
                                         "--context-k", "1", "--report-out", str(out)])
    assert narrower.exit_code == 0
    assert json.loads(out.read_text())["config"]["context_k"] == 1
    compact, _ = run_report(tmp_path, "--no-gate", mode="compact")
    assert "cases" not in compact
    refused = CliRunner().invoke(main, ["bench-replay", "--report", str(tmp_path / "report.json")])
    assert refused.exit_code == 2 and "--report-mode full" in refused.output


def test_gate_classify_never_imports_bench(tmp_path):
    probe = ("import io, sys\nfrom gate.cli import main\n"
             f"sys.argv = ['gate', 'classify', '--rules', {RULES!r}]\n"
             "sys.stdin = io.StringIO('[]\\n')\n"
             "try:\n    main()\nexcept SystemExit:\n    pass\n"
             "print(sorted(m for m in sys.modules if m.startswith('gate.bench') or m == 'sqlite3'), file=sys.stderr)\n")
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, env=dict(os.environ))
    assert result.stderr.decode().strip().splitlines()[-1] == "[]", result.stderr


def test_full_form_stores_only_flagged_windows(tmp_path):
    report, output = run_report(tmp_path, "--rules", RULES, "--gate-form", "both", "--case-set", "full",
                                "--noise-rate", "1")
    drop_form, full_form = [s["name"] for s in report["systems"]]
    assert full_form == f"{drop_form}/full" and report["baseline"] == drop_form  # no no-gate: the first is the base
    drop, full = report["metrics"][drop_form]["ingest"], report["metrics"][full_form]["ingest"]
    assert full["real_stored"] < drop["real_stored"] == 14  # small talk is not flagged
    assert full["false_drops"] == drop["false_drops"] == 0  # a skip is not a drop
    assert full["noise_stored"] <= drop["noise_stored"]
    assert full["stored_items"] == full["real_stored"] + full["noise_stored"]


def test_keep_store_leaves_a_searchable_database(tmp_path):
    import sqlite3

    report, _ = run_report(tmp_path, "--no-gate", "--keep-store", "--run-id", "kept", "--case-set", "full")
    path = tmp_path / "stores" / "kept" / "no-gate.sqlite"
    rows = sqlite3.connect(path).execute("SELECT source FROM memories WHERE memories MATCH 'greyhound'").fetchall()
    assert rows == [("D1:1",)]
    assert report["config"]["store_dir"] == str(tmp_path / "stores" / "kept")


def test_preflight_checks_the_store_directory_and_writes_nothing(tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    result = bench("--dataset", write_dataset(tmp_path), "--no-gate", "--case-set", "full", "--preflight-only",
                   "--store-dir", str(blocker / "stores"), "--report-out", str(tmp_path / "r.json"))
    checks = json.loads(result.output)
    assert result.exit_code == 1 and checks["ready"] is False
    assert checks["backend"]["store_dir_writable"] is False
    ok = bench("--dataset", write_dataset(tmp_path), "--no-gate", "--case-set", "full", "--preflight-only",
               "--store-dir", str(tmp_path / "stores"))
    assert ok.exit_code == 0 and json.loads(ok.output)["ready"] is True
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a-file", "tiny_locomo.json"]  # nothing created


def test_bad_run_ids_and_duplicate_revisions_are_refused(tmp_path):
    escape = bench("--dataset", write_dataset(tmp_path), "--no-gate", "--run-id", "../../etc")
    assert escape.exit_code == 2 and "--run-id '../../etc'" in escape.output
    twice = bench("--dataset", write_dataset(tmp_path), "--rules", RULES, "--rules", RULES)
    assert twice.exit_code == 2 and "pass each revision once" in twice.output
    missing = bench("--dataset", write_dataset(tmp_path), "--rules", str(tmp_path / "nope.yaml"))
    assert missing.exit_code == 2 and "nope.yaml: no such file" in missing.output

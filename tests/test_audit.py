"""`gate audit` on exports: clustering by shape, noise, attribution per policy, type and day, --check.

Every test runs the real command line on a small export written in the test.
"""

from __future__ import annotations

import json

import pytest

from auditkit import FACTS, HEARTBEATS, memory, rules, run, run_json, write_jsonl
from gate.audit.shape import shape, signature, similar, token_set


# -- shapes ---------------------------------------------------------------------------------

@pytest.mark.parametrize("a, b", [
    ("Epoch 3/10 loss=0.4121 ETA 12m", "epoch 7/10 - loss: 0.1873 - ETA 3m"),
    ("processed 340 of 1200 chunks (28%)", "Processed 12 of 90 chunks (13.3%)"),
    ("markdown-ingest pid 48213 elapsed 00:03:12", "markdown-ingest pid 7 elapsed 01:00:59"),
    ("commit 3f9a2c1b fixed the flaky test", "commit 0be41d77aa fixed the flaky test"),
    ("modified: src/gate/cli.py, tests/test_x.py", "modified: gate/audit/run.py"),
    ("job 550e8400-e29b-41d4-a716-446655440000 done at 2026-11-01T10:00:00Z",
     "job 6ba7b810-9dad-11d1-80b4-00c04fd430c8 done at 2026-12-24T23:59:01+00:00"),
    ("see https://ci.example.com/runs/123?x=1 for the log", "see http://ci.example.com/runs/9 for the log"),
    ("throughput 45.3it/s, 98% done", "throughput 7.0 it/s, 12% done"),
])
def test_varying_parts_collapse_into_one_shape(a, b):
    assert shape(a) == shape(b)


@pytest.mark.parametrize("a, b", [
    ("We deploy the API on Fly.io", "We deploy the API on Railway"),
    ("Lena prefers tabs", "Lena prefers spaces"),
    ("The cache is Redis", "The queue is Redis"),
])
def test_different_facts_keep_different_shapes(a, b):
    assert shape(a) != shape(b)


def test_english_words_made_of_hex_letters_are_not_hashes():
    assert shape("the decade-old facade was defaced") == "the decade old facade was defaced"
    assert "<hash>" in shape("build deadbeef42 failed")


def test_a_frame_with_an_extra_field_is_similar_and_an_unrelated_fact_is_not():
    frame = token_set(shape("Epoch 3/10 loss=0.41 ETA 12m lr 3e-4"))
    plain = token_set(shape("Epoch 3/10 loss=0.41 ETA 12m"))
    fact = token_set(shape("We decided to keep bastion-2 as the only way into the prod database"))
    assert similar(frame, plain, 0.8)
    assert not similar(frame, fact, 0.5)
    assert signature("epoch <n> loss <n> eta <n> lr <n>") is not None
    assert signature("ok <n>") is None  # too short to compare by similarity


# -- clusters ---------------------------------------------------------------------------------

def test_heartbeat_variants_land_in_one_cluster_and_facts_stay_apart(tmp_path):
    memories = [memory(t, day=1 + i % 3) for i, t in enumerate(HEARTBEATS * 4)]
    memories += [memory(f, day=2) for f in FACTS]
    export = write_jsonl(tmp_path / "export.jsonl", memories)
    code, report, err = run_json(export, "--rules", rules(tmp_path), "--jobs", "1")
    assert code == 0, err
    nd = report["near_duplicates"]
    assert nd["clusters"] == 1, report["clusters"]
    assert nd["largest"] == len(HEARTBEATS) * 4
    assert nd["memories"] == len(HEARTBEATS) * 4
    assert nd["share"] == pytest.approx(20 / 26)
    top = report["clusters"][0]
    assert top["size"] == 20 and top["shapes"] >= 2  # the '[14:02:11]' form is merged by similarity
    assert all(s in [m["memory"] for m in memories] for s in top["samples"])


def test_a_fact_restated_with_another_number_is_a_near_duplicate_pair(tmp_path):
    memories = [memory("The API request timeout is 30 seconds for calls to the gateway."),
                memory("The API request timeout is 45 seconds for calls to the gateway.", day=3),
                memory(FACTS[0]), memory(FACTS[1])]
    export = write_jsonl(tmp_path / "e.jsonl", memories)
    code, report, _ = run_json(export, "--rules", rules(tmp_path), "--jobs", "1")
    assert code == 0
    assert report["near_duplicates"]["clusters"] == 1
    assert report["clusters"][0]["size"] == 2
    assert report["clusters"][0]["first_day"] == "2026-11-01" and report["clusters"][0]["last_day"] == "2026-11-03"


def test_similarity_one_groups_by_exact_shape_only(tmp_path):
    memories = [memory("Epoch 3/10 loss=0.41 ETA 12m"), memory("Epoch 4/10 loss=0.39 ETA 11m"),
                memory("Epoch 5/10 loss=0.35 ETA 10m lr 3e-4")]
    export = write_jsonl(tmp_path / "e.jsonl", memories)
    _, loose, _ = run_json(export, "--rules", rules(tmp_path), "--jobs", "1", "--similarity", "0.7")
    _, exact, _ = run_json(export, "--rules", rules(tmp_path), "--jobs", "1", "--similarity", "1")
    assert loose["clusters"][0]["size"] == 3
    assert exact["clusters"][0]["size"] == 2


# -- noise, attribution ----------------------------------------------------------------------

def _two_policy_store():
    """p-old wrote 8 heartbeats and 2 facts on days 1-2; p-new wrote 4 facts and 1 heartbeat on day 3."""
    out = [memory(HEARTBEATS[i % 3], policy="p-old", day=1 + i % 2, hour=8 + i) for i in range(8)]
    out += [memory(FACTS[0], policy="p-old", mtype="decision", day=1, categories=["decision"]),
            memory(FACTS[1], policy="p-old", mtype="convention", day=2, categories=["preference"])]
    out += [memory(f, policy="p-new", mtype="insight", day=3) for f in FACTS[2:6]]
    out += [memory("Epoch 1/10 loss=0.9 ETA 20m", policy="p-new", mtype=None, day=3)]
    return out


def test_noise_and_near_duplicates_are_traced_to_the_policy_that_admitted_them(tmp_path):
    export = write_jsonl(tmp_path / "e.jsonl", _two_policy_store())
    code, report, _ = run_json(export, "--rules", rules(tmp_path), "--jobs", "1")
    assert code == 0
    assert report["memories"] == 15
    policies = {p["policy"]: p for p in report["policies"]}
    assert set(policies) == {"p-old", "p-new"}
    old, new = policies["p-old"], policies["p-new"]
    assert (old["memories"], new["memories"]) == (10, 5)
    assert old["noise_share"] == pytest.approx(8 / 10)  # every heartbeat: epoch and ETA markers
    assert new["noise_share"] == pytest.approx(1 / 5)
    assert old["near_duplicate_share"] == pytest.approx(8 / 10)
    assert new["near_duplicate_share"] == pytest.approx(1 / 5)  # its one frame joins p-old's cluster
    assert (old["first_day"], old["last_day"]) == ("2026-11-01", "2026-11-02")
    assert report["clusters"][0]["policies"] == {"p-old": 8, "p-new": 1}
    noise = report["noise"]
    assert noise["memories"] == 9 and noise["markers"] == {"epoch": 9, "eta": 9}
    assert noise["drop_rules"] == {"heartbeat": 9} and noise["would_drop"] == 9


def test_per_day_and_per_type(tmp_path):
    export = write_jsonl(tmp_path / "e.jsonl", _two_policy_store())
    _, report, _ = run_json(export, "--rules", rules(tmp_path), "--jobs", "1")
    days = {d["day"]: d for d in report["days"]}
    assert [d["day"] for d in report["days"]] == ["2026-11-01", "2026-11-02", "2026-11-03"]
    assert days["2026-11-01"]["memories"] == 5 and days["2026-11-01"]["noise_share"] == pytest.approx(4 / 5)
    assert days["2026-11-03"]["memories"] == 5 and days["2026-11-03"]["noise"] == 1
    types = {t["type"]: t for t in report["types"]["rows"]}
    assert types["decision"]["category_agrees_share"] == 1.0
    assert types["convention"]["category_agrees_share"] == 0.0  # categorized, as something else
    assert types[None]["memories"] == 1 and report["types"]["untyped"] == 1
    assert report["types"]["uncategorized"] == 13
    assert report["types"]["categories"] == {"decision": 1, "preference": 1}


def test_memories_without_a_policy_or_a_date_are_counted_not_lost(tmp_path):
    memories = [memory(FACTS[0], policy=None), {"memory": FACTS[1]},
                memory(FACTS[2], policy=None, created_at="yesterday")]
    export = write_jsonl(tmp_path / "e.jsonl", memories)
    _, report, _ = run_json(export, "--rules", rules(tmp_path), "--jobs", "1")
    assert report["memories"] == 3
    assert [p["policy"] for p in report["policies"]] == ["(none)"]
    assert sum(d["memories"] for d in report["days"]) == 3
    assert any(d["day"] == "(unknown)" for d in report["days"])


def test_offsets_count_toward_the_utc_day(tmp_path):
    memories = [memory(FACTS[0], created_at="2026-11-01T23:30:00-05:00"),
                memory(FACTS[1], created_at=1_790_000_000)]
    export = write_jsonl(tmp_path / "e.jsonl", memories)
    _, report, _ = run_json(export, "--rules", rules(tmp_path), "--jobs", "1")
    assert sorted(d["day"] for d in report["days"]) == ["2026-09-21", "2026-11-02"]


# -- sources ----------------------------------------------------------------------------------

def test_json_documents_and_get_all_pages_read_like_json_lines(tmp_path):
    store = _two_policy_store()
    lines = write_jsonl(tmp_path / "a.jsonl", store)
    listing = tmp_path / "b.json"
    listing.write_text(json.dumps(store, indent=2))
    pages = tmp_path / "c.json"
    pages.write_text(json.dumps([{"results": store[:7], "next": "x"}, {"results": store[7:], "next": None}]))
    page_lines = tmp_path / "d.jsonl"
    page_lines.write_text(json.dumps({"results": store[:7]}) + "\n" + json.dumps({"results": store[7:]}) + "\n")
    r = rules(tmp_path)
    reports = [run_json(str(p), "--rules", r, "--jobs", "1")[1] for p in (lines, listing, pages, page_lines)]
    for other in reports[1:]:
        assert {k: v for k, v in other.items() if k != "source"} == \
               {k: v for k, v in reports[0].items() if k != "source"}


def test_parallel_workers_give_the_same_report(tmp_path):
    store = [memory(HEARTBEATS[i % 5].replace("3", str(i % 9)), policy=f"p{i % 3}", day=1 + i % 20)
             for i in range(2500)]
    store += [memory(f"{FACTS[i % 6]} (case {i})", policy="p1", day=1 + i % 20) for i in range(3000)]
    export = write_jsonl(tmp_path / "big.jsonl", store)
    r = rules(tmp_path)
    _, one, _ = run_json(export, "--rules", r, "--jobs", "1")
    _, two, _ = run_json(export, "--rules", r, "--jobs", "2")
    assert one == two
    assert one["memories"] == 5500


def _audit_parts(parts, rules_path, jobs):
    from gate.audit.judge import Judge
    from gate.audit.run import audit
    from gate.engine.cache import load_compiled_revision

    revision, _ = load_compiled_revision(rules_path)
    judge = Judge(revision)
    return audit(parts, judge, source="x", rules={"path": rules_path, "revision": revision.revision,
                                                  "policy": revision.policy, "level": judge.level, "role": "user",
                                                  "drop_rules_judged": True, "marker_ids": judge.marker_ids}, jobs=jobs)


def test_parts_folded_in_any_order_and_merged_give_the_report_of_one_ordered_pass(tmp_path):
    # one heartbeat shape all through the file: its first and last frames are the cluster's samples
    store = [memory(f"Epoch {i % 50}/50 loss=0.{i:04d} ETA {i % 60}m", day=1 + i % 9) for i in range(4000)]
    store[0]["memory"] = "EPOCH 0/50 LOSS=0.0000 ETA 0M"
    store += [memory(f"{FACTS[i % 6]} (case {i})", policy="p-new", day=2 + i % 5) for i in range(3000)]
    store.append(memory("Epoch 49/50 loss=0.9999 ETA 0m", day=9))
    from gate.audit.sources import FileChunk, read_export

    export = write_jsonl(tmp_path / "e.jsonl", store)
    r = rules(tmp_path)
    parts = list(read_export(export))
    assert len(parts) > 4 and all(isinstance(p, FileChunk) for p in parts)
    ordered = _audit_parts(parts, r, 1)
    top = ordered["clusters"][0]
    assert top["size"] == 4001 and top["samples"][:2] == ["EPOCH 0/50 LOSS=0.0000 ETA 0M",
                                                           "Epoch 49/50 loss=0.9999 ETA 0m"]
    for jobs in (1, 2):
        assert _audit_parts(parts[::-1], r, jobs) == ordered
        assert _audit_parts(parts[1::2] + parts[0::2], r, jobs) == ordered


def test_a_worker_that_dies_ends_the_audit_with_a_one_line_error_instead_of_a_hang(tmp_path):
    # A worker killed mid-part (the kernel's OOM killer, a kill -9) must not leave the audit
    # waiting forever for a part no process will finish. The kill is real: SIGKILL, sent by
    # the worker to itself when it judges one marked memory.
    import os
    import signal
    import time

    from gate.audit.judge import Judge
    from gate.audit.run import AuditError, audit
    from gate.audit.sources import read_export
    from gate.engine.cache import load_compiled_revision

    class DiesOnMark(Judge):
        def markers(self, text):
            if "KILL-THIS-WORKER" in text and os.getpid() != parent:
                os.kill(os.getpid(), signal.SIGKILL)
            return super().markers(text)

    parent = os.getpid()
    store = [memory(f"{FACTS[i % 6]} (case {i})") for i in range(6000)]
    store[4500]["memory"] = "KILL-THIS-WORKER"
    export = write_jsonl(tmp_path / "e.jsonl", store)
    revision, _ = load_compiled_revision(rules(tmp_path))
    parts = list(read_export(export))
    assert len(parts) > 2
    started = time.monotonic()
    with pytest.raises(AuditError, match="a worker process died"):
        audit(parts, DiesOnMark(revision), source="x", rules={}, jobs=2)
    assert time.monotonic() - started < 60


def test_a_store_of_json_objects_goes_through_the_same_fold_in_any_order(tmp_path):
    from gate.audit.sources import Batch, read_export

    store = [memory(HEARTBEATS[i % 5].replace("3", str(i % 9)), policy=f"p{i % 3}", day=1 + i % 20)
             for i in range(600)] + [memory(f"{FACTS[i % 6]} (case {i})") for i in range(600)]
    batches = [Batch(i, [(f"x: [{j}]", m) for j, m in enumerate(store[k:k + 100], k)])
               for i, k in enumerate(range(0, len(store), 100))]
    r = rules(tmp_path)
    ordered = _audit_parts(batches, r, 1)
    assert ordered["memories"] == 1200
    assert _audit_parts(batches[::-1], r, 2) == ordered
    assert _audit_parts(read_export(write_jsonl(tmp_path / "e.jsonl", store)), r, 2) == ordered


@pytest.mark.parametrize("newline", ["\n", "\r\n"])
def test_a_bad_line_deep_in_a_large_export_is_named_by_its_line(tmp_path, newline):
    lines = [json.dumps(memory(f"{FACTS[i % 6]} (case {i})")) for i in range(3000)]
    bad = list(lines)
    bad[2344] = "not json"
    path = tmp_path / "e.jsonl"
    path.write_bytes(("\ufeff" + newline.join(bad) + newline).encode("utf-8"))
    code, _, err = run(str(path), "--rules", rules(tmp_path), "--jobs", "2")
    assert code == 2 and "e.jsonl:2345: not JSON" in err and len(err.strip().splitlines()) == 1
    raw = (newline.join(lines) + newline).encode("utf-8")
    cut = raw.index(b"(case 1776)")
    path.write_bytes(raw[:cut] + b"\xff" + raw[cut:])
    code, _, err = run(str(path), "--rules", rules(tmp_path), "--jobs", "2")
    assert code == 2 and "e.jsonl:1777: not UTF-8 text" in err and "Traceback" not in err
    bad = list(lines)
    bad[2998] = json.dumps({"results": [memory(FACTS[0]), {"memory": 7}]})
    path.write_bytes((newline.join(bad) + newline).encode("utf-8"))
    code, _, err = run(str(path), "--rules", rules(tmp_path), "--jobs", "2")
    assert code == 2 and "e.jsonl:2999: results[1]: field 'memory'" in err


def test_a_byte_order_mark_and_crlf_lines_read_as_plain_lines(tmp_path):
    store = [memory(f"{FACTS[i % 6]} (case {i})", day=1 + i % 3) for i in range(2000)]
    store += [memory(HEARTBEATS[i % 5]) for i in range(50)]
    plain = write_jsonl(tmp_path / "plain.jsonl", store)
    crlf = tmp_path / "crlf.jsonl"
    crlf.write_bytes(b"\xef\xbb\xbf" + "\r\n\r\n".join(json.dumps(m) for m in store).encode("utf-8") + b"\r\n")
    r = rules(tmp_path)
    _, one, _ = run_json(plain, "--rules", r, "--jobs", "2")
    _, two, _ = run_json(str(crlf), "--rules", r, "--jobs", "2")
    assert one["memories"] == 2050
    assert {k: v for k, v in one.items() if k != "source"} == {k: v for k, v in two.items() if k != "source"}


@pytest.mark.parametrize("content, expected", [
    ('{"memory": "ok fact here"}\nnot json\n', "e.jsonl:2: not JSON"),
    ('{"memory": 12}\n', "e.jsonl:1: field 'memory': expected the memory's text as a string"),
    ('{"text": "no memory field"}\n', "e.jsonl:1: field 'memory'"),
    ('{"memory": "x y z", "metadata": "v2"}\n', "e.jsonl:1: field 'metadata': expected an object"),
    ('{"memory": "x y z", "categories": "decision"}\n', "e.jsonl:1: field 'categories': expected a list"),
])
def test_bad_records_fail_with_file_line_and_field(tmp_path, content, expected):
    path = tmp_path / "e.jsonl"
    path.write_text(content)
    code, out, err = run(str(path), "--rules", rules(tmp_path), "--jobs", "1")
    assert code == 2
    assert expected in err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err


def test_a_missing_export_and_a_bad_json_document_are_one_line_errors(tmp_path):
    code, _, err = run(str(tmp_path / "nope.jsonl"), "--rules", rules(tmp_path))
    assert code == 2 and "nope.jsonl: no such file" in err
    bad = tmp_path / "bad.json"
    bad.write_text('[{"memory": "a b c"},\n {"memory": }]')
    code, _, err = run(str(bad), "--rules", rules(tmp_path))
    assert code == 2 and "bad.json:2:" in err and "not JSON" in err


# -- --check ----------------------------------------------------------------------------------

def test_check_fails_above_a_ceiling_and_passes_under_it(tmp_path):
    export = write_jsonl(tmp_path / "e.jsonl", _two_policy_store())  # near-dup 9/15, noise 9/15
    code, out, err = run(export, "--rules", rules(tmp_path, dup=0.5, noise=0.7, name="strict.yaml"), "--check")
    assert code == 1
    assert "check: FAILED" in out
    assert "near-duplicate share 60.0% (9 of 15 memories) is above the ceiling 50.0%" in out
    assert "noise share" not in out.split("check: FAILED")[1]
    code, out, _ = run(export, "--rules", rules(tmp_path, dup=0.6, noise=0.6, name="loose.yaml"), "--check")
    assert code == 0 and "check: PASSED" in out  # a ceiling is reached, not exceeded
    code, report, _ = run_json(export, "--rules", rules(tmp_path, dup=0.1, noise=0.1, name="t.yaml"), "--check")
    assert code == 1 and len(report["check"]["failures"]) == 2


def test_check_without_a_ceiling_says_which_key_is_missing(tmp_path):
    export = write_jsonl(tmp_path / "e.jsonl", _two_policy_store())
    path = rules(tmp_path, dup=0.9, noise=None, name="half.yaml")
    code, out, err = run(export, "--rules", path, "--check")
    assert code == 2
    assert err.strip() == (f"{path}: thresholds.audit_max_noise_share is not set; --check needs it "
                           "(the ceiling on the store's noise share, e.g. audit_max_noise_share: 0.10)")
    code, _, _ = run(export, "--rules", path)  # without --check the audit simply reports
    assert code == 0


def test_the_ceilings_are_in_the_schema_and_gate_eval_does_not_treat_them_as_floors(tmp_path):
    from gate.language.loader import load_revision

    rev = load_revision(rules(tmp_path, dup=0.1, noise=0.05))
    assert rev.thresholds["audit_max_near_duplicate_share"] == 0.1
    from gate.evaluation import metrics

    assert metrics.check_floors({}, rev.thresholds) == [
        "hard_drop_recall: not measured (no fixtures in its denominator), floor 0.95",
        "extract_recall: not measured (no fixtures in its denominator), floor 0.8"]
    bad = tmp_path / "bad.yaml"
    bad.write_text((tmp_path / "rules.yaml").read_text().replace("audit_max_noise_share: 0.05",
                                                                  "audit_max_noise_share: 1.5"))
    from gate.language.errors import GateError

    with pytest.raises(GateError):
        load_revision(str(bad))


def test_the_shipped_sample_export_prints_its_summary():
    code, out, err = run("examples/audit/sample-export.jsonl", "--rules", "rules/v2.3.yaml", "--top", "3")
    assert code == 0, err
    assert "near-duplicates" in out and "by policy" in out
    assert "v2.2+" in out and "v2.3+" in out and "(these rules)" in out


def test_a_policy_is_traced_to_the_rules_file_with_that_content(tmp_path):
    from gate.language.loader import load_revision

    path = rules(tmp_path, name="t1.0.yaml")  # the tiny revision is named t1.0
    policy = load_revision(path).policy
    assert policy.startswith("t1.0+")
    store = [memory(FACTS[0], policy=policy), memory(FACTS[1], policy="t1.0+000000000000"),
             memory(FACTS[2], policy="v9.9+0123456789ab")]
    export = write_jsonl(tmp_path / "e.jsonl", store)
    _, report, _ = run_json(export, "--rules", path, "--jobs", "1")
    rows = {p["policy"]: p for p in report["policies"]}
    assert rows[policy]["revision"] == path and rows[policy]["current"] is True
    assert rows["t1.0+000000000000"]["revision"] is None  # same name, other content: an edited file
    assert rows["v9.9+0123456789ab"]["revision"] is None and not rows["v9.9+0123456789ab"]["current"]


def test_check_on_a_store_with_no_memories_fails(tmp_path):
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    code, out, _ = run(str(empty), "--rules", rules(tmp_path), "--check")
    assert code == 1 and "no memories were read" in out
    code, out, _ = run(str(empty), "--rules", rules(tmp_path))
    assert code == 0 and "0 memories" in out


def test_gate_classify_does_not_import_the_audit(tmp_path):
    import subprocess
    import sys

    code = ("import sys\nsys.argv = ['gate', 'classify', '--rules', sys.argv[1]]\n"
            "from gate.cli import main\n"
            "try:\n    main()\nexcept SystemExit:\n    pass\n"
            "print(sorted(m for m in sys.modules if m.startswith('gate.audit') or m == 'sqlite3'), file=sys.stderr)")
    result = subprocess.run([sys.executable, "-c", code, rules(tmp_path)], input='[{"role": "user", "content": "hi"}]',
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert result.stderr.strip().splitlines()[-1] == "[]"


def test_the_shape_shortcuts_equal_the_plain_passes(tmp_path):
    """shape() skips passes that cannot match and reads ASCII words without a regex; on generated
    memories, random text of the characters the passes look at (digits of other scripts too)
    and texts made for each shortcut, it gives what every pass in order gives."""
    import random
    import sys
    from pathlib import Path

    from gate.audit.shape import reference_shape

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))
    from audit_scale import generate

    path = tmp_path / "m.jsonl"
    generate(str(path), 3000, seed=11)
    texts = [json.loads(line)["memory"] for line in path.read_text().splitlines()]
    rng = random.Random(4)
    alphabet = "0123456789abcdefx:-/ .tz+@<>_~\u0663\u0664\u06f5\u0967\u00e9"
    texts += ["".join(rng.choice(alphabet) for _ in range(rng.randrange(1, 60))) for _ in range(20_000)]
    texts += ["job abcdefab-abcd-abcd-abcd-abcdefabcdef done", "job 550e8400-e29b-41d4-a716-446655440000 at 10:00",
              "\u0662\u0660\u0662\u0666-\u0661\u0661-\u0660\u0661 10:00", "build deadbeef42 failed", "0x1f at 12:30pm",
              "<div>ok</div> 3 <n> <n>", "a_b 12_000 c", "2026-11-01t10:00:00z ok"]
    assert [t for t in texts if shape(t) != reference_shape(t)] == []

"""`gate eval` end to end: real rules files, real fixture files, the real classifier."""

import json

import pytest
import yaml
from click.testing import CliRunner

from evalkit import rules_text
from gate.cli import main
from gate.evaluation.metrics import OFFLINE_RATIOS



SLOW_RULE = """
  - id: slow
    description: backtracks catastrophically, on purpose (the lookahead keeps it out of the exact set)
    scope: window
    role: any
    min_level: conservative
    when: {match: {pattern: '^(a|aa)+(?=b)', keywords: [aaaa]}}
    examples:
      match: ["aaaa"]
      no_match: ["b"]
"""


def write_rules(path, thresholds=None, extra_drop_rules=""):
    thresholds = {"hard_drop_recall": 0.5, "extract_recall": 0.5} if thresholds is None else thresholds
    text = rules_text(thresholds, extra_drop_rules)
    path.write_text(text)
    return str(path)


def fixture(id_, text, label, expect_type=None, role="user", tags=(), todo=None):
    entry = {"id": id_, "window": [{"role": role, "content": text}], "label": label, "expect_type": expect_type,
             "note": f"guards the {id_} case"}
    if tags:
        entry["tags"] = list(tags)
    if todo:
        entry["todo"] = todo
    return entry


GOOD = [
    fixture("hb-1", "Epoch 3/10 loss 0.41 ETA 5m", "drop", role="tool", tags=["heartbeat"]),
    fixture("hb-2", "Epoch 4/10 loss 0.39 ETA 4m", "drop", role="tool", tags=["heartbeat"]),
    fixture("narration", "Let me look at the failing test first.", "exclude"),
    fixture("pref", "I prefer small PRs", "extract", "preference"),
    fixture("dec", "We decided to use Postgres for billing.", "extract", "decision"),
]

# Every metric below 1.0: one fixture per way of being wrong.
BAD = [
    fixture("hb", "Epoch 3/10 loss 0.41 ETA 5m", "drop", role="tool"),
    fixture("luck", "Still running, will check again", "drop"),
    fixture("leak", "I prefer the progress bar at half width", "drop"),
    fixture("sent", "I prefer you push it yourself this once", "exclude"),
    fixture("held", "Let me look at the failing test", "exclude"),
    fixture("pref", "I prefer small PRs", "extract", "preference"),
    fixture("mistyped", "I prefer Postgres, so we decided on it", "extract", "decision"),
    fixture("skipped", "The report worker reads its settings once at startup", "extract", "insight"),
    fixture("harddrop", "Epoch 3 loss 0.41 is the baseline we keep", "extract", "insight"),
]


def write_fixtures(path, entries):
    path.write_text(yaml.safe_dump(entries, sort_keys=False))
    return str(path)


def run(*args):
    return CliRunner().invoke(main, ["eval", *args], catch_exceptions=False)


@pytest.fixture
def good(tmp_path):
    return write_rules(tmp_path / "rules.yaml"), write_fixtures(tmp_path / "fixtures.yaml", GOOD), tmp_path


def test_check_passes_when_every_floor_holds(good):
    rules, fixtures, tmp = good
    report = tmp / "report.json"
    result = run("--rules", rules, "--fixtures", fixtures, "--check", "--report", str(report))
    assert result.exit_code == 0, result.output
    assert "check at balanced: PASSED" in result.output
    data = json.loads(report.read_text())
    assert data["check"]["passed"] is True and data["check"]["failures"] == []
    assert data["scores"]["hard_drop_recall"] == 1.0 and data["scores"]["extract_recall"] == 1.0


@pytest.mark.parametrize("metric", OFFLINE_RATIOS)
def test_check_fails_for_each_floor(tmp_path, metric):
    rules = write_rules(tmp_path / "rules.yaml", {metric: 0.99})
    fixtures = write_fixtures(tmp_path / "fixtures.yaml", BAD)
    report = tmp_path / "report.json"
    result = run("--rules", rules, "--fixtures", fixtures, "--check", "--report", str(report))
    assert result.exit_code == 1, result.output
    failures = json.loads(report.read_text())["check"]["failures"]
    assert len(failures) == 1 and failures[0].startswith(f"{metric}: ")
    assert "below the floor 0.99" in failures[0]
    # Without --check the same run scores, reports the failure, and exits 0.
    unchecked = run("--rules", rules, "--fixtures", fixtures, "--report", str(report))
    assert unchecked.exit_code == 0
    assert "check at balanced: FAILED" in unchecked.output


def test_bad_fixture_scores_hand_computed(tmp_path):
    rules = write_rules(tmp_path / "rules.yaml")
    fixtures = write_fixtures(tmp_path / "fixtures.yaml", BAD)
    report = tmp_path / "report.json"
    run("--rules", rules, "--fixtures", fixtures, "--report", str(report))
    scores = json.loads(report.read_text())["scores"]
    assert scores["fractions"] == {
        "hard_drop_recall": [2, 3], "hard_drop_explicit": [1, 3], "hard_drop_precision": [1, 2],
        "extract_recall": [2, 4], "flag_precision": [2, 4], "exclude_suppressed_early": [1, 2],
        "type_accuracy": [1, 2], "type_coverage": [2, 4], "types_produced": [1, 3],
    }
    assert scores["extract_skipped"] == 1 and scores["extract_hard_dropped"] == 1


def test_scorecard_lists_misses_with_their_rule_and_noise_held_by_luck(tmp_path):
    rules = write_rules(tmp_path / "rules.yaml")
    fixtures = write_fixtures(tmp_path / "fixtures.yaml", BAD)
    out = run("--rules", rules, "--fixtures", fixtures, "--report", str(tmp_path / "r.json")).output
    assert "misses (4)" in out
    assert "harddrop expected insight: dropped by heartbeat" in out
    assert "skipped expected insight: skipped, no rule decided" in out
    assert "leak: flagged preference by prefer" in out
    assert "mistyped expected decision: flagged preference by prefer" in out
    assert "noise held back only by luck (1)" in out
    luck_line = out.split("noise held back only by luck (1)")[1].splitlines()[1]
    assert luck_line.strip().startswith("luck")
    assert "exclude windows sent to the platform (1)" in out
    # Misses come before luck, hard drops first among misses.
    assert out.index("harddrop expected") < out.index("skipped expected") < out.index("leak: flagged")


def test_floor_on_an_unmeasured_metric_fails(tmp_path):
    rules = write_rules(tmp_path / "rules.yaml", {"hard_drop_recall": 0.95})
    fixtures = write_fixtures(tmp_path / "fixtures.yaml", [e for e in GOOD if e["label"] == "extract"])
    report = tmp_path / "report.json"
    result = run("--rules", rules, "--fixtures", fixtures, "--check", "--report", str(report))
    assert result.exit_code == 1
    data = json.loads(report.read_text())
    assert data["scores"]["hard_drop_recall"] is None
    assert data["check"]["failures"][0].startswith("hard_drop_recall: not measured")
    assert "not measured" in result.output


def test_report_file_contents(good):
    rules, fixtures, tmp = good
    report = tmp / "report.json"
    assert run("--rules", rules, "--fixtures", fixtures, "--report", str(report)).exit_code == 0
    data = json.loads(report.read_text())
    for key in ("policy", "rules", "level", "scores", "rows", "thresholds", "check", "fixture_counts", "generated_at"):
        assert key in data
    policy = CliRunner().invoke(main, ["hash", rules]).output.strip()
    assert data["policy"] == policy
    assert data["rules"] == rules and data["level"] == "balanced"
    assert data["thresholds"] == {"hard_drop_recall": 0.5, "extract_recall": 0.5}
    assert data["fixture_counts"]["total"] == 5 and data["fixture_counts"]["labels"]["drop"] == 2
    assert data["generated_at"].endswith("Z")
    rows = {row["id"]: row for row in data["rows"]}
    assert list(rows) == [e["id"] for e in GOOD]
    assert rows["hb-1"]["decision"] == "drop" and rows["hb-1"]["rule"] == "heartbeat"
    assert rows["dec"] == {**rows["dec"], "label": "extract", "expect_type": "decision", "decision": "flag",
                           "type": "decision", "rule": "decided", "outcome": "flagged"}
    assert any(line.startswith("signal decided") for line in rows["dec"]["trace"])
    for row in rows.values():
        assert {"id", "label", "expect_type", "decision", "type", "rule", "trace"} <= set(row)


def test_format_json_prints_the_report(good):
    rules, fixtures, tmp = good
    report = tmp / "report.json"
    result = run("--rules", rules, "--fixtures", fixtures, "--format", "json", "--report", str(report))
    assert result.exit_code == 0
    assert json.loads(result.stdout) == json.loads(report.read_text())


def test_format_markdown_is_a_pull_request_table(tmp_path):
    rules = write_rules(tmp_path / "rules.yaml", {"extract_recall": 0.9})
    fixtures = write_fixtures(tmp_path / "fixtures.yaml", BAD)
    result = run("--rules", rules, "--fixtures", fixtures, "--format", "markdown", "--check",
                 "--report", str(tmp_path / "r.json"))
    assert result.exit_code == 1
    out = result.stdout
    assert out.startswith(f"### gate eval: `{rules}` — check **FAILED**")
    assert "| metric | value | fraction | floor |  |" in out
    assert "| extract_recall | 0.500 | 2/4 | 0.9 | **FAIL** |" in out
    assert "| type_accuracy | 0.500 | 1/2 |  |  |" in out
    assert "<details><summary>misses and luck</summary>" in out
    assert "| `harddrop` | extract | insight | hard_dropped | drop | heartbeat |" in out
    assert "- extract_recall: 0.500 (2/4) is below the floor 0.9" in out


def test_sweep_scores_every_level_side_by_side(good):
    rules, fixtures, tmp = good
    report = tmp / "report.json"
    result = run("--rules", rules, "--fixtures", fixtures, "--sweep", "--check", "--report", str(report))
    # At conservative nothing reaches the flag threshold, but --check applies at the default level.
    assert result.exit_code == 0, result.output
    header = next(line for line in result.output.splitlines() if line.startswith("metric "))
    assert header.split() == ["metric", "conservative", "balanced", "aggressive"]
    recall = next(line for line in result.output.splitlines() if line.startswith("extract_recall *"))
    assert recall.split()[2:] == ["0.000", "1.000", "1.000"]
    data = json.loads(report.read_text())
    assert list(data["sweep"]) == ["conservative", "balanced", "aggressive"]
    assert data["sweep"]["conservative"]["check"]["passed"] is False
    assert data["sweep"]["conservative"]["scores"]["type_accuracy"] is None
    assert data["level"] == "balanced" and data["check"]["passed"] is True
    md = run("--rules", rules, "--fixtures", fixtures, "--sweep", "--format", "markdown", "--report", str(report))
    assert "| metric | conservative | balanced | aggressive |" in md.stdout


def test_sweep_and_level_are_exclusive(good):
    rules, fixtures, _ = good
    result = run("--rules", rules, "--fixtures", fixtures, "--sweep", "--level", "balanced")
    assert result.exit_code == 2
    assert "--sweep" in result.output


def test_level_that_does_not_exist(good):
    rules, fixtures, tmp = good
    result = run("--rules", rules, "--fixtures", fixtures, "--level", "turbo", "--report", str(tmp / "r.json"))
    assert result.exit_code == 2
    assert "level 'turbo' is not a level of this revision (levels: conservative, balanced, aggressive)" in result.output


def test_level_changes_the_decisions(good):
    rules, fixtures, tmp = good
    report = tmp / "report.json"
    run("--rules", rules, "--fixtures", fixtures, "--level", "conservative", "--report", str(report))
    data = json.loads(report.read_text())
    assert data["level"] == "conservative"
    assert data["scores"]["extract_recall"] == 0.0


def test_rules_that_do_not_load_cannot_measure(tmp_path):
    rules = tmp_path / "rules.yaml"
    write_rules(rules)
    rules.write_text(rules.read_text().replace("min_level: balanced", "min_level: turbo"))
    fixtures = write_fixtures(tmp_path / "fixtures.yaml", GOOD)
    report = tmp_path / "report.json"
    for extra in ((), ("--check",)):
        result = run("--rules", str(rules), "--fixtures", fixtures, "--report", str(report), *extra)
        assert result.exit_code == 2, result.output
        assert "NOT MEASURED" in result.output
        data = json.loads(report.read_text())
        assert data["measured"] is False and data["check"]["passed"] is False
        assert data["scores"] == {} and data["rows"] == []
        (item,) = data["unmeasured"]
        assert item["what"] == "rules"
        assert any(f"{rules}:" in why and "min_level must be one of" in why for why in item["why"])
        assert data["fixture_counts"]["total"] == 5  # the fixtures did load: say so
        assert data["check"]["failures"] == ["cannot measure: rules did not load (1 problem(s))"]


def test_fixtures_that_do_not_validate_cannot_measure(tmp_path):
    rules = write_rules(tmp_path / "rules.yaml")
    entries = [dict(e) for e in GOOD]
    del entries[2]["note"]
    fixtures = write_fixtures(tmp_path / "fixtures.yaml", entries)
    report = tmp_path / "report.json"
    result = run("--rules", rules, "--fixtures", fixtures, "--check", "--report", str(report))
    assert result.exit_code == 2
    data = json.loads(report.read_text())
    (item,) = data["unmeasured"]
    assert item["what"] == "fixtures"
    assert any(why.startswith(f"{fixtures}:") and "narration" in why for why in item["why"])
    assert data["policy"]  # the rules did load
    md = run("--rules", rules, "--fixtures", fixtures, "--format", "markdown", "--report", str(report))
    assert md.exit_code == 2 and "**Not measured**" in md.stdout


def test_missing_rules_and_fixtures_are_both_reported(tmp_path):
    report = tmp_path / "report.json"
    result = run("--rules", str(tmp_path / "nope.yaml"), "--fixtures", str(tmp_path / "none"), "--check",
                 "--report", str(report))
    assert result.exit_code == 2
    data = json.loads(report.read_text())
    assert [u["what"] for u in data["unmeasured"]] == ["rules", "fixtures"]
    assert "no such file" in data["unmeasured"][0]["why"][0]


def test_a_fixture_that_breaks_the_classifier_is_a_finding(tmp_path):
    rules = write_rules(tmp_path / "rules.yaml", extra_drop_rules=SLOW_RULE)
    fixtures = write_fixtures(tmp_path / "fixtures.yaml", GOOD + [fixture("as", "a" * 5000 + "!", "exclude")])
    report = tmp_path / "report.json"
    result = run("--rules", rules, "--fixtures", fixtures, "--check", "--report", str(report))
    assert result.exit_code == 1
    assert "findings (1): fixtures that made the classifier fail" in result.output
    data = json.loads(report.read_text())
    (finding,) = data["findings"]
    assert finding["id"] == "as" and "timeout in rule 'slow'" in finding["error"]
    assert data["rows"][-1]["error"] == finding["error"]
    assert any("made the classifier fail" in f for f in data["check"]["failures"])
    assert data["scores"]["extract_recall"] == 1.0  # the rest is still measured


def test_todo_fixtures_are_reported_not_gated_unless_strict(good):
    rules, _, tmp = good
    entries = GOOD + [
        fixture("gap", "The report worker reads its settings once at startup", "extract", "insight",
                todo="no signal for settings-restart facts yet"),
        fixture("closed", "I prefer tabs", "extract", "preference", todo="was missed by v0"),
        fixture("lucky", "Reindex at 41%: 2,050 of 5,000 pages", "drop", None,
                todo="no drop rule knows reindex frames; skipped only because nothing flags them"),
    ]
    rules = write_rules(tmp / "rules.yaml", {"extract_recall": 1.0})
    fixtures = write_fixtures(tmp / "fixtures.yaml", entries)
    report = tmp / "report.json"
    result = run("--rules", rules, "--fixtures", fixtures, "--check", "--report", str(report))
    assert result.exit_code == 0, result.output
    data = json.loads(report.read_text())
    assert data["scores"]["fractions"]["extract_recall"] == [2, 2]
    assert data["fixture_counts"]["scored"] == 5 and data["fixture_counts"]["todo"] == 3
    # noise held back only by luck keeps its todo open: no rule drops it yet
    assert [(t["id"], t["outcome"]) for t in data["todo"]["open"]] == [("gap", "skipped"), ("lucky", "held_by_luck")]
    assert [t["id"] for t in data["todo"]["closed"]] == ["closed"]
    assert {r["id"]: r.get("todo") for r in data["rows"]}["gap"] == "no signal for settings-restart facts yet"
    assert "todo: 3 known gap(s), not gated" in result.output
    assert "remove their todo mark" in result.output
    assert "misses (0)" in result.output  # a known gap is not a miss...

    strict = run("--rules", rules, "--fixtures", fixtures, "--check", "--strict", "--report", str(report))
    assert strict.exit_code == 1  # ...unless --strict gates it
    data = json.loads(report.read_text())
    assert data["scores"]["fractions"]["extract_recall"] == [3, 4]
    assert data["strict"] is True and data["todo"]["gated"] is True
    assert "misses (1)" in strict.output


def test_defaults_newest_rules_fixtures_folder_and_last_report(tmp_path, monkeypatch):
    (tmp_path / "rules").mkdir()
    write_rules(tmp_path / "rules" / "v2.9.yaml", {"extract_recall": 0.99})
    write_rules(tmp_path / "rules" / "v2.10.yaml")
    (tmp_path / "fixtures").mkdir()
    write_fixtures(tmp_path / "fixtures" / "a.yaml", GOOD[:3])
    write_fixtures(tmp_path / "fixtures" / "b.yaml", GOOD[3:])
    monkeypatch.chdir(tmp_path)
    result = run("--check")
    assert result.exit_code == 0, result.output
    data = json.loads((tmp_path / "last_report.json").read_text())
    assert data["rules"].endswith("v2.10.yaml")
    assert data["fixture_counts"]["total"] == 5


def test_no_rules_folder_cannot_measure(tmp_path, monkeypatch):
    write_fixtures(tmp_path / "f.yaml", GOOD)
    monkeypatch.chdir(tmp_path)
    result = run("--fixtures", "f.yaml", "--check")
    assert result.exit_code == 2
    data = json.loads((tmp_path / "last_report.json").read_text())
    assert "no rules file found" in data["unmeasured"][0]["why"][0]


def test_rules_from_git_spec_errors_are_one_line(good):
    rules, fixtures, tmp = good
    report = tmp / "r.json"
    result = run("--rules", "no-such-rev-xyz:rules.yaml", "--fixtures", fixtures, "--report", str(report))
    assert result.exit_code == 2
    why = json.loads(report.read_text())["unmeasured"][0]["why"]
    assert len(why) == 1 and why[0].startswith("no-such-rev-xyz:rules.yaml: ")


def test_live_options_need_live(good):
    rules, fixtures, tmp = good
    result = run("--rules", rules, "--fixtures", fixtures, "--project-id", "proj_x", "--report", str(tmp / "r.json"))
    assert result.exit_code == 2
    assert "--project-id only apply with --live" in result.output


def test_fixtures_option_takes_several_paths(tmp_path):
    rules = write_rules(tmp_path / "rules.yaml")
    first = write_fixtures(tmp_path / "a.yaml", GOOD[:2])
    (tmp_path / "more").mkdir()
    write_fixtures(tmp_path / "more" / "b.yaml", GOOD[2:])
    report = tmp_path / "report.json"
    result = run("--rules", rules, "--fixtures", first, str(tmp_path / "more"), "--report", str(report))
    assert result.exit_code == 0, result.output
    assert json.loads(report.read_text())["fixture_counts"]["total"] == 5
    repeated = run("--rules", rules, "--fixtures", first, "--fixtures", str(tmp_path / "more"), "--report", str(report))
    assert repeated.exit_code == 0
    assert json.loads(report.read_text())["fixture_counts"]["total"] == 5

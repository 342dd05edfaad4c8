"""`gate diff`: two real revisions, real fixtures, the real classifier, and git."""

import json
import subprocess

import pytest
import yaml
from click.testing import CliRunner

from evalkit import rules_text
from gate.cli import main

RULES = rules_text({"hard_drop_recall": 0.5, "extract_recall": 0.3})

DECIDED = RULES[RULES.index("  - id: decided"):RULES.index("flag:")]
LIKE = """  - id: like
    description: likes
    role: user
    min_level: conservative
    weights: {preference: 4}
    when: {match: {pattern: '\\bi like\\b', keywords: [like]}}
    examples:
      match: ["I like rebase"]
      no_match: ["looks like rain"]
"""


def fixture(id_, text, label, expect_type=None, role="user"):
    return {"id": id_, "window": [{"role": role, "content": text}], "label": label, "expect_type": expect_type,
            "note": f"guards the {id_} case"}


FIXTURES = [
    fixture("like", "I like rebase over merge", "extract", "preference"),
    fixture("hb", "Epoch 3/10 loss 0.41 ETA 5m", "drop", role="tool"),
    fixture("epoch-only", "Epoch 7/10", "drop", role="tool"),
    fixture("narration", "Let me look at the failing test first.", "exclude"),
    fixture("pref", "I prefer small PRs", "extract", "preference"),
    fixture("dec", "We decided to use Postgres for billing.", "extract", "decision"),
]


@pytest.fixture
def setup(tmp_path):
    fixtures = tmp_path / "fixtures.yaml"
    fixtures.write_text(yaml.safe_dump(FIXTURES, sort_keys=False))
    old = tmp_path / "old.yaml"
    old.write_text(RULES)

    def new(text, name="new.yaml"):
        path = tmp_path / name
        path.write_text(text.replace("revision: t1", "revision: t2"))
        return str(path)

    return str(old), new, str(fixtures), tmp_path


def diff(*args):
    return CliRunner().invoke(main, ["diff", *args], catch_exceptions=False)


def diff_json(old, new, fixtures, *args):
    result = diff(old, new, "--fixtures", fixtures, "--format", "json", *args)
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def change(data, id_):
    (found,) = [c for c in data["rule_changes"] if c["id"] == id_]
    return found


def test_identical_revisions_have_no_changes(setup):
    old, _, fixtures, _ = setup
    result = diff(old, old, "--fixtures", fixtures, "--check")
    assert result.exit_code == 0, result.output
    assert "fixtures whose decision or type changed: 0" in result.output
    assert "rules: verdict NONE (no behaviour change)" in result.output
    data = diff_json(old, old, fixtures)
    assert data["fixtures"] == [] and data["rule_changes"] == [] and data["verdict"] == "none"
    assert all(m["delta"] in (0, None) and not m["regressed"] for m in data["metrics"])
    assert data["check"] == {"passed": True, "failures": []}


def test_documentation_only_edit_is_no_behaviour_change(setup):
    old, new, fixtures, _ = setup
    edited = RULES.replace("description: prefers", "description: a standing preference, stated by the user")
    data = diff_json(old, new(edited), fixtures)
    assert data["verdict"] == "none" and data["rule_changes"] == [] and data["fixtures"] == []


def test_removed_rule_is_breaking_and_its_fixture_regresses(setup):
    old, new, fixtures, _ = setup
    data = diff_json(old, new(RULES.replace(DECIDED, "")), fixtures)
    assert data["verdict"] == "breaking"
    assert change(data, "decided") == {"change": "removed", "id": "decided", "class": "breaking",
                                       "detail": "signal removed"}
    (row,) = data["fixtures"]
    assert row["id"] == "dec" and row["change"] == "regression" and row["label"] == "extract"
    assert row["old"] == {"decision": "flag", "type": "decision", "rule": "decided", "outcome": "flagged"}
    assert row["new"] == {"decision": "skip", "type": None, "rule": None, "outcome": "skipped"}
    recall = next(m for m in data["metrics"] if m["metric"] == "extract_recall")
    assert recall == {"metric": "extract_recall", "old": pytest.approx(2 / 3), "new": pytest.approx(1 / 3),
                      "delta": pytest.approx(-1 / 3), "gated": True, "floor": 0.3, "regressed": True}
    assert data["check"]["failures"] == ["extract_recall regressed: 0.667 -> 0.333"]


def test_check_fails_on_a_regression_above_the_floor(setup):
    old, new, fixtures, _ = setup
    path = new(RULES.replace(DECIDED, ""))
    assert diff(old, path, "--fixtures", fixtures).exit_code == 0
    result = diff(old, path, "--fixtures", fixtures, "--check")
    assert result.exit_code == 1
    assert "extract_recall regressed: 0.667 -> 0.333" in result.output
    assert "NEW extract_recall" not in result.output  # 1/3 still meets the floor 0.3
    # An ungated metric that gets worse is marked but does not fail the check.
    skipped = next(line for line in result.output.splitlines() if line.startswith("extract_skipped"))
    assert skipped.split() == ["extract_skipped", "1", "2", "+1", "REGRESSED"]
    assert "extract_skipped" not in result.output.split("check: FAILED")[1]


def test_check_fails_when_new_misses_a_floor(setup):
    old, new, fixtures, _ = setup
    path = new(RULES.replace("extract_recall: 0.3}", "extract_recall: 0.9}").replace(DECIDED, ""))
    result = diff(old, path, "--fixtures", fixtures, "--check")
    assert result.exit_code == 1
    assert "NEW extract_recall: 0.333 (1/3) is below the floor 0.9" in result.output


def test_added_rule_is_minor_and_regressions_come_first(setup):
    old, new, fixtures, _ = setup
    text = RULES.replace(DECIDED, LIKE)
    data = diff_json(old, new(text), fixtures)
    assert data["verdict"] == "breaking"  # 'decided' removed outranks 'like' added
    assert change(data, "like")["class"] == "minor" and change(data, "like")["change"] == "added"
    # 'like' comes first in the fixture file, but the regression is listed first.
    assert [(r["id"], r["change"]) for r in data["fixtures"]] == [("dec", "regression"), ("like", "improvement")]
    assert (data["regressions"], data["improvements"]) == (1, 1)

    only_added = diff_json(old, new(RULES.replace("flag:", LIKE + "flag:"), "added.yaml"), fixtures)
    assert only_added["verdict"] == "minor"
    assert only_added["check"]["passed"] is True


def test_vocabulary_edit_is_a_patch(setup):
    old, new, fixtures, _ = setup
    data = diff_json(old, new(RULES.replace("terms: [epoch, eta, loss]", "terms: [epoch, eta, loss, step]")), fixtures)
    assert data["verdict"] == "patch"
    assert change(data, "hb_terms") == {"change": "vocabulary", "id": "hb_terms", "class": "patch",
                                        "detail": "terms + step"}
    assert data["fixtures"] == []


def test_vocabulary_edit_that_makes_a_rule_match_less_is_breaking(setup):
    old, new, fixtures, _ = setup
    data = diff_json(old, new(RULES.replace("terms: [epoch, eta, loss]", "terms: [eta, loss]")), fixtures)
    assert data["verdict"] == "breaking"
    heartbeat = change(data, "heartbeat")
    assert heartbeat["class"] == "breaking"
    assert "through hb_terms" in heartbeat["detail"] and "fixture epoch-only" in heartbeat["detail"]
    assert change(data, "hb_terms")["class"] == "patch"
    assert [(r["id"], r["change"]) for r in data["fixtures"]] == [("epoch-only", "regression")]


def test_raised_min_level_is_breaking(setup):
    old, new, fixtures, _ = setup
    text = RULES.replace("    min_level: conservative\n    when:\n      line_share",
                         "    min_level: aggressive\n    when:\n      line_share")
    data = diff_json(old, new(text), fixtures)
    heartbeat = change(data, "heartbeat")
    assert heartbeat["class"] == "breaking"
    assert "min_level raised conservative -> aggressive" in heartbeat["detail"]


def test_raised_flag_threshold_is_breaking(setup):
    old, new, fixtures, _ = setup
    data = diff_json(old, new(RULES.replace("balanced: 3,", "balanced: 5,")), fixtures)
    assert change(data, "balanced") == {"change": "flag_threshold", "id": "balanced", "class": "breaking",
                                        "detail": "flag threshold at balanced raised 3 -> 5 (flags less)"}
    assert [r["id"] for r in data["fixtures"]] == ["pref", "dec"]
    assert data["regressions"] == 2


def test_narrowed_condition_is_breaking_broadened_is_minor(setup):
    old, new, fixtures, _ = setup
    narrowed = diff_json(old, new(RULES.replace(r"'\bi prefer\b'", r"'\bi strongly prefer\b'")), fixtures)
    prefer = change(narrowed, "prefer")
    assert prefer["class"] == "breaking"
    assert "no longer matches 2 inputs it matched" in prefer["detail"]
    assert "example 'I prefer small PRs'" in prefer["detail"] and "fixture pref" in prefer["detail"]

    broadened = diff_json(old, new(RULES.replace(r"'\bi prefer\b', keywords: [prefer]",
                                                 r"'\bi (?:prefer|like)\b', keywords: [prefer, like]"), "b.yaml"),
                          fixtures)
    prefer = change(broadened, "prefer")
    assert prefer["class"] == "minor" and "now matches 1 input it did not (fixture like)" in prefer["detail"]
    assert broadened["verdict"] == "minor"


def test_text_output(setup):
    old, new, fixtures, _ = setup
    out = diff(old, new(RULES.replace(DECIDED, LIKE)), "--fixtures", fixtures).output
    assert out.startswith("gate diff\n  OLD  " + old)
    assert "extract_recall *" in out
    lines = out.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("fixtures whose decision or type changed: 2"))
    assert lines[start + 1].split() == ["change", "fixture", "label", "expected", "OLD", "NEW"]
    assert lines[start + 2].split()[:3] == ["regression", "dec", "extract"]
    assert "flag decision (decided)" in lines[start + 2]
    assert "rules: verdict BREAKING" in out
    assert "  breaking  removed        decided: signal removed" in out


def test_markdown_output(setup):
    old, new, fixtures, _ = setup
    result = diff(old, new(RULES.replace(DECIDED, "")), "--fixtures", fixtures, "--format", "markdown")
    out = result.stdout
    assert out.startswith(f"### gate diff: `{old}` → `")
    lines = out.splitlines()
    verdict = next(i for i, line in enumerate(lines) if line.startswith("**Verdict: breaking** ("))
    assert lines[verdict].endswith("check **FAILED**:")
    assert not any(line.startswith("|") for line in lines[verdict:])  # the verdict comes after every table
    assert "| metric | OLD | NEW | delta | floor |  |" in out
    assert "| extract_recall \\* | 0.667 | 0.333 | -0.333 | 0.3 | **regressed** |" in out
    assert "| **regression** | `dec` | extract | decision | flag decision (decided) | skip |" in out
    assert "| breaking | removed | `decided` | signal removed |" in out


def test_level_option_scores_both_at_that_level(setup):
    old, new, fixtures, _ = setup
    data = diff_json(old, new(RULES.replace(DECIDED, "")), fixtures, "--level", "conservative")
    assert data["old"]["level"] == data["new"]["level"] == "conservative"
    assert data["fixtures"] == []  # 'decided' is not active at conservative: nothing changes there
    result = diff(old, old, "--fixtures", fixtures, "--level", "turbo")
    assert result.exit_code == 2 and "level 'turbo' is not a level" in result.output


def test_revision_that_does_not_load_is_a_located_error(setup):
    old, new, fixtures, _ = setup
    broken = new(RULES.replace("min_level: balanced", "min_level: turbo"))
    result = diff(old, broken, "--fixtures", fixtures)
    assert result.exit_code == 2
    assert f"{broken}:" in result.output and "min_level must be one of" in result.output


def git(cwd, *args):
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@example.com", *args], cwd=cwd, check=True,
                   capture_output=True)


def test_diff_from_git(setup, monkeypatch):
    _, _, fixtures, tmp = setup
    repo = tmp / "repo"
    (repo / "rules").mkdir(parents=True)
    rules = repo / "rules" / "v1.yaml"
    rules.write_text(RULES)
    git(repo, "init", "-q")
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "v1")
    rules.write_text(RULES.replace(DECIDED, LIKE))
    monkeypatch.chdir(repo)

    result = diff("HEAD:rules/v1.yaml", "rules/v1.yaml", "--fixtures", fixtures, "--format", "json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["old"]["rules"] == "HEAD:rules/v1.yaml"
    assert data["verdict"] == "breaking"
    assert [c["id"] for c in data["rule_changes"]] == ["decided", "like"]

    # Working tree vs the same committed file: no change.
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "v1 again")
    same = diff_json("HEAD:rules/v1.yaml", "rules/v1.yaml", fixtures)
    assert same["verdict"] == "none" and same["fixtures"] == []
    assert diff_json("HEAD~1:rules/v1.yaml", "HEAD:rules/v1.yaml", fixtures)["verdict"] == "breaking"


def test_git_spec_errors_are_one_clear_line(setup, monkeypatch):
    _, _, fixtures, tmp = setup
    repo = tmp / "repo"
    repo.mkdir()
    (repo / "r.yaml").write_text(RULES)
    git(repo, "init", "-q")
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "one")
    monkeypatch.chdir(repo)

    result = diff("HEAD~3:r.yaml", "r.yaml", "--fixtures", fixtures)
    assert result.exit_code == 2
    assert result.output.strip() == "HEAD~3:r.yaml: git has no revision 'HEAD~3'"
    result = diff("HEAD:nope.yaml", "r.yaml", "--fixtures", fixtures)
    assert result.exit_code == 2
    assert result.output.strip() == "HEAD:nope.yaml: 'nope.yaml' does not exist in git revision 'HEAD'"


def test_git_spec_outside_a_repository(setup, monkeypatch):
    old, _, fixtures, tmp = setup
    outside = tmp / "plain"
    outside.mkdir()
    monkeypatch.chdir(outside)
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp))
    result = diff("HEAD:r.yaml", old, "--fixtures", fixtures)
    assert result.exit_code == 2
    assert "not inside a git repository" in result.output


def test_fixtures_option_takes_several_paths(setup):
    old, new, _, tmp = setup
    a, b = tmp / "a.yaml", tmp / "b.yaml"
    a.write_text(yaml.safe_dump(FIXTURES[:3], sort_keys=False))
    b.write_text(yaml.safe_dump(FIXTURES[3:], sort_keys=False))
    data = diff_json(old, new(RULES.replace(DECIDED, "")), str(a), str(b))
    assert data["fixture_counts"]["total"] == 6
    assert [r["id"] for r in data["fixtures"]] == ["dec"]


def test_weight_changes(setup):
    old, new, fixtures, _ = setup
    lowered = diff_json(old, new(RULES.replace("weights: {decision: 4}", "weights: {decision: 2}")), fixtures)
    assert change(lowered, "decided")["class"] == "breaking"
    assert "weight decision 4 -> 2" in change(lowered, "decided")["detail"]
    raised = diff_json(old, new(RULES.replace("weights: {decision: 4}", "weights: {decision: 6}"), "r.yaml"), fixtures)
    assert change(raised, "decided")["class"] == "minor"

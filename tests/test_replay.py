"""gate replay: an archive of both formats through two revisions; flips; the candidate export."""

from __future__ import annotations

import json
import os
from collections import Counter, deque

import pytest
import yaml
from click.testing import CliRunner

from gate.cli import main
from gate.engine.cache import load_classifier
from gate.evaluation.fixtures import load_fixtures
from gate.transcripts import exchanges, read_transcript
from gate.transcripts.archive import transcript_files
from gate.transcripts.replay import flip_kind
from transcriptkit import ClaudeSession, CodexSession, text, tool_use

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RULES = os.path.join(ROOT, "rules", "v2.3.yaml")
SECRET = "sk_live_9fQ2mZ7LwX4tB8vN1cR6yK3hD5"


@pytest.fixture(scope="module")
def archive(tmp_path_factory):
    folder = tmp_path_factory.mktemp("archive")
    main_session = ClaudeSession(seed=11)
    main_session.prompt("We decided to deploy from main only; release branches are retired, so hotfixes go "
                        "through main too.")
    main_session.reply(text("Understood, I'll target main for the hotfix."))
    main_session.prompt("why does the invoice import fail on staging")
    main_session.reply(tool_use("toolu_s1", "Bash", {"command": "cat deploy/staging.env"}))
    main_session.tool_results(("toolu_s1", f"PAYMENTS_API_KEY={SECRET}\nIMPORT_BATCH=500"))
    main_session.reply(text("The import points at the live payments key; staging should use the test key."))
    main_session.prompt("switch the CI install step to pnpm")
    main_session.reply(text("Switched the install step; the lockfile is regenerated."))
    for waiting, oldest in ((37, 12), (41, 15), (19, 21)):  # a status check a background task repeats
        main_session.user_text(f"<task-notification>\n<task-id>q{waiting}</task-id>\n<status>completed</status>\n"
                               f"</task-notification>")
        main_session.reply(text(f"Checked the queue again: {waiting} jobs waiting, oldest queued {oldest} minutes ago."))
    main_session.write(folder / "main.jsonl")

    sub = ClaudeSession(main_session.session_id, sidechain=True, agent_id="c0ffee1", seed=12)
    sub.prompt("List every caller of charge_card and say which ones retry.")
    sub.reply(tool_use("toolu_g", "Grep", {"pattern": "charge_card"}))
    sub.tool_results(("toolu_g", "billing/charge.py:40\nworker/retry.py:12"))
    sub.reply(text("Two callers; only worker/retry.py retries."))
    os.makedirs(folder / "subagents")
    sub.write(folder / "subagents" / "agent-c0ffee1.jsonl")

    rollout = CodexSession()
    rollout.meta()
    rollout.message("user", "<environment_context>\n  <cwd>/srv/app</cwd>\n</environment_context>")
    rollout.prompt("we always run migrations as a separate deploy step, never at app start: two pods raced "
                   "on the same migration once and locked the table")
    rollout.message("assistant", "Noted; the entrypoint no longer runs migrations.")
    rollout.write(folder / f"rollout-2026-03-02T09-00-00-{rollout.session_id}.jsonl")
    (folder / "notes.txt").write_text("not a transcript")
    return folder


@pytest.fixture(scope="module")
def rules_b(tmp_path_factory):
    """v2.3 that sends nothing at balanced and drops any window that mentions pnpm."""
    source = open(RULES, encoding="utf-8").read()
    assert "    balanced: 3.0\n" in source and "drop_rules:\n" in source
    changed = source.replace("revision: v2.3\n", "revision: v2.3-strict\n", 1)
    changed = changed.replace("    balanced: 3.0\n", "    balanced: 99.0\n", 1)
    changed = changed.replace("drop_rules:\n", "drop_rules:\n"
                              "  - id: no-pnpm-talk\n"
                              "    description: Test rule that drops a window mentioning pnpm.\n"
                              "    scope: window\n    role: any\n    min_level: conservative\n"
                              "    when: {match: {pattern: '\\bpnpm\\b'}}\n"
                              "    examples: {match: ['move to pnpm'], no_match: ['move to npm']}\n", 1)
    path = tmp_path_factory.mktemp("rules") / "v2.3-strict.yaml"
    path.write_text(changed, encoding="utf-8")
    return str(path)


def _judged_directly(archive, rules, recent_shapes=32):
    """Every window of the archive judged by hand, the way replay should: per-thread recent shapes."""
    classifier = load_classifier(rules)
    out, recent = [], {}
    for path in transcript_files([str(archive)]):
        for exchange in exchanges(read_transcript(path, final=True).entries):
            shapes = recent.setdefault((exchange.session_id, exchange.agent_id), deque(maxlen=recent_shapes))
            decision = classifier.classify(exchange.window, recent_shapes=shapes)
            shapes.append(decision.shape)
            out.append((path, exchange, decision))
    return out


def _run(args):
    result = CliRunner().invoke(main, args, catch_exceptions=False)
    return result


def test_replay_reports_what_each_revision_decides_and_the_flips(archive, rules_b):
    result = _run(["replay", str(archive), "--rules", RULES, "--vs", rules_b, "--format", "json", "--no-progress"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    a_runs, b_runs = _judged_directly(archive, RULES), _judged_directly(archive, rules_b)

    assert report["files"] == 3 and report["formats"] == {"claude-code": 2, "codex": 1}
    assert report["windows"] == len(a_runs) == 8
    assert report["decisions"]["A"] == {a: sum(1 for *_, d in a_runs if d.action == a) for a in ("drop", "skip", "flag")}
    assert report["decisions"]["B"]["flag"] == 0
    assert report["sent_share"]["A"] == pytest.approx(report["decisions"]["A"]["flag"] / 8)
    assert report["types"]["A"] == dict(Counter(d.type for *_, d in a_runs if d.action == "flag"))
    by_rule = {(r["decision"], r["rule"]): r["A"] for r in report["rules"] if r["A"]}
    assert by_rule == dict(Counter((d.action, d.rule) for *_, d in a_runs))

    expected = [(flip_kind(a, b), e.key) for (_, e, a), (_, _, b) in zip(a_runs, b_runs) if flip_kind(a, b)]
    assert sorted(expected) == sorted((f["change"], f["key"]) for f in report["flips"])
    kinds = [f["change"] for f in report["flips"]]
    assert kinds[0] == "newly dropped" and report["flips"][0]["B"]["rule"] == "no-pnpm-talk"
    assert kinds == sorted(kinds, key=["newly dropped", "noise now sent", "no longer sent", "newly sent",
                                       "retyped"].index)
    decided = [f for f in report["flips"] if f["excerpt"].startswith("We decided to deploy from main")]
    assert decided and decided[0]["change"] == "no longer sent" and decided[0]["A"]["type"] == "decision"
    # the repeated status check: judged alone the first time, then dropped for the session's recent shapes
    status = [(d.action, d.rule) for _, e, d in a_runs if "Checked the queue" in json.dumps(e.window)]
    assert status == [("skip", None), ("drop", "recent-shape"), ("drop", "recent-shape")]
    assert by_rule[("drop", "recent-shape")] == 2
    # the subagent's scratch work is stripped turn by turn, so its window is dropped
    assert [(d.action, d.rule) for _, e, d in a_runs if e.sidechain] == [("drop", "subagent-turn")]


def test_text_report_names_both_revisions_and_the_share_sent(archive, rules_b):
    result = _run(["replay", str(archive), "--rules", RULES, "--vs", rules_b, "--no-progress"])
    assert result.exit_code == 0
    out = result.output
    assert "policy v2.3+" in out and "policy v2.3-strict+" in out
    assert "\nsent " in out and "windows whose decision or type flips from A to B:" in out
    assert SECRET not in out


def test_export_is_valid_fixtures_flips_first_with_secrets_redacted(archive, rules_b, tmp_path):
    target = tmp_path / "candidates.yaml"
    result = _run(["replay", str(archive), "--rules", RULES, "--vs", rules_b, "--no-progress",
                   "--export-candidates", str(target), "--sample", "6", "--seed", "4"])
    assert result.exit_code == 0, result.output
    exported = yaml.safe_load(target.read_text())
    assert len(exported) == 6
    assert all(e["todo"] == "label me" and "replay" in e["tags"] for e in exported)
    flips = [("flip" in e["tags"]) for e in exported]
    assert flips == sorted(flips, reverse=True) and any(flips)  # flips first
    assert all(e["note"].startswith("replay candidate from ") and "v2.3 " in e["note"] for e in exported)
    body = target.read_text()
    assert SECRET not in body
    secret_windows = [e for e in exported if "PAYMENTS_API_KEY" in json.dumps(e["window"])]
    assert all("[REDACTED]" in json.dumps(e["window"]) for e in secret_windows)
    # validates with the shipped fixtures it would join (ids do not collide, schema holds)
    loaded = load_fixtures([os.path.join(ROOT, "fixtures"), str(target)], require_all_types=True)
    assert sum(1 for f in loaded if f.id.startswith("replay-")) == 6
    # and on its own, as `gate fixtures FILE` (candidates wait for labels: no type coverage asked yet)
    alone = _run(["fixtures", str(target)])
    assert alone.exit_code == 0, alone.output
    assert "6 fixtures, 6 marked todo" in alone.output
    # the same seed gives the same sample
    again = tmp_path / "again.yaml"
    _run(["replay", str(archive), "--rules", RULES, "--vs", rules_b, "--no-progress",
          "--export-candidates", str(again), "--sample", "6", "--seed", "4"])
    assert again.read_text() == body


def test_export_covers_every_decision_and_deciding_rule(archive, tmp_path):
    target = tmp_path / "strata.yaml"
    runs = _judged_directly(archive, RULES)
    strata = {(d.action, d.rule) for *_, d in runs}
    result = _run(["replay", str(archive), "--rules", RULES, "--no-progress", "--export-candidates", str(target),
                   "--sample", str(len(strata)), "--seed", "1"])
    assert result.exit_code == 0
    exported = yaml.safe_load(target.read_text())
    label = {"drop": "drop", "skip": "exclude", "flag": "extract"}
    # one window per stratum: every (decision, rule) pair shows up once
    decided = Counter()
    for entry in exported:
        decision = entry["note"].split("v2.3 ", 1)[1].split(".")[0]
        decided[decision.split(" ")[0]] += 1
        assert entry["label"] == label[decision.split(" ")[0]]
    assert sum(decided.values()) == len(strata)
    assert decided == Counter(action for action, _ in strata)


def test_bad_input_is_one_line_and_exit_2(archive, tmp_path):
    missing = _run(["replay", str(tmp_path / "nope"), "--rules", RULES, "--no-progress"])
    assert missing.exit_code == 2 and "no such transcript file or folder" in missing.output
    assert "Traceback" not in missing.output
    empty = tmp_path / "empty"
    empty.mkdir()
    none = _run(["replay", str(empty), "--rules", RULES, "--no-progress"])
    assert none.exit_code == 2 and "no transcript files" in none.output
    level = _run(["replay", str(archive), "--rules", RULES, "--level", "reckless", "--no-progress"])
    assert level.exit_code == 2 and "level 'reckless' is not a level" in level.output


def test_progress_bar_goes_to_stderr_only(archive):
    result = CliRunner().invoke(main, ["replay", str(archive), "--rules", RULES, "--progress", "--format", "json"])
    assert result.exit_code == 0
    json.loads(result.stdout)  # stdout stays clean JSON
    assert "\r[" in result.stderr and " windows " in result.stderr


def test_flip_kinds_follow_what_a_wrong_b_would_cost():
    from gate.engine.decision import Decision

    def d(action, type_=None):
        return Decision(action=action, type=type_, rule=None, trace=(), payload=(), policy="p", level="balanced")

    kinds = {(a, b): flip_kind(d(a, "decision" if a == "flag" else None), d(b, "decision" if b == "flag" else None))
             for a in ("drop", "skip", "flag") for b in ("drop", "skip", "flag")}
    assert kinds == {
        ("drop", "drop"): None, ("skip", "skip"): None, ("flag", "flag"): None,
        ("skip", "drop"): "newly dropped", ("flag", "drop"): "newly dropped",
        ("drop", "flag"): "noise now sent", ("drop", "skip"): None,  # still not sent
        ("flag", "skip"): "no longer sent", ("skip", "flag"): "newly sent",
    }
    assert flip_kind(d("flag", "decision"), d("flag", "insight")) == "retyped"


def test_without_recent_shapes_a_repeated_status_is_judged_alone(archive):
    result = _run(["replay", str(archive), "--rules", RULES, "--recent-shapes", "0", "--format", "json",
                   "--no-progress"])
    report = json.loads(result.output)
    assert not any(r["rule"] == "recent-shape" for r in report["rules"])
    assert report["recent_shapes"] == 0


def test_export_of_text_with_a_lone_surrogate_and_control_characters_still_loads(tmp_path):
    session = ClaudeSession(seed=21)
    # JSON may carry a lone surrogate (\ud800); tool output carries control characters
    session.prompt("we always pin the base image by digest \ud800, never a floating tag: a retag broke prod once")
    session.reply(tool_use("toolu_b", "Bash", {"command": "docker inspect app"}))
    session.tool_results(("toolu_b", "digest: sha256:4f1c\x07\x1b[0m done"))
    session.reply(text("Pinned by digest."))
    folder = tmp_path / "s"
    folder.mkdir()
    session.write(folder / "s.jsonl")
    target = tmp_path / "c.yaml"
    result = _run(["replay", str(folder), "--rules", RULES, "--no-progress", "--export-candidates", str(target)])
    assert result.exit_code == 0, result.output
    loaded = load_fixtures([os.path.join(ROOT, "fixtures"), str(target)], require_all_types=True)
    exported = [f for f in loaded if f.id.startswith("replay-")]
    assert len(exported) == 1
    assert "digest ?, never" in exported[0].window[0]["content"]
    assert exported[0].window[2]["content"][0]["content"] == "digest: sha256:4f1c\x07\x1b[0m done"


def test_a_labeled_set_must_still_cover_every_type(tmp_path):
    only_decisions = tmp_path / "labeled.yaml"
    only_decisions.write_text(
        "- id: one-decision\n  window: [{role: user, content: 'we moved the queue to redis, the cron was flaky'}]\n"
        "  label: extract\n  expect_type: decision\n  note: a labeled set with one type\n")
    result = _run(["fixtures", str(only_decisions)])
    assert result.exit_code != 0
    assert "no extract fixture for type(s): preference" in result.output

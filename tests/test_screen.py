"""The drop screen (gate/engine/screen.py) is sound: where it says no drop rule can fire on one
turn, the classifier drops nothing; and it is not vacuous: it clears what it can prove.

Checked on every shipped revision, on the text of every turn of every shipped fixture (as
one turn, in the roles a text is judged in), on the benchmarks' generated windows (varied,
large, not plain, scrambled, hostile), on the rules' own examples and on the audit
benchmark's generated memories; and, per condition kind, on small revisions built here.
"""

from __future__ import annotations

import dataclasses
import glob
import random
import sys
from pathlib import Path

import pytest

from enginekit import drop_rule, match, revision_doc, revision_spread
from gate.engine.compiler import compile_revision
from gate.engine.screen import DropScreen
from gate.language.loader import load_revision

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))

from audit_scale import generate  # noqa: E402
from corpus import corpus, fixture_windows, hostile_windows, not_plain_window, scrambled_window  # noqa: E402

# the newest four and a spread of the older: see enginekit.revision_spread
RULES = revision_spread(glob.glob(str(ROOT / "rules" / "*.yaml")), 12, newest=4)
ROLES = ("user", "assistant", "tool")


def _texts(window) -> list:
    if not isinstance(window, (list, tuple)):
        return [window] if isinstance(window, str) else []
    out = [t["content"] for t in window if isinstance(t, dict) and isinstance(t.get("content"), str)]
    if len(out) > 1:
        out.append("\n".join(out))  # the turns as one text of many lines
    return out


def _memories(n: int, tmp_dir: Path) -> list:
    import json

    path = tmp_dir / "memories.jsonl"
    generate(str(path), n, seed=3)
    return [json.loads(line)["memory"] for line in path.read_text().splitlines()]


@pytest.fixture(scope="module")
def texts(tmp_path_factory):
    rng = random.Random(5)
    typical, large = corpus(300, 5, seed=9)
    windows = (fixture_windows() + typical + large + [not_plain_window(w, rng) for w in typical[:150]]
               + [scrambled_window(w, rng) for w in typical[150:300]] + hostile_windows())
    out = [text for window in windows for text in _texts(window)]
    out += _memories(1500, tmp_path_factory.mktemp("audit"))
    out += ["", " ", "\n\n", "{}", "[1, 2]", "ok", "x" * 61_000]
    return list(dict.fromkeys(out))


def _verdict(classifier, text, role, level):
    decision = classifier.classify([{"role": role, "content": text}], level)
    return decision.rule if decision.action == "drop" else None


def _unsound(revision, classifier, texts, levels, roles):
    """(level, role, rule, text) where the screen said no rule can fire and one dropped the text."""
    out = []
    for level in levels:
        screen = DropScreen(revision, classifier, level)
        for role in roles:
            for text in texts:
                if not screen.might_drop(text, role):
                    rule = _verdict(classifier, text, role, level)
                    if rule is not None:
                        out.append((level, role, rule, text[:80]))
    return out


@pytest.mark.parametrize("rules", RULES, ids=[Path(r).name for r in RULES])
def test_what_the_screen_clears_no_rule_drops(rules, texts):
    revision = load_revision(rules)
    classifier = compile_revision(dataclasses.replace(revision, signals=()))
    examples = [t for rule in revision.drop_rules for window in rule.examples.match + rule.examples.no_match
                for t in _texts(window if isinstance(window, list) else [window])]
    newest = rules == RULES[-1]
    unsound = _unsound(revision, classifier, texts + examples,
                       revision.levels if newest else (revision.default_level,), ROLES if newest else ("user",))
    assert not unsound, unsound[:5]


def test_the_audit_judge_gives_the_classifiers_verdicts(texts):
    from gate.audit.judge import Judge

    revision = load_revision(RULES[-1])
    classifier = compile_revision(dataclasses.replace(revision, signals=()))
    for role in ("user", "assistant"):
        judge = Judge(revision, role=role)
        differences = []
        for text in texts:
            decision = classifier.classify([{"role": role, "content": text}], judge.level)
            expected = (decision.rule or "(empty)") if decision.action == "drop" else None
            if judge.judge_drop(text) != expected:
                differences.append((text[:80], expected))
        assert not differences, differences[:5]


def test_the_screen_clears_plain_facts_and_lets_noise_through(tmp_path):
    revision = load_revision(RULES[-1])
    classifier = compile_revision(dataclasses.replace(revision, signals=()))
    screen = DropScreen(revision, classifier, revision.default_level)
    memories = _memories(2000, tmp_path)
    dropped = [m for m in memories if _verdict(classifier, m, "user", revision.default_level)]
    kept = [m for m in memories if m not in set(dropped)]
    assert dropped and all(screen.might_drop(m) for m in dropped)
    cleared = sum(not screen.might_drop(m) for m in kept)
    assert cleared >= 0.9 * len(kept), (cleared, len(kept))


# -- each condition kind, on a revision of one rule -------------------------------------------

ONE_LINE = "the deploy finished and everyone went home"
FOUR_LINES = "alpha one\nbeta two\ngamma three\ndelta four"


@pytest.mark.parametrize("when, cleared, passed", [
    (match(r"\bheartbeat\b"), [ONE_LINE], ["heartbeat ok"]),
    ({"count": {"pattern": r"\bping\b", "min": 2}}, [ONE_LINE], ["ping ping"]),
    ({"count": {"pattern": r"\bping\b", "max": 0}}, [], [ONE_LINE]),  # a count of zero needs nothing
    ({"line_share": {"pattern": r"^\w+ \w+$", "min_share": 0.5, "min_lines": 3}}, ["alpha one\nbeta two"],
     [FOUR_LINES]),
    ({"line_share": {"pattern": r"^zzz", "max_share": 0.1, "min_lines": 2}}, [ONE_LINE], [FOUR_LINES]),
    ({"structure": {"bullets": {"min": 3}}}, ["- a\n- b"], ["- a\n- b\n- c"]),
    ({"repeated_shape": {"unit": "line", "min": 3}}, ["x 1\nx 2"], ["x 1\nx 2\nx 3"]),
    ({"repeated_shape": {"unit": "turn", "min": 2}}, [ONE_LINE], []),  # one turn never repeats
    ({"turns": {"min": 2}}, [ONE_LINE], []),
    ({"chars": {"min": 50}}, [ONE_LINE], [ONE_LINE + " and stayed home the next day"]),
    ({"turn_flag": "empty"}, [ONE_LINE], ["  "]),
    ({"tool_io": {"pattern": "secret"}}, ["a secret"], []),  # one plain turn has no tool text
    ({"recent_shape": True}, [ONE_LINE], []),
    ({"prose_words": {"max": 3}}, [], ["two words"]),  # a kind with no need stops nothing
    ({"not": match(r"\bheartbeat\b")}, [], [ONE_LINE]),
    ({"any": [match(r"\bheartbeat\b"), {"structure": {"lines": {"min": 4}}}]}, [ONE_LINE],
     ["heartbeat", FOUR_LINES]),
    ({"all": [match(r"\bheartbeat\b"), {"structure": {"lines": {"min": 2}}}]}, ["heartbeat", ONE_LINE],
     ["heartbeat\nheartbeat"]),
])
def test_each_kind_clears_only_what_it_cannot_match(tmp_path, when, cleared, passed):
    import yaml

    doc = revision_doc([drop_rule("r", when, scope="turn")])
    path = tmp_path / "r.yaml"
    path.write_text(yaml.safe_dump(doc))
    revision = load_revision(str(path))
    classifier = compile_revision(revision)
    screen = DropScreen(revision, classifier, revision.default_level)
    for text in cleared:
        assert not screen.might_drop(text), text
    for text in passed:
        assert screen.might_drop(text), text
    assert not _unsound(revision, classifier, cleared + passed + [ONE_LINE, FOUR_LINES, "", "heartbeat"],
                        revision.levels, ROLES)


def test_a_rule_of_another_role_and_a_level_below_the_rules_are_cleared(tmp_path):
    import yaml

    doc = revision_doc([drop_rule("mine", match(r"\bheartbeat\b"), role="assistant"),
                        drop_rule("late", match(r"\bpulse\b"), min_level="aggressive")])
    path = tmp_path / "r.yaml"
    path.write_text(yaml.safe_dump(doc))
    revision = load_revision(str(path))
    classifier = compile_revision(revision)
    balanced = DropScreen(revision, classifier, "balanced")
    assert not balanced.might_drop("heartbeat", "user") and balanced.might_drop("heartbeat", "assistant")
    assert not balanced.might_drop("pulse")
    assert DropScreen(revision, classifier, "aggressive").might_drop("pulse")


def test_a_span_rule_that_finds_anything_lets_the_text_through(tmp_path):
    """A span rule cuts its matches out before the turn rules judge it (a turn left blank is
    dropped), whatever its keywords say: the screen clears only a text no span pattern finds."""
    import yaml

    doc = revision_doc([drop_rule("cut", match(r"<note>[^<]*</note>", keywords=["unrelated"]), scope="span",
                                  role="user", match=["<note>x</note>"], no_match=["plain"]),
                        drop_rule("blank", {"turn_flag": "empty"}, scope="turn")])
    path = tmp_path / "r.yaml"
    path.write_text(yaml.safe_dump(doc))
    revision = load_revision(str(path))
    classifier = compile_revision(revision)
    screen = DropScreen(revision, classifier, "balanced")
    only_notice = "<note>the IDE opened a file</note>"
    assert _verdict(classifier, only_notice, "user", "balanced") == "cut"
    assert screen.might_drop(only_notice) and screen.might_drop(f"{only_notice}\nok")
    assert not screen.might_drop("a plain sentence with no notice in it")
    assert not screen.might_drop(only_notice, "assistant")  # the span rule is the person's only
    texts = [only_notice, f"{only_notice}\nok", "ok", "a plain sentence", f"{only_notice} {only_notice}"]
    assert not _unsound(revision, classifier, texts, revision.levels, ROLES)

"""Every speed-up leaves every decision as it was.

The same revision is compiled with every optimization off (no keyword prefilter,
no derived literals, no branch splitting, no feature shortcuts: `prefilter=False,
optimize=False`) and on (the default), and from the cache (lazy compilation),
and each decision (action, type, rule, trace, payload, shape, scores, error) is
compared on the whole fixture set plus a seeded generated corpus with large
pastes, windows that are not plain ASCII, windows scrambled with characters of
every kind and hostile input, at every level. Speed itself is measured in
benchmarks/speed.py, never here.
"""

from __future__ import annotations

import glob
import json
import os
import random
import subprocess
import sys
from pathlib import Path

import pytest

from enginekit import GATE, checked_share, engine_test_revisions
from gate.engine.cache import load_classifier
from gate.engine.compiler import compile_revision
from gate.engine.features import ReferenceSubject, Subject
from gate.language.loader import load_revision
from gate.engine.window import normalize_window

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))

from corpus import corpus, fixture_windows, hostile_windows, not_plain_window, scrambled_window  # noqa: E402

# one revision of each set of conditions (a fitted twin reads the text as its source does), at most
# eight: the newest two and a spread of the older (enginekit.engine_test_revisions)
RULES = engine_test_revisions(glob.glob(str(ROOT / "rules" / "*.yaml")))


def decision_tuple(decision):
    return (decision.action, decision.type, decision.rule, decision.trace, decision.payload, decision.policy,
            decision.level, decision.shape, tuple(sorted(decision.scores.items())), decision.error)


@pytest.fixture(scope="module")
def windows():
    typical, large = corpus(600, 7, seed=11)
    rng = random.Random(11)
    not_plain = [not_plain_window(window, rng) for window in typical[:300]]  # the set's wide forms
    scrambled = [scrambled_window(window, rng) for window in typical[300:500]]  # where engines differ
    return fixture_windows() + typical + large + not_plain + scrambled + hostile_windows()


@pytest.mark.heavy
@pytest.mark.parametrize("rules", RULES, ids=[os.path.basename(r) for r in RULES])
def test_optimized_decisions_equal_unoptimized(rules, windows, tmp_path, monkeypatch):
    revision = load_revision(rules)
    off = compile_revision(revision, prefilter=False, optimize=False)
    on = compile_revision(revision)
    monkeypatch.setenv("GATE_CACHE_DIR", str(tmp_path / "cache"))
    load_classifier(rules)  # fills the cache
    cached = load_classifier(rules)  # lazy, from the cache entry
    recent = ("0000000000000000",)
    differences, timeouts = [], []
    for level in revision.levels:
        for index, window in enumerate(checked_share(rules, RULES, windows)):
            expected = decision_tuple(off.classify(window, level, recent))
            if expected[-1] and "timeout" in expected[-1]:
                continue  # a timeout depends on the machine's speed, not on the rules
            for name, classifier in (("optimized", on), ("cached", cached)):
                got = decision_tuple(classifier.classify(window, level, recent))
                if got[-1] and "timeout" in got[-1]:
                    # so on either side: a worker starved of the CPU for 50 ms times out (one did,
                    # on a loaded machine); an optimization that makes a pattern slow does so often
                    timeouts.append((name, level, index, got[-1]))
                elif got != expected:
                    differences.append((name, level, index, expected[:3], got[:3]))
    assert not differences, differences[:5]
    assert len(timeouts) <= 3, timeouts[:5]


def test_feature_shortcuts_equal_reference(windows):
    """Structure counts, prose words, lines, turn and line shapes, subject by subject."""
    for window in windows:
        turns = normalize_window(window)
        whole = Subject(turns)
        for subject in [whole] + [Subject((t,), window=whole) for t in turns]:
            reference = ReferenceSubject(subject.turns, window=subject.window)
            assert subject.structure == reference.structure
            assert subject.prose_words == reference.prose_words
            assert subject.lines == reference.lines
            assert subject.turn_shapes == reference.turn_shapes
            assert subject.line_shapes == reference.line_shapes
            assert subject.turn_shapes == reference.turn_shapes
            assert subject.line_shapes == reference.line_shapes


def fires_retrying(rule, turns) -> bool:
    """A rule's verdict on a fresh subject. A regex timeout (50 ms, where every rule here takes
    under 3) is a worker starved of the CPU on a loaded machine: it is tried again, and a pattern
    that is really that slow times out every time and raises."""
    for _ in range(2):
        try:
            return rule.fires(Subject(turns))
        except TimeoutError:
            continue
    return rule.fires(Subject(turns))


def test_every_condition_runs_for_a_subject_without_a_scanner():
    """lint and diff build their own subjects: with no scan, nothing is filtered out."""
    revision = load_revision(RULES[0])
    on = compile_revision(revision)
    off = compile_revision(revision, optimize=False)  # the same keywords, nothing else
    for window in fixture_windows():
        turns = normalize_window(window)
        for fast, slow in zip(on.rules, off.rules):
            assert fires_retrying(fast, turns) == fires_retrying(slow, turns), (fast.id, window)


def test_jobs_2_output_equals_jobs_1(tmp_path):
    typical, large = corpus(1200, 7, seed=3)
    lines = []
    for i, window in enumerate(typical + large + hostile_windows()):
        lines.append(json.dumps(window))
        if i % 97 == 5:
            lines.append("not json")  # error lines keep their place and their line numbers
        if i % 131 == 7:
            lines.append(json.dumps({"window": window, "level": "aggressive", "recent_shapes": ["x"]}))
        if i % 173 == 9:
            lines.append("")
    source = tmp_path / "windows.jsonl"
    source.write_text("\n".join(lines) + "\n", encoding="utf-8")
    env = dict(os.environ, GATE_CACHE_DIR=str(tmp_path / "cache"))
    rules = RULES[0]
    one = subprocess.run([GATE, "classify", "--rules", rules, str(source)], capture_output=True, env=env)
    two = subprocess.run([GATE, "classify", "--rules", rules, "--jobs", "2", str(source)], capture_output=True,
                         env=env)
    assert one.returncode == two.returncode == 1  # the bad lines
    assert one.stdout.splitlines() == two.stdout.splitlines()
    assert len(one.stdout.splitlines()) == sum(1 for line in lines if line.strip())

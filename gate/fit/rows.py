"""The mass-check: every fixture window through the revision, once per level.

A row is what the fit needs of one window at one level: whether a drop rule
removed it (such windows are never training rows, and stay drops whatever the
weights), which signals fired (read from the trace, in file order), and the
lowercased text the lexicon would read. The drop half is the revision's own:
a fit never changes it.

A payload rule with `spare` (and `spare_unflagged: drop`, the default) drops a
window only when the signals do not flag the person's lines it keeps
(gate/engine/classify.py), so whether it drops depends on the weights. Such a window
is a training row of its own: what the signals saw in those lines, `spared`, flagged
or dropped by the new weights, never skipped (but at a level stricter than the
default, skipped when the default level flags it). With `spare_unflagged: skip` the
classifier already skips what it keeps, so the row is an ordinary one and needs no probe.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass

from gate.engine.literals import fold
from gate.evaluation.metrics import trace_rules

NONE = "nothing durable"


@dataclass(frozen=True)
class LevelView:
    dropped: bool  # a drop rule removed the window (or every turn of it)
    fired: tuple  # signal ids that fired, in file order (the lexicon's own signal excluded)
    text: str  # what the lexicon reads: the kept turns of its role, as the engine lowercases them
    hand: tuple  # the revision's own decision: (action, type)
    spared: bool = False  # a payload rule's spare kept the person's lines: dropped unless they are flagged


@dataclass(frozen=True)
class Row:
    fixture: object  # gate.evaluation.fixtures.Fixture
    dataset: str  # the --fixtures path it was read from
    group: str  # its cross-validation group (gate.fit.groups)
    target: str  # NONE or the expected memory type
    levels: dict  # level -> LevelView
    judged: bool = True  # its flags count toward an operating point's precision (not --recall-only)


def mass_check(classifier, fixtures, datasets, group_keys, *, lexicon_signal: str | None = None,
               lexicon_role: str = "user", recall_only=frozenset()) -> list[Row]:
    """One Row per fixture; `lexicon_signal` is the id of an existing lexicon signal,
    whose firing the fit recomputes from its own terms."""
    rows = []
    sparing = {rule.id for rule in classifier.rules
               if getattr(rule, "spare", None) is not None and rule.spare_unflagged == "drop"}
    probe = None
    if sparing:  # the same classifier, flagging whatever any signal fires on: what a spare would send
        probe = copy.copy(classifier)
        probe.thresholds = dict.fromkeys(classifier.thresholds, float("-inf"))
    for fixture, dataset, group in zip(fixtures, datasets, group_keys, strict=True):
        views = {}
        for level in classifier.levels:
            decision = hand = classifier.classify(fixture.window, level)
            spared = False
            if decision.action == "drop" and decision.rule in sparing:
                probed = probe.classify(fixture.window, level)
                spared = probed.action == "flag" and f"cut by {decision.rule} to the person's own lines" in " ".join(
                    probed.trace)
                decision = probed if spared else decision
            _, fired = trace_rules(decision.trace)
            dropped = decision.action == "drop"
            text = "" if dropped else _lexicon_text(decision.payload, lexicon_role)
            fired = tuple(s for s in fired if s != lexicon_signal) if not dropped else ()
            views[level] = LevelView(dropped, fired, text, (hand.action, hand.type), spared)
        target = fixture.expect_type if fixture.label == "extract" and fixture.expect_type else NONE
        rows.append(Row(fixture, dataset, group, target, views, dataset not in recall_only))
    return rows


def _lexicon_text(payload, role: str) -> str:
    """The text a signal of `role` reads: the kept turns as they are sent (turn rules and span
    rules applied), joined as the engine's Subject joins them, folded as Subject.lower folds them."""
    texts = [m["content"] for m in payload if role in ("any", m["role"])]
    if not texts:
        return ""
    return fold(texts[0] if len(texts) == 1 else "\n\n".join(texts))

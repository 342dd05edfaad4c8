"""Levels as operating points: a level's threshold is chosen, on cross-validated
scores, as the loosest one that keeps its promise.

  min_flag_precision: p   the lowest threshold whose flag precision is >= p (most recall)
  min_extract_recall: r   the highest threshold whose extract recall is >= r (most precision)

A promise no threshold keeps gets the threshold that comes closest. Windows of a
--recall-only set count toward recall only: where the platform's instructions are the
designated filter (long real exchanges), the local half must not lose knowledge, and
its flags there are not held against a level's precision. Weights have two
decimals, so every score is a multiple of 0.01; a threshold sits half a step below the
score it admits (x.xx5), where no sum's rounding can put a score on the wrong side.
"""

from __future__ import annotations

from collections import namedtuple

from gate.fit.rows import NONE

DEFAULT_POINTS = {"conservative": {"min_flag_precision": 0.97}, "balanced": {"min_flag_precision": 0.90},
                  "aggressive": {"min_extract_recall": 0.97}}
NEVER = 1e9  # a threshold no score reaches: flag nothing

# One row's scored outcome at one level: what the fit's threshold search needs.
# `judged`: whether its flag counts toward precision (False for --recall-only sets);
# `spared`: what a payload rule's spare kept, dropped unless flagged (gate/fit/rows.py).
Scored = namedtuple("Scored", "target dropped fired best score judged spared", defaults=(True, False))
Result = namedtuple("Result", "action type rule trace error")  # what gate.evaluation.metrics.score reads


def decide(scored: Scored, threshold: float) -> tuple:
    if scored.dropped:
        return "drop", None
    if scored.fired and scored.score >= threshold:
        return "flag", scored.best
    return ("drop" if scored.spared else "skip"), None


def settle_spared(decisions: dict, scored: dict, order, default: str) -> dict:
    """At a level stricter than the default, what a spare kept is skipped, not dropped, when
    the default level flags it (a stricter level does not hard-drop what the default keeps).
    `decisions` and `scored`: {level: per row}; `order`: the levels, strictest first."""
    if default not in decisions:
        return decisions
    stricter = [lv for lv in order[:list(order).index(default)] if lv in decisions]
    for level in stricter:
        for i, s in enumerate(scored[level]):
            if (s is not None and s.spared and decisions[level][i] == ("drop", None)
                    and decisions[default][i][0] == "flag"):
                decisions[level][i] = ("skip", None)
    return decisions


def results(scored, threshold: float) -> list:
    return [Result(*decide(s, threshold), None, (), None) for s in scored]


def choose_threshold(scored, point: dict) -> float:
    """The threshold that keeps `point` on these scored rows (see the module's note)."""
    extract = sum(1 for s in scored if s.target != NONE)
    flaggable = sorted({round(s.score, 2) for s in scored if not s.dropped and s.fired}, reverse=True)
    extract_judged = 0
    # Walk thresholds from strict to loose, counting what each admits.
    by_score = {}
    for s in scored:
        if not s.dropped and s.fired:
            by_score.setdefault(round(s.score, 2), []).append(s)
    candidates = []
    flagged = right = 0
    for value in flaggable:
        for s in by_score[value]:
            if s.target != NONE:
                extract_judged += 1  # recall counts every extract window
            if s.judged:
                flagged += 1
                right += s.target != NONE
        candidates.append((round(value - 0.005, 3), right / flagged if flagged else 1.0,
                           extract_judged / extract if extract else 0.0))
    if not candidates:
        return NEVER
    if "min_flag_precision" in point:
        want = point["min_flag_precision"]
        keeping = [c for c in candidates if c[1] >= want - 1e-9]
        if keeping:
            return keeping[-1][0]  # loosest
        return max(candidates, key=lambda c: (c[1], -c[0]))[0]
    want = point["min_extract_recall"]
    keeping = [c for c in candidates if c[2] >= want - 1e-9]
    if keeping:
        return keeping[0][0]  # strictest that still reaches the recall
    return candidates[-1][0]

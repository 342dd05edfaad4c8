"""Decisions + labeled fixtures -> scores. Pure functions, no I/O, one pass.

The definitions are the seed's (write-gate-eval.md), for the offline half of
the gate: the client forwards only windows whose action is `flag`, so a `skip`
contains noise too, but only until someone adds a flag rule that matches it.

  hard_drop_recall          drop fixtures not sent (drop or skip) / drop fixtures
  hard_drop_explicit        drop fixtures dropped by a rule / drop fixtures. A drop
                            fixture whose paste a rule cut out, the person's one-off
                            words beside it skipped, counts as dropped by that rule
                            (`contained`): the noise is gone whatever a flag rule later
                            matches. So does one whose pasted turn a rule stripped whole,
                            the remark in another message ("look", "?") skipped. Only a
                            skip with no rule's cut or strip of the person's text is held
                            by luck (a tool's result stripped is no such strip: it is
                            never sent).
  hard_drop_precision       hard drops that were safe / hard drops. Safe means
                            not an extract window: dropping an exclude window
                            is not counted against the score (it was meant to
                            be discarded; doing it locally is just cheaper).
  extract_recall            extract fixtures flagged / extract fixtures
  flag_precision            flagged extract fixtures / flagged fixtures
  extract_skipped           extract fixtures skipped (count: a flag rule is missing)
  extract_hard_dropped      extract fixtures dropped (count: a drop rule is too greedy)
  exclude_suppressed_early  exclude fixtures not sent / exclude fixtures
  type_accuracy             flagged extract fixtures of the right type / flagged extract fixtures
  type_coverage             extract fixtures that received a type at all / extract
                            fixtures (the contract's definition: typed / extract
                            windows; offline, a flagged window always has a type)
  types_produced            expected types the gate produced correctly at least
                            once / types the extract fixtures expect (a gate
                            that types everything 'decision' scores 1 of 5)

A ratio whose denominator is empty is None ("not measured"), never 1.0 or 0.0.
"""

from __future__ import annotations

import re
from collections import Counter

from gate.engine.window import normalize_window
from gate.language.model import DURABLE_TYPES

LABELS = ("drop", "exclude", "extract")
ACTIONS = ("drop", "skip", "flag")

# What happened to a fixture, named once per (label, action): the words the scorecard uses.
_OUTCOMES = {
    ("drop", "drop"): "dropped", ("drop", "skip"): "held_by_luck", ("drop", "flag"): "leaked",
    ("exclude", "drop"): "dropped", ("exclude", "skip"): "held_back", ("exclude", "flag"): "sent",
    ("extract", "drop"): "hard_dropped", ("extract", "skip"): "skipped", ("extract", "flag"): "flagged",
}
RIGHT_OUTCOMES = frozenset({"dropped", "contained", "held_by_luck", "held_back", "flagged"})
# What the classifier writes when a rule cut a paste out of a turn and kept the person's words.
# A span rule's cut ("spans cut out by": harness markup, a notice) is not among them: it takes
# markup around any turn, so it says nothing of whether the window's noise went with it.
_CUT_MARKS = (" paste cut out by ", " to the person's own lines")
# What the classifier writes when a rule stripped a whole turn of the person's; a span rule's
# strip goes on with ": nothing left once cut", so a full match leaves it out.
_STRIPPED = re.compile(r"turn (\d+) \(user\) stripped by \S+")
MISS_OUTCOMES = ("hard_dropped", "skipped", "leaked", "mistyped")  # in the order the scorecard lists them

# Metrics that can carry a floor offline; other threshold keys (live_*) are scored by `--live`.
OFFLINE_RATIOS = ("hard_drop_recall", "hard_drop_explicit", "hard_drop_precision", "extract_recall",
                  "flag_precision", "exclude_suppressed_early", "type_accuracy", "type_coverage",
                  "types_produced")
# Thresholds named audit_* are ceilings on a stored corpus (`gate audit --check`), not fixture metrics.
AUDIT_THRESHOLD_PREFIX = "audit_"
COUNTS = ("extract_skipped", "extract_hard_dropped", "drop_leaked", "drop_held_by_luck", "errors")
SCALARS = OFFLINE_RATIOS[:5] + ("extract_skipped", "extract_hard_dropped") + OFFLINE_RATIOS[5:]
# For counts, more is worse; for every ratio, more is better.
LOWER_IS_BETTER = frozenset(COUNTS)

_EPSILON = 1e-9


def ratio(num: int, den: int) -> float | None:
    return None if den == 0 else num / den


def outcome(label: str, action: str, type_: str | None, expect_type: str | None, trace=(),
            window=None) -> str:
    """One word for what happened: dropped, contained, held_by_luck, leaked, held_back, sent,
    hard_dropped, skipped, flagged, mistyped. `trace` (and the fixture's `window`, to know which
    turns were the person's text) tells noise a rule removed from a skipped window (contained)
    from noise no rule touched (held_by_luck)."""
    name = _OUTCOMES.get((label, action), "unknown")
    if name == "flagged" and type_ != expect_type:
        return "mistyped"
    if name == "held_by_luck" and _rule_removed_sent_text(trace, window):
        return "contained"
    return name


def _rule_removed_sent_text(trace, window) -> bool:
    """Whether a rule removed text of the person's that would have been sent: a paste cut out of
    a turn, or a whole turn of theirs stripped. A turn of tool calls or results is never sent, so
    stripping it removes nothing the platform would get."""
    if any(mark in line for line in trace for mark in _CUT_MARKS):
        return True
    stripped = {int(found.group(1)) for line in trace if (found := _STRIPPED.fullmatch(line))}
    if not stripped or window is None:
        return False
    return any(turn.index in stripped and "tool_only" not in turn.flags and turn.text.strip()
               for turn in normalize_window(window))


def is_right(name: str) -> bool:
    """The ideal offline decision: noise and exclude windows not sent, extract flagged with its type."""
    return name in RIGHT_OUTCOMES


def trace_rules(trace) -> tuple[list, list]:
    """(turn rules that stripped a turn, signals that fired), read from a decision's trace.

    The classifier writes `turn N (role) stripped by ID` and `signal ID w+1 ...`.
    """
    stripped, signals = [], []
    for line in trace:
        if line.startswith("signal "):
            signals.append(line[7:].split(" ", 1)[0])
        elif " stripped by " in line:
            stripped.append(line.rpartition(" stripped by ")[2])
    return stripped, signals


def score(fixtures, results, rules=()) -> dict:
    """Every offline metric for parallel sequences of fixtures and decisions.

    `results` items need `.action .type .rule .trace .error` (a Decision will do).
    `rules` lists the revision's rules as (id, kind, scope, active, sign) so rules
    that decided nothing still get a row; kind is 'drop' or 'signal'; sign is -1
    for a suppressor (a signal with no positive weight, meant to fire on the rest)
    and +1 otherwise.
    """
    confusion = {label: dict.fromkeys(ACTIONS, 0) for label in LABELS}
    typed = 0  # extract fixtures that received a type
    type_stats: dict[str, dict] = {}
    predicted = Counter()
    per_rule: dict[str, dict] = {}
    per_signal: dict[str, dict] = {}
    per_tag: dict[str, dict] = {}
    seen = {"extract": 0, "rest": 0}
    errors = 0
    contained = 0  # drop fixtures skipped once a rule cut their noise out

    for rule_id, kind, scope, active, sign in rules:
        per_rule[rule_id] = _rule_row(kind, scope, active)
        if kind == "signal":
            per_signal[rule_id] = _signal_row(active, sign)

    for fixture, result in zip(fixtures, results, strict=True):
        label, action = fixture.label, result.action
        if label not in confusion or action not in ACTIONS:
            continue
        confusion[label][action] += 1
        name = outcome(label, action, result.type, fixture.expect_type, result.trace or (), fixture.window)
        right = name in RIGHT_OUTCOMES
        contained += name == "contained"

        if label == "extract":
            stats = type_stats.get(fixture.expect_type)
            if stats is None:
                stats = type_stats[fixture.expect_type] = {"fixtures": 0, "flagged": 0, "right": 0,
                                                           "mistyped_as": Counter()}
            stats["fixtures"] += 1
            if action == "flag":
                typed += result.type is not None
                stats["flagged"] += 1
                if name == "flagged":
                    stats["right"] += 1
                else:
                    stats["mistyped_as"][result.type] += 1
        if action == "flag":
            predicted[result.type] += 1

        row = per_rule.get(result.rule or "(none)")
        if row is None:
            row = per_rule[result.rule or "(none)"] = _rule_row(
                "signal" if action == "flag" else ("none" if result.rule is None else "drop"), None, True)
        row["decided"][label] += 1
        if right:
            row["right"] += 1
            if name == "held_by_luck":
                row["lucky"] += 1
        elif name == "mistyped":
            row["mistyped"] += 1
        else:
            row["wrong"] += 1
        for tag in fixture.tags:
            tag_row = per_tag.get(tag)
            if tag_row is None:
                tag_row = per_tag[tag] = {"fixtures": 0, "right": 0, "labels": Counter(), "outcomes": Counter()}
            tag_row["fixtures"] += 1
            tag_row["right"] += right
            tag_row["labels"][label] += 1
            tag_row["outcomes"][name] += 1

        if result.error:
            errors += 1
            row["errors"] += 1
            continue  # a broken run says nothing about which signals would have fired
        stripped, fired = trace_rules(result.trace) if result.trace else ((), ())
        for rule_id in set(stripped):
            if rule_id in per_rule:
                per_rule[rule_id]["stripped"][label] += 1
        if action != "drop":  # the window reached signal scoring
            group = "extract" if label == "extract" else "rest"
            seen[group] += 1
            for signal_id in fired:
                stats = per_signal.get(signal_id)
                if stats is None:
                    stats = per_signal[signal_id] = _signal_row(True, 1)
                stats["fired_" + group] += 1
            if action == "flag" and result.rule in per_signal:
                per_signal[result.rule]["decided"] += 1

    return _assemble(confusion, type_stats, predicted, per_rule, per_signal, per_tag, seen, errors, typed,
                     contained)


def _rule_row(kind, scope, active) -> dict:
    return {"kind": kind, "scope": scope, "active": active, "decided": dict.fromkeys(LABELS, 0),
            "right": 0, "wrong": 0, "mistyped": 0, "lucky": 0, "errors": 0,
            "stripped": dict.fromkeys(LABELS, 0)}


def _signal_row(active, sign) -> dict:
    return {"active": active, "sign": sign, "decided": 0, "fired_extract": 0, "fired_rest": 0}


def _assemble(confusion, type_stats, predicted, per_rule, per_signal, per_tag, seen, errors, typed,
              contained=0) -> dict:
    n = {label: sum(confusion[label].values()) for label in LABELS}
    dropped = sum(confusion[label]["drop"] for label in LABELS)
    flagged = sum(confusion[label]["flag"] for label in LABELS)
    typed_right = sum(s["right"] for s in type_stats.values())
    types_expected = [t for t, s in type_stats.items() if s["fixtures"]]
    types_produced = [t for t in types_expected if type_stats[t]["right"]]

    fractions = {
        "hard_drop_recall": (n["drop"] - confusion["drop"]["flag"], n["drop"]),
        "hard_drop_explicit": (confusion["drop"]["drop"] + contained, n["drop"]),
        "hard_drop_precision": (dropped - confusion["extract"]["drop"], dropped),
        "extract_recall": (confusion["extract"]["flag"], n["extract"]),
        "flag_precision": (confusion["extract"]["flag"], flagged),
        "exclude_suppressed_early": (n["exclude"] - confusion["exclude"]["flag"], n["exclude"]),
        "type_accuracy": (typed_right, confusion["extract"]["flag"]),
        "type_coverage": (typed, n["extract"]),
        "types_produced": (len(types_produced), len(types_expected)),
    }
    scores = {name: ratio(*fractions[name]) for name in OFFLINE_RATIOS}
    scores.update({
        "extract_skipped": confusion["extract"]["skip"],
        "extract_hard_dropped": confusion["extract"]["drop"],
        "drop_leaked": confusion["drop"]["flag"],
        "drop_held_by_luck": confusion["drop"]["skip"] - contained,
        "errors": errors,
    })
    scores["fractions"] = {name: list(fraction) for name, fraction in fractions.items()}
    scores["per_type"] = _per_type(type_stats, predicted)
    scores["confusion"] = confusion
    scores["per_rule"] = per_rule
    scores["per_signal"] = _per_signal(per_signal, seen)
    scores["per_tag"] = {
        tag: {"fixtures": row["fixtures"], "right": row["right"], "rate": ratio(row["right"], row["fixtures"]),
              "labels": dict(row["labels"]), "outcomes": dict(row["outcomes"])}
        for tag, row in sorted(per_tag.items())
    }
    return scores


def _per_type(type_stats, predicted) -> dict:
    names = [t for t in DURABLE_TYPES if t in type_stats or t in predicted]
    names += sorted(t for t in set(type_stats) | set(predicted) if t not in names and t is not None)
    out = {}
    for name in names:
        stats = type_stats.get(name, {"fixtures": 0, "flagged": 0, "right": 0, "mistyped_as": Counter()})
        out[name] = {
            "fixtures": stats["fixtures"], "flagged": stats["flagged"], "right": stats["right"],
            "recall": ratio(stats["flagged"], stats["fixtures"]),
            "accuracy": ratio(stats["right"], stats["flagged"]),
            "predicted": predicted.get(name, 0),
            "precision": ratio(stats["right"], predicted.get(name, 0)),
            "mistyped_as": dict(stats["mistyped_as"]),
        }
    return out


def _per_signal(per_signal, seen) -> dict:
    """How often each signal fired on extract windows vs the rest, among windows that
    reached signal scoring (a window dropped first never gives a signal the chance).

    A signal that fires at least as often on the rest as on extract windows weighs
    nothing; for a suppressor (no positive weight) it is the other way round."""
    out = {}
    for signal_id, stats in per_signal.items():
        extract_rate = ratio(stats["fired_extract"], seen["extract"])
        rest_rate = ratio(stats["fired_rest"], seen["rest"])
        boost = stats["sign"] >= 0
        # the side it should fire on, and the side it should not
        aim, other = (extract_rate, rest_rate) if boost else (rest_rate, extract_rate)
        fired_other = stats["fired_rest"] if boost else stats["fired_extract"]
        if not stats["active"]:
            note = "inactive at this level"
        elif stats["fired_extract"] + stats["fired_rest"] == 0:
            note = "never fired"
        elif other is not None and fired_other and (aim is None or other >= aim):
            note = ("fires as often on the rest as on extract windows: weighs nothing" if boost else
                    "suppressor fires as often on extract windows as on the rest: weighs nothing")
        else:
            note = ""
        out[signal_id] = {
            "active": stats["active"], "role": "boost" if boost else "suppress", "decided": stats["decided"],
            "fired_extract": stats["fired_extract"], "seen_extract": seen["extract"], "extract_rate": extract_rate,
            "fired_rest": stats["fired_rest"], "seen_rest": seen["rest"], "rest_rate": rest_rate,
            "lift": None if not rest_rate or extract_rate is None else extract_rate / rest_rate,
            "note": note,
        }
    return out


def check_floors(scores: dict, thresholds: dict) -> list[str]:
    """One line per floor not met. A floor on a metric that is not measured fails:
    a gate that cannot measure must not pass. Live-only floors are not checked here."""
    failures = []
    for name, floor in thresholds.items():
        if name not in OFFLINE_RATIOS:
            continue
        value = scores.get(name)
        if value is None:
            failures.append(f"{name}: not measured (no fixtures in its denominator), floor {floor:g}")
        elif value + _EPSILON < floor:
            num, den = scores.get("fractions", {}).get(name, (None, None))
            detail = f" ({num}/{den})" if den else ""
            failures.append(f"{name}: {value:.3f}{detail} is below the floor {floor:g}")
    return failures


def regressed(name: str, old, new) -> bool:
    """NEW is worse than OLD on this metric (a measured value becoming unmeasured is worse)."""
    if old is None:
        return False
    if new is None:
        return True
    if name in LOWER_IS_BETTER:
        return new > old + _EPSILON
    return new + _EPSILON < old

"""Replay: every window of a transcript archive through one revision, or two side by side.

Files are read one at a time and each window is judged as the hook would judge it (the
session's recent shapes carried along), so memory holds tallies, not windows. Comparing A with
B lists the windows whose decision or type flips. Without labels nobody knows which side is
right, so flips are ordered by what a wrong B would cost, most costly first: a new hard drop
(unrecoverable), noise A dropped that B sends, a send B loses, a send B adds, a changed type.
"""

from __future__ import annotations

import os
import re
from collections import Counter, deque
from dataclasses import dataclass

from gate.language.errors import GateError, Problem
from gate.transcripts.reader import read_transcript
from gate.transcripts.windows import exchanges

RECENT_SHAPES = 32  # window shapes a session remembers, as the hook keeps them (gate/capture's default)
ACTIONS = ("drop", "skip", "flag")
FLIPS = ("newly dropped", "noise now sent", "no longer sent", "newly sent", "retyped")
EXCERPT = 72  # characters of a flipped window's first words in a report


@dataclass
class Side:
    name: str  # 'A' or 'B'
    spec: str  # as given: a path or REV:path
    revision: object
    classifier: object
    level: str


def load_side(name: str, spec: str, level: str | None) -> Side:
    """A revision ready to judge; raises GateError for rules that do not load or a level they lack."""
    from gate.evaluation.evaluate import load_compiled

    revision, classifier = load_compiled(spec)
    if level is not None and level not in revision.levels:
        raise GateError(Problem(spec, f"level '{level}' is not a level of this revision "
                                      f"(levels: {', '.join(revision.levels)})"))
    return Side(name, spec, revision, classifier, level or revision.default_level)


def flip_kind(a, b) -> str | None:
    """What changed between A's decision and B's, named by what it costs if B is wrong."""
    if a.action == b.action:
        return "retyped" if a.action == "flag" and a.type != b.type else None
    if b.action == "drop":
        return "newly dropped"
    if a.action == "drop":
        return "noise now sent" if b.action == "flag" else None  # drop -> skip: still not sent
    if a.action == "flag":
        return "no longer sent"
    return "newly sent"


def replay(files, sides, *, recent_shapes: int = RECENT_SHAPES, progress=None, sampler=None,
           redactor=None) -> dict:
    """Judge every window of `files` with each side; returns the report (plain data).

    `progress(bytes_done, bytes_total, windows)` is called as windows are judged;
    `sampler.offer(path, exchange, decisions, flip)` sees every window (the candidate export).
    """
    sizes = {path: _size(path) for path in files}
    total = sum(sizes.values())
    done_bytes, windows, duplicates = 0, 0, 0
    skipped, unknown, formats = Counter(), Counter(), Counter()
    unreadable, flips, seen = [], [], set()
    actions = {s.name: Counter() for s in sides}
    types = {s.name: Counter() for s in sides}
    deciders = {s.name: Counter() for s in sides}
    errors = {s.name: 0 for s in sides}
    recent: dict = {}
    lines = 0
    for path in files:
        try:
            reading = read_transcript(path, final=True)
        except OSError as exc:
            unreadable.append({"file": path, "error": exc.strerror or str(exc)})
            done_bytes += sizes[path]
            continue
        formats[reading.format] += 1
        skipped.update(reading.skipped)
        unknown.update(reading.unknown)
        lines += reading.lines
        for exchange in exchanges(reading.entries):
            ident = (exchange.session_id, exchange.key)
            if ident in seen:  # a resumed session's file carries the earlier session's entries again
                duplicates += 1
                continue
            seen.add(ident)
            thread = (exchange.session_id, exchange.agent_id)
            decisions = []
            for side in sides:
                shapes = recent.get((side.name, thread))
                if shapes is None:
                    shapes = recent[(side.name, thread)] = deque(maxlen=recent_shapes or None)
                decision = side.classifier.classify(exchange.window, level=side.level,
                                                    recent_shapes=shapes if recent_shapes else ())
                if recent_shapes:
                    shapes.append(decision.shape)
                decisions.append(decision)
                actions[side.name][decision.action] += 1
                deciders[side.name][(decision.action, decision.rule or "")] += 1
                if decision.action == "flag":
                    types[side.name][decision.type] += 1
                if decision.error:
                    errors[side.name] += 1
            windows += 1
            flip = flip_kind(decisions[0], decisions[1]) if len(decisions) == 2 else None
            if flip:
                flips.append(_flip_row(flip, path, exchange, decisions, redactor))
            if sampler is not None:
                sampler.offer(path, exchange, decisions, flip)
            if progress is not None:
                progress(done_bytes + exchange.end, total, windows)
        done_bytes += sizes[path]
        if progress is not None:
            progress(done_bytes, total, windows)
    flips.sort(key=lambda row: FLIPS.index(row["change"]))  # stable: archive order within a kind
    return {
        "sides": [{"name": s.name, "rules": s.spec, "revision": s.revision.revision, "policy": s.revision.policy,
                   "level": s.level} for s in sides],
        "files": len(files), "formats": dict(formats), "bytes": total, "lines": lines,
        "windows": windows, "duplicates": duplicates, "unreadable": unreadable,
        "skipped": dict(skipped.most_common()), "unknown": dict(unknown.most_common()),
        "recent_shapes": recent_shapes,
        "decisions": {name: {a: counts[a] for a in ACTIONS} for name, counts in actions.items()},
        "sent_share": {name: (counts["flag"] / windows if windows else None) for name, counts in actions.items()},
        "types": {name: dict(counts.most_common()) for name, counts in types.items()},
        "rules": _rule_rows(deciders, [s.name for s in sides]),
        "errors": errors,
        "flips": flips,
        "flip_counts": {kind: sum(1 for f in flips if f["change"] == kind) for kind in FLIPS} if len(sides) == 2
        else {},
    }


def _size(path) -> int:
    try:
        return os.path.getsize(path)
    except OSError:
        return 0


def _rule_rows(deciders, names) -> list[dict]:
    """One row per (decision, deciding rule), with each side's count: drops first, then flags, skips."""
    keys = set()
    for counts in deciders.values():
        keys.update(counts)
    order = {"drop": 0, "flag": 1, "skip": 2}
    rows = [{"decision": action, "rule": rule or None, **{n: deciders[n][(action, rule)] for n in names}}
            for action, rule in keys]
    rows.sort(key=lambda r: (order.get(r["decision"], 3), -max(r[n] for n in names), r["rule"] or ""))
    return rows


def _flip_row(kind, path, exchange, decisions, redactor) -> dict:
    a, b = decisions
    return {"change": kind, "file": path, "line": exchange.line, "key": exchange.key,
            "session": exchange.session_id,
            "A": {"decision": a.action, "type": a.type, "rule": a.rule},
            "B": {"decision": b.action, "type": b.type, "rule": b.rule},
            "excerpt": excerpt(exchange.window, redactor)}


_SPACE = re.compile(r"\s+")


def excerpt(window, redactor=None) -> str:
    """The window's first words: the person's, else the assistant's; secrets redacted."""
    first = next((t["content"] for t in window if isinstance(t["content"], str) and t["content"].strip()), None)
    if first is None:
        first = next((b["text"] for t in window if isinstance(t["content"], list)
                      for b in t["content"] if b.get("type") == "text"), "")
    if redactor:  # the whole text, so no secret is cut in half before it is found
        first = redactor.text(first)
    first = _SPACE.sub(" ", first[:EXCERPT * 4]).strip().encode("utf-8", "replace").decode("utf-8")
    return first if len(first) <= EXCERPT else first[:EXCERPT - 1] + "…"

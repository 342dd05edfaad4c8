"""A replay report as text for a terminal."""

from __future__ import annotations

import os

from gate.evaluation.report import table
from gate.transcripts.replay import ACTIONS, FLIPS

FLIPS_SHOWN = 40


def render_replay_text(report: dict) -> str:
    sides = report["sides"]
    names = [s["name"] for s in sides]
    lines = ["gate replay"]
    lines += [f"  {s['name']}  {s['rules']}  policy {s['policy']}  level {s['level']}" for s in sides]
    formats = ", ".join(f"{n} {fmt}" for fmt, n in sorted(report["formats"].items()))
    lines.append(f"  {report['files']} file(s) ({formats or 'none readable'}), {report['lines']:,} lines, "
                 f"{report['windows']:,} windows")
    if report["duplicates"]:
        lines.append(f"  {report['duplicates']} window(s) seen twice (a resumed session's copy) judged once")
    lines.append(f"  recent shapes per session: {report['recent_shapes']} (as the hook keeps them)")
    for bad in report["unreadable"]:
        lines.append(f"  unreadable: {bad['file']}: {bad['error']}")
    if report["skipped"]:
        shown = ", ".join(f"{k} {v:,}" for k, v in list(report["skipped"].items())[:8])
        more = len(report["skipped"]) - 8
        lines.append(f"  lines holding no turn: {shown}" + (f", ... {more} more kinds" if more > 0 else ""))
    if report["unknown"]:
        lines.append("  unknown line types (skipped): " + ", ".join(f"{k} {v}" for k, v in report["unknown"].items()))

    windows = report["windows"] or 1
    lines += ["", *table(["decision", *names], [
        [action, *(_count(report["decisions"][n][action], windows) for n in names)] for action in ACTIONS
    ] + [["sent", *(_share(report["sent_share"][n]) for n in names)]], "l" + "r" * len(names))]

    types = sorted({t for n in names for t in report["types"][n]})
    if types:
        lines += ["", *table(["flagged as", *names], [[t, *(report["types"][n].get(t, 0) for n in names)]
                                                      for t in types], "l" + "r" * len(names))]
    rows = report["rules"]
    if rows:
        lines += ["", *table(["decided by", "decision", *names],
                             [[_rule_name(r), r["decision"], *(r[n] for n in names)] for r in rows],
                             "ll" + "r" * len(names))]
    if any(report["errors"].values()):
        lines.append("rule errors (timeouts, bad input): " + ", ".join(f"{n} {report['errors'][n]}" for n in names))

    if len(sides) == 2:
        lines += ["", _flip_summary(report)]
        shown = report["flips"][:FLIPS_SHOWN]
        if shown:
            lines += table(["change", "window", "A", "B", "first words"],
                           [[f["change"], _where(f), _cell(f["A"]), _cell(f["B"]), f["excerpt"]] for f in shown])
            more = len(report["flips"]) - len(shown)
            if more:
                lines.append(f"... and {more} more (--format json has every flip)")
    return "\n".join(lines) + "\n"


def _flip_summary(report) -> str:
    counts = report["flip_counts"]
    parts = ", ".join(f"{counts[k]} {k}" for k in FLIPS if counts.get(k))
    total = len(report["flips"])
    head = f"windows whose decision or type flips from A to B: {total}"
    return head + (f" ({parts}; most costly first if B is wrong)" if parts else "")


def _rule_name(row) -> str:
    if row["rule"]:
        return row["rule"]
    return "(below the flag threshold)" if row["decision"] == "skip" else "(none)"


def _count(n: int, total: int) -> str:
    return f"{n:,} ({100 * n / total:.1f}%)"


def _share(value) -> str:
    return "-" if value is None else f"{100 * value:.1f}%"


def _cell(side) -> str:
    text = side["decision"] + (f" {side['type']}" if side["type"] else "")
    return text + (f" ({side['rule']})" if side["rule"] else "")


def _where(flip) -> str:
    name = os.path.basename(flip["file"])
    return f"{name}:{flip['line']}" if flip["line"] else name

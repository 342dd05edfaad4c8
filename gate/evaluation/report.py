"""Reports: the report dict (written as JSON), the text scorecard, markdown for a
pull-request comment. Pure: data in, strings out; the CLI does the writing.
"""

from __future__ import annotations

import json
from datetime import datetime, timezone

from gate.evaluation.metrics import LABELS, MISS_OUTCOMES, SCALARS, is_right, outcome

LIST_LIMIT = 40  # lines per list in text and markdown; the report file has every row
NOT_MEASURED = "not measured"

_MISS_TITLES = {
    "hard_dropped": "extract windows hard-dropped: a drop rule is too greedy (the memory is gone, nothing logs it)",
    "skipped": "extract windows skipped: no flag rule matched (a flag rule is missing)",
    "leaked": "noise leaked: drop windows flagged and sent",
    "mistyped": "mistyped: extract windows flagged with the wrong type",
}


# ---------------------------------------------------------------- report dict

def build_report(rules_spec, revision, fixtures, run, *, sweep=None, strict=False) -> dict:
    """The report for one measured run (`run` is an evaluate.LevelRun)."""
    rows = []
    findings = []
    todo_open, todo_closed = [], []
    for fixture, result in zip(fixtures, run.results):
        name = outcome(fixture.label, result.action, result.type, fixture.expect_type, result.trace or (),
                       fixture.window)
        # tuples serialize as JSON lists; copying them into lists would cost a second per 100k rows
        row = {"id": fixture.id, "label": fixture.label, "expect_type": fixture.expect_type,
               "decision": result.action, "type": result.type, "rule": result.rule, "outcome": name,
               "trace": result.trace, "tags": fixture.tags, "file": fixture.file, "line": fixture.line}
        if fixture.todo:
            row["todo"] = fixture.todo
            entry = {"id": fixture.id, "todo": fixture.todo, "outcome": name, "rule": result.rule}
            # noise skipped only by luck is not sent, but the gap a todo names (no rule drops
            # it) is still there, and removing the mark would gate it under hard_drop_explicit
            (todo_closed if is_right(name) and name != "held_by_luck" else todo_open).append(entry)
        if result.error:
            row["error"] = result.error
            findings.append({"id": fixture.id, "file": fixture.file, "line": fixture.line,
                             "error": result.error, "todo": bool(fixture.todo)})
        rows.append(row)
    report = {
        "policy": revision.policy,
        "revision": revision.revision,
        "rules": rules_spec,
        "level": run.level,
        "measured": True,
        "unmeasured": [],
        "strict": strict,
        "scores": run.scores,
        "check": {"level": run.level, **run.check},
        "thresholds": dict(revision.thresholds),
        "fixture_counts": _fixture_counts(fixtures, strict),
        "findings": findings,
        "todo": {"count": len(todo_open) + len(todo_closed), "gated": strict,
                 "closed": todo_closed, "open": todo_open},
        "rows": rows,
        "generated_at": _now(),
    }
    if sweep:
        report["sweep"] = {level: {"scores": lr.scores, "check": {"level": level, **lr.check}}
                           for level, lr in sweep.items()}
    return report


def unmeasured_report(rules_spec, revision, fixtures, unmeasured, *, level=None, strict=False) -> dict:
    """What could not be measured, and why. Its check always fails."""
    failures = [f"cannot measure: {u['what']} did not load ({len(u['why'])} problem(s))" for u in unmeasured]
    return {
        "policy": revision.policy if revision else None,
        "revision": revision.revision if revision else None,
        "rules": rules_spec,
        "level": level or (revision.default_level if revision else None),
        "measured": False,
        "unmeasured": unmeasured,
        "strict": strict,
        "scores": {},
        "check": {"level": level, "passed": False, "failures": failures, "not_checked": []},
        "thresholds": dict(revision.thresholds) if revision else {},
        "fixture_counts": _fixture_counts(fixtures, strict) if fixtures is not None else {},
        "findings": [],
        "todo": {"count": 0, "gated": strict, "closed": [], "open": []},
        "rows": [],
        "generated_at": _now(),
    }


def _fixture_counts(fixtures, strict) -> dict:
    from gate.evaluation.fixtures import coverage

    counts = coverage(fixtures)
    counts["scored"] = counts["total"] if strict else counts["total"] - counts["todo"]
    return counts


def _now() -> str:
    return datetime.now(timezone.utc).replace(microsecond=0).isoformat().replace("+00:00", "Z")


_ENCODER = json.JSONEncoder(ensure_ascii=False)


def dumps(report: dict) -> str:
    """JSON with one top-level key per line and one row per line: readable, greppable,
    and written by the C encoder (an indented dump of 100k rows is seconds slower)."""
    encode = _ENCODER.encode
    parts = []
    for key, value in report.items():
        if isinstance(value, list) and len(value) > 1 and key in ("rows", "fixtures"):
            body = "[\n  " + ",\n  ".join(map(encode, value)) + "\n ]"
        elif key in ("scores", "sweep") and isinstance(value, dict) and value:
            body = "{\n" + ",\n".join(f"  {encode(k)}: {encode(v)}" for k, v in value.items()) + "\n }"
        else:
            body = encode(value)
        parts.append(f" {json.dumps(key)}: {body}")
    return "{\n" + ",\n".join(parts) + "\n}\n"


# ---------------------------------------------------------------- formatting helpers

def fmt(value, digits: int = 3) -> str:
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return str(value)
    return f"{value:.{digits}f}"


def fraction(scores, name) -> str:
    pair = scores.get("fractions", {}).get(name)
    return f"{pair[0]}/{pair[1]}" if pair else ""


def table(header, rows, align=None) -> list[str]:
    """Plain-text columns. `align` is a string of 'l'/'r' per column."""
    rows = [[str(c) for c in row] for row in rows]
    widths = [max([len(str(h))] + [len(r[i]) for r in rows]) for i, h in enumerate(header)]
    align = align or "l" * len(header)

    def line(cells):
        out = [c.ljust(w) if a == "l" else c.rjust(w) for c, w, a in zip(cells, widths, align)]
        return "  ".join(out).rstrip()

    return [line([str(h) for h in header])] + [line(r) for r in rows]


def md_table(header, rows, align=None) -> list[str]:
    align = align or "l" * len(header)
    out = ["| " + " | ".join(_md(h) for h in header) + " |",
           "|" + "|".join("---:" if a == "r" else "---" for a in align) + "|"]
    out += ["| " + " | ".join(_md(c) for c in row) + " |" for row in rows]
    return out


def _md(cell) -> str:
    # '<' would open an HTML tag in a comment ("we never <verb>" shows as "we never ")
    return str(cell).replace("|", "\\|").replace("<", "&lt;").replace("\n", " ")


def _limit(items, limit=LIST_LIMIT):
    return items[:limit], max(0, len(items) - limit)


def _where(row) -> str:
    return f"{row['file']}:{row['line']}" if row.get("file") else ""


def _floor_status(scores, thresholds, name) -> str:
    if name not in thresholds:
        return ""
    floor = thresholds[name]
    value = scores.get(name)
    if value is None:
        return f">= {floor:g}  FAIL (not measured)"
    return f">= {floor:g}  " + ("ok" if value + 1e-9 >= floor else "FAIL")


# ---------------------------------------------------------------- text scorecard

def render_text(report: dict) -> str:
    lines = _header_lines(report)
    if not report["measured"]:
        lines += _unmeasured_lines(report)
        lines += _check_lines(report)
        return "\n".join(lines) + "\n"
    if report.get("sweep"):
        lines += _sweep_lines(report)
        lines += ["", f"scorecard at {report['level']} (the default level; --check applies here)"]
    lines += _scorecard_lines(report)
    lines += _check_lines(report)
    return "\n".join(lines) + "\n"


def _header_lines(report) -> list[str]:
    policy = report["policy"] or "(not loaded)"
    lines = [f"gate eval  {report['rules']}  policy {policy}  level {report['level'] or '-'}"]
    counts = report["fixture_counts"]
    if counts:
        labels = ", ".join(f"{counts['labels'].get(label, 0)} {label}" for label in LABELS)
        todo = counts["todo"]
        extra = ""
        if todo:
            how = "included (--strict)" if report["strict"] else "reported separately, not gated"
            extra = f"; {todo} todo {how}"
        if not report["measured"]:
            lines.append(f"fixtures   {counts['total']} loaded ({labels}), none scored")
        else:
            lines.append(f"fixtures   {counts['scored']} scored of {counts['total']} ({labels}){extra}")
    return lines


def _unmeasured_lines(report) -> list[str]:
    lines = ["", "NOT MEASURED: nothing was scored, so nothing can pass"]
    for item in report["unmeasured"]:
        lines.append(f"  {item['what']} could not be loaded:")
        lines += [f"    {why}" for why in item["why"]]
    return lines


def _metric_rows(scores, thresholds):
    rows = []
    for name in SCALARS:
        value = scores.get(name)
        shown = NOT_MEASURED if value is None else fmt(value)
        rows.append([name, shown, fraction(scores, name), _floor_status(scores, thresholds, name)])
    return rows


def _scorecard_lines(report) -> list[str]:
    scores, rows = report["scores"], report["rows"]
    thresholds = report["thresholds"]
    lines = [""]
    lines += table(["metric", "value", "fraction", "floor"], _metric_rows(scores, thresholds), "lrrl")
    lines.append("('not measured': the denominator is empty; a floor on it fails)")

    confusion = scores["confusion"]
    lines += ["", "decisions per label"]
    lines += table(["label", "drop", "skip", "flag"],
                   [[label] + [confusion[label][a] for a in ("drop", "skip", "flag")] for label in LABELS], "lrrr")

    if scores["per_type"]:
        lines += ["", "per type (extract fixtures by expected type; precision over everything flagged as the type)"]
        lines += table(["type", "fixtures", "flagged", "recall", "right", "accuracy", "predicted", "precision",
                        "mistyped as"],
                       [[t, s["fixtures"], s["flagged"], fmt(s["recall"]), s["right"], fmt(s["accuracy"]),
                         s["predicted"], fmt(s["precision"]),
                         ", ".join(f"{k} {v}" for k, v in s["mistyped_as"].items())]
                        for t, s in scores["per_type"].items()], "lrrrrrrrl")

    lines += ["", "per rule: which rule decided each fixture (by label), right or wrong; "
                  "'stripped' = windows where a turn or payload rule removed a turn"]
    rule_rows = []
    for rule_id, r in scores["per_rule"].items():
        decided = r["decided"]
        stripped = r["stripped"]
        rule_rows.append([
            rule_id if r["active"] else rule_id + " (inactive)", r["kind"],
            decided["drop"], decided["exclude"], decided["extract"], r["right"], r["wrong"], r["mistyped"],
            r["lucky"], r["errors"],
            f"{stripped['drop']}/{stripped['exclude']}/{stripped['extract']}" if r["kind"] == "drop"
            and r["scope"] in ("turn", "payload") else "",
        ])
    lines += table(["rule", "kind", "drop", "exclude", "extract", "right", "wrong", "mistyped", "lucky", "errors",
                    "stripped d/x/e"], rule_rows, "llrrrrrrrrr")

    if scores["per_signal"]:
        lines += ["", "per signal: fired on extract windows vs the rest (among windows that reached signal scoring)"]
        lines += table(["signal", "role", "decided", "extract", "rate", "rest", "rate", "lift", "note"],
                       [[sid, s["role"], s["decided"], f"{s['fired_extract']}/{s['seen_extract']}",
                         fmt(s["extract_rate"]), f"{s['fired_rest']}/{s['seen_rest']}", fmt(s["rest_rate"]),
                         fmt(s["lift"], 1), s["note"]]
                        for sid, s in scores["per_signal"].items()], "llrrrrrrl")

    if scores["per_tag"]:
        lines += ["", "per tag (right = noise and exclude not sent, extract flagged with its type)"]
        lines += table(["tag", "fixtures", "right", "rate", "outcomes"],
                       [[tag, t["fixtures"], t["right"], fmt(t["rate"]),
                         ", ".join(f"{k} {v}" for k, v in sorted(t["outcomes"].items()))]
                        for tag, t in scores["per_tag"].items()], "lrrrl")

    gated = [r for r in rows if report["strict"] or "todo" not in r]
    lines += _miss_lines(gated)
    lines += _row_list("noise held back only by luck", "drop windows no drop rule matched; skipped only because "
                       "no flag rule matches them yet (the gap between hard_drop_recall and hard_drop_explicit)",
                       [r for r in gated if r["outcome"] == "held_by_luck"], lambda r: _tags(r))
    lines += _row_list("exclude windows sent to the platform", "allowed, but its instructions must suppress them",
                       [r for r in gated if r["outcome"] == "sent"], lambda r: f"flagged {r['type']} by {r['rule']}")
    if report["findings"]:
        lines += ["", f"findings ({len(report['findings'])}): fixtures that made the classifier fail"]
        shown, more = _limit(report["findings"])
        lines += [f"  {f['id']}  {f['error']}  {f['file']}:{f['line']}" for f in shown]
        if more:
            lines.append(f"  ... and {more} more (see the report file)")
    lines += _todo_lines(report)
    return lines


def _tags(row) -> str:
    return "[" + ", ".join(row["tags"]) + "]" if row["tags"] else ""


def _decided_by(row) -> str:
    if row["decision"] == "skip":
        return "skipped, no rule decided" if row["rule"] is None else f"skipped by {row['rule']}"
    if row["decision"] == "flag":
        return f"flagged {row['type']} by {row['rule']}"
    return f"dropped by {row['rule'] or '(empty window)'}"


def _miss_lines(rows) -> list[str]:
    misses = {name: [] for name in MISS_OUTCOMES}
    for row in rows:
        if row["outcome"] in misses:
            misses[row["outcome"]].append(row)
    total = sum(len(v) for v in misses.values())
    lines = ["", f"misses ({total})" + (": none" if not total else "")]
    for name, found in misses.items():
        if not found:
            continue
        lines.append(f"  {_MISS_TITLES[name]} ({len(found)})")
        shown, more = _limit(found)
        for row in shown:
            expected = f" expected {row['expect_type']}" if row["label"] == "extract" else ""
            lines.append(f"    {row['id']}{expected}: {_decided_by(row)}  {_where(row)}")
        if more:
            lines.append(f"    ... and {more} more (see the report file)")
    return lines


def _row_list(title, why, rows, describe) -> list[str]:
    if not rows:
        return []
    lines = ["", f"{title} ({len(rows)}): {why}"]
    shown, more = _limit(rows)
    lines += [f"  {r['id']}  {describe(r)}  {_where(r)}".rstrip() for r in shown]
    if more:
        lines.append(f"  ... and {more} more (see the report file)")
    return lines


def _todo_lines(report) -> list[str]:
    todo = report["todo"]
    if not todo["count"]:
        return []
    state = "gated (--strict)" if todo["gated"] else "not gated; --strict gates them"
    lines = ["", f"todo: {todo['count']} known gap(s), {state}"]
    if todo["closed"]:
        lines.append(f"  closed ({len(todo['closed'])}): decided right now; remove their todo mark")
        lines += [f"    {t['id']}: {t['outcome']}" for t in todo["closed"][:LIST_LIMIT]]
    if todo["open"]:
        lines.append(f"  open ({len(todo['open'])}):")
        lines += [f"    {t['id']}: {t['outcome']} (rule {t['rule'] or '-'}): {t['todo']}"
                  for t in todo["open"][:LIST_LIMIT]]
    return lines


def _check_lines(report) -> list[str]:
    check = report["check"]
    where = f" at {check['level']}" if check.get("level") else ""
    lines = ["", f"check{where}: " + ("PASSED" if check["passed"] else "FAILED")]
    lines += [f"  - {f}" for f in check["failures"]]
    if check.get("not_checked"):
        lines.append(f"  (live floors not checked offline: {', '.join(check['not_checked'])})")
    return lines


# ---------------------------------------------------------------- the check alone (gate eval --quiet)

# The fixtures that count against each floor: (their label, or None for any; their outcomes).
_AGAINST_FLOOR = {
    "hard_drop_recall": ("drop", ("leaked",)),
    "hard_drop_explicit": ("drop", ("held_by_luck", "leaked")),
    "hard_drop_precision": ("extract", ("hard_dropped",)),
    "extract_recall": ("extract", ("hard_dropped", "skipped")),
    "flag_precision": (None, ("leaked", "sent")),
    "exclude_suppressed_early": ("exclude", ("sent",)),
    "type_accuracy": ("extract", ("mistyped",)),
    "type_coverage": ("extract", ("skipped", "hard_dropped")),
}


def render_check(report: dict) -> str:
    """What a pre-commit hook shows: one line when the check passes; else each failed
    floor with the fixtures that failed it, by file and line (or why nothing was measured)."""
    check = report["check"]
    counts = report["fixture_counts"]
    scored = f" on {counts['scored']} fixtures" if counts and report["measured"] else ""
    where = f"{report['rules']} ({report['policy'] or 'not loaded'}) at {report['level'] or '-'}{scored}"
    lines = [f"gate eval --check {'passed' if check['passed'] else 'FAILED'}: {where}"]
    if not report["measured"]:
        lines[0] += ": nothing measured"
        for item in report["unmeasured"]:
            lines.append(f"  the {item['what']} did not load:")
            lines += [f"    {why}" for why in item["why"][:LIST_LIMIT]]
        return "\n".join(lines) + "\n"
    gated = [r for r in report["rows"] if report["strict"] or "todo" not in r]
    for failure in check["failures"]:
        lines.append(f"  {failure}")
        label, outcomes = _AGAINST_FLOOR.get(failure.split(":", 1)[0], (None, ()))
        against = [r for r in gated if r["outcome"] in outcomes and label in (None, r["label"])]
        if failure.split(" ", 1)[0].isdigit():  # the classifier failed on fixtures: its findings
            against = [r for r in gated if r.get("error")]
        shown, more = _limit(against)
        for row in shown:
            expected = f" (expected {row['expect_type']})" if row["label"] == "extract" else f" ({row['label']})"
            detail = row["error"] if row.get("error") else _decided_by(row)
            lines.append(f"    {_where(row) or '-'}  {row['id']}{expected}: {detail}")
        if more:
            lines.append(f"    ... and {more} more (see the report file)")
    return "\n".join(lines) + "\n"


def _sweep_lines(report) -> list[str]:
    sweep = report["sweep"]
    levels = list(sweep)
    rows = []
    for name in SCALARS:
        row = [name + (" *" if name in report["thresholds"] else "")]
        row += [fmt(sweep[lv]["scores"].get(name)) for lv in levels]
        rows.append(row)
    rows.append(["misses"] + [str(_miss_count(sweep[lv]["scores"])) for lv in levels])
    rows.append(["floors met"] + ["yes" if sweep[lv]["check"]["passed"] else "no" for lv in levels])
    lines = ["", "sweep: every level side by side (* = gated by a floor; '-' = not measured)"]
    lines += table(["metric"] + levels, rows, "l" + "r" * len(levels))
    return lines


def _miss_count(scores) -> int:
    conf = scores["confusion"]
    mistyped = sum(sum(t["mistyped_as"].values()) for t in scores["per_type"].values())
    return conf["extract"]["drop"] + conf["extract"]["skip"] + conf["drop"]["flag"] + mistyped


# ---------------------------------------------------------------- markdown (pull-request comment)

def render_markdown(report: dict) -> str:
    check = report["check"]
    verdict = "passed" if check["passed"] else "FAILED"
    lines = [f"### gate eval: `{report['rules']}` — check **{verdict}**", "",
             f"policy `{report['policy'] or 'not loaded'}`, level `{report['level'] or '-'}`"]
    counts = report["fixture_counts"]
    if counts and report["measured"]:
        lines[-1] += f", {counts['scored']} fixtures scored of {counts['total']}"
        if counts["todo"]:
            lines[-1] += f" ({counts['todo']} todo" + (", gated)" if report["strict"] else ", not gated)")
    if not report["measured"]:
        lines += ["", "**Not measured** — nothing was scored, so the check fails:"]
        for item in report["unmeasured"]:
            lines += [f"- {item['what']}: `{why}`" for why in item["why"][:LIST_LIMIT]]
        return "\n".join(lines) + "\n"
    lines.append("")
    if report.get("sweep"):
        sweep = report["sweep"]
        levels = list(sweep)
        rows = [[name + (" \\*" if name in report["thresholds"] else "")]
                + [fmt(sweep[lv]["scores"].get(name)) for lv in levels] for name in SCALARS]
        rows.append(["floors met"] + ["yes" if sweep[lv]["check"]["passed"] else "**no**" for lv in levels])
        lines += md_table(["metric"] + levels, rows, "l" + "r" * len(levels))
        lines += ["", "\\* gated by a floor; `-` not measured", "",
                  f"At `{report['level']}`, the default level, where the check applies:", ""]
    scores = report["scores"]
    rows = []
    for name in SCALARS:
        value = scores.get(name)
        floor = report["thresholds"].get(name)
        status = ""
        if floor is not None:
            status = "ok" if value is not None and value + 1e-9 >= floor else "**FAIL**"
        rows.append([name, NOT_MEASURED if value is None else fmt(value), fraction(scores, name),
                     "" if floor is None else f"{floor:g}", status])
    lines += md_table(["metric", "value", "fraction", "floor", ""], rows, "lrrrl")
    gated = [r for r in report["rows"] if report["strict"] or "todo" not in r]
    order = {name: i for i, name in enumerate(MISS_OUTCOMES)}
    misses = sorted((r for r in gated if r["outcome"] in order), key=lambda r: order[r["outcome"]])
    lucky = [r for r in gated if r["outcome"] == "held_by_luck"]
    lines += ["", f"**{len(misses)} miss(es)**, **{len(lucky)}** noise window(s) held back only by luck, "
                  f"{len(report['findings'])} finding(s)."]
    if misses or lucky:
        lines += ["", "<details><summary>misses and luck</summary>", ""]
        shown, more = _limit(misses + lucky)
        lines += md_table(["fixture", "label", "expected", "outcome", "decision", "rule"],
                          [[f"`{r['id']}`", r["label"], r["expect_type"] or "", r["outcome"],
                            r["decision"] + (f" {r['type']}" if r["type"] else ""), r["rule"] or "-"]
                           for r in shown])
        if more:
            lines.append(f"\n… and {more} more in the report file.")
        lines += ["", "</details>"]
    if check["failures"]:
        lines += ["", "**Check failures:**"] + [f"- {f}" for f in check["failures"]]
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------- diff (gate diff)

def _cell(side) -> str:
    text = side["decision"] + (f" {side['type']}" if side["type"] else "")
    return text + (f" ({side['rule']})" if side["rule"] else "")


def _delta(m) -> str:
    if m["delta"] is None:
        return "" if m["old"] == m["new"] else "n/m"
    if m["delta"] == 0:
        return "0"
    return f"{m['delta']:+d}" if isinstance(m["delta"], int) else f"{m['delta']:+.3f}"


def _diff_counts(diff) -> str:
    counts = diff["fixture_counts"]
    todo = f", {counts['todo']} todo (not gated)" if counts["todo"] else ""
    return f"{counts['total']} fixtures{todo}"


def render_diff_text(diff: dict) -> str:
    old, new = diff["old"], diff["new"]
    lines = ["gate diff",
             f"  OLD  {old['rules']}  policy {old['policy']}  level {old['level']}",
             f"  NEW  {new['rules']}  policy {new['policy']}  level {new['level']}",
             f"  on the same {_diff_counts(diff)}", ""]
    rows = []
    for m in diff["metrics"]:
        mark = " *" if m["gated"] else ""
        note = "REGRESSED" if m["regressed"] else ""
        if m["floor"] is not None:
            note = (note + "  " if note else "") + f"floor {m['floor']:g}"
        rows.append([m["metric"] + mark, fmt(m["old"]), fmt(m["new"]), _delta(m), note])
    lines += table(["metric", "OLD", "NEW", "delta", ""], rows, "lrrrl")
    lines.append("(* gated: NEW must meet its floor and must not fall below OLD; '-' = not measured)")

    changed = diff["fixtures"]
    neutral = len(changed) - diff["regressions"] - diff["improvements"]
    lines += ["", f"fixtures whose decision or type changed: {len(changed)} "
                  f"({diff['regressions']} regression(s), {diff['improvements']} improvement(s), {neutral} neutral)"]
    if changed:
        shown, more = _limit(changed, LIST_LIMIT * 5)
        lines += table(["change", "fixture", "label", "expected", "OLD", "NEW"],
                       [[c["change"], c["id"] + (" (todo)" if "todo" in c else ""), c["label"],
                         c["expect_type"] or "", _cell(c["old"]), _cell(c["new"])] for c in shown])
        if more:
            lines.append(f"... and {more} more (--format json has every row)")

    lines += ["", f"rules: verdict {diff['verdict'].upper()}" + ("" if diff["rule_changes"] else
                                                                   " (no behaviour change)")]
    for c in diff["rule_changes"]:
        lines.append(f"  {c['class']:<9} {c['change']:<14} {c['id']}: {c['detail']}")
    lines += ["", "check: " + ("PASSED" if diff["check"]["passed"] else "FAILED")]
    lines += [f"  - {f}" for f in diff["check"]["failures"]]
    return "\n".join(lines) + "\n"


COMMENT_FIXTURE_LIMIT = 20  # changed fixtures a pull-request comment lists; the rest are counted
_VERDICT_MEANS = {
    "breaking": "a rule removed, or matching less than before",
    "minor": "a rule added or matching more",
    "patch": "an edit that changes no match",
    "none": "no change of behaviour",
}


def render_diff_markdown(diff: dict) -> str:
    """A pull-request comment, in the order a reviewer reads it: the metric deltas, then
    the first changed fixtures (regressions first) with a count of the rest, then what
    changed in the rules and the verdict."""
    old, new = diff["old"], diff["new"]
    lines = [f"### gate diff: `{old['rules']}` → `{new['rules']}`", "",
             f"OLD `{old['policy']}` at `{old['level']}`, NEW `{new['policy']}` at `{new['level']}`, "
             f"on the same {_diff_counts(diff)}.", ""]
    rows = []
    for m in diff["metrics"]:
        name = m["metric"] + (" \\*" if m["gated"] else "")
        note = "**regressed**" if m["regressed"] else ""
        rows.append([name, fmt(m["old"]), fmt(m["new"]), _delta(m),
                     "" if m["floor"] is None else f"{m['floor']:g}", note])
    lines += md_table(["metric", "OLD", "NEW", "delta", "floor", ""], rows, "lrrrrl")
    lines += ["", "\\* gated: NEW must meet its floor and must not fall below OLD; `-` not measured"]

    changed = diff["fixtures"]
    neutral = len(changed) - diff["regressions"] - diff["improvements"]
    lines += ["", f"**{len(changed)} fixture(s) changed**: {diff['regressions']} regression(s), "
                  f"{diff['improvements']} improvement(s), {neutral} neutral."]
    if changed:
        shown, more = _limit(changed, COMMENT_FIXTURE_LIMIT)
        lines += [""] + md_table(["change", "fixture", "label", "expected", "OLD", "NEW"],
                                 [["**regression**" if c["change"] == "regression" else c["change"],
                                   f"`{c['id']}`" + (" (todo)" if "todo" in c else ""), c["label"],
                                   c["expect_type"] or "", _cell(c["old"]), _cell(c["new"])] for c in shown])
        if more:
            lines += ["", f"… and {more} more (`gate diff --format json` lists every one)."]

    if diff["rule_changes"]:
        shown, more = _limit(diff["rule_changes"])
        lines += ["", "**What changed in the rules**", ""]
        lines += md_table(["class", "change", "id", "detail"],
                          [[c["class"], c["change"], f"`{c['id']}`", c["detail"]] for c in shown])
        if more:
            lines += ["", f"… and {more} more rule change(s) (`gate diff --format json` lists every one)."]
    check = "passed" if diff["check"]["passed"] else "FAILED"
    lines += ["", f"**Verdict: {diff['verdict']}** ({_VERDICT_MEANS.get(diff['verdict'], diff['verdict'])}); "
                  f"check **{check}**" + (":" if diff["check"]["failures"] else ".")]
    if diff["check"]["failures"]:
        lines += [""] + [f"- {f}" for f in diff["check"]["failures"]]
    return "\n".join(lines) + "\n"

"""The audit report as plain text, for a terminal or a CI log."""

from __future__ import annotations

from gate.evaluation.report import table

MAX_DAYS = 31  # the text shows the latest days; JSON and HTML carry all of them
SAMPLE_WIDTH = 110


def pct(x: float) -> str:
    return f"{x:.1%}"


def render(report: dict, check: dict | None = None) -> str:
    r = report
    rules = r["rules"]
    nd, noise, types = r["near_duplicates"], r["noise"], r["types"]
    days = [d for d in r["days"]]
    known_days = [d["day"] for d in days if not d["day"].startswith("(")]
    span = f", {len(known_days)} days ({known_days[0]} .. {known_days[-1]})" if known_days else ""
    lines = [
        f"gate audit  {r['source']}  rules {rules['path']} (policy {rules['policy']}, level {rules['level']})",
        f"{r['memories']:,} memories, {r['distinct_shapes']:,} distinct shapes, "
        f"{len(r['policies'])} {'policy' if len(r['policies']) == 1 else 'policies'}{span}",
        "",
        f"near-duplicates  {pct(nd['share'])}  ({nd['memories']:,} memories in {nd['clusters']:,} clusters; "
        f"largest {nd['largest']:,}; shapes at least {nd['similarity']:g} alike are one cluster)",
        f"noise            {pct(noise['share'])}  ({noise['memories']:,}): noise markers {pct(noise['marker_share'])} "
        f"({noise['marker_memories']:,}), " + (
            f"the drop rules would drop {pct(noise['would_drop_share'])} ({noise['would_drop']:,})"
            if rules["drop_rules_judged"] else "drop rules not judged (--skip-drop-rules)"),
        f"types            untyped {pct(types['untyped_share'])}, uncategorized {pct(types['uncategorized_share'])}",
    ]
    if noise["markers"]:
        lines.append("  markers: " + ", ".join(f"{k} {v:,}" for k, v in noise["markers"].items()))
    if noise["drop_rules"]:
        lines.append("  drop rules: " + ", ".join(f"{k} {v:,}" for k, v in noise["drop_rules"].items()))

    lines += ["", "by policy (shares of the policy's own memories)"]
    rows = []
    for p in r["policies"]:
        name = p["policy"] + (" (these rules)" if p["current"] else "")
        when = f"{p['first_day']} .. {p['last_day']}" if p["first_day"] else "-"
        rows.append([name, f"{p['memories']:,}", pct(p["corpus_share"]), pct(p["near_duplicate_share"]),
                     pct(p["noise_share"]), pct(p["would_drop_share"]), when, p.get("revision") or "-"])
    lines += ["  " + x for x in table(["policy", "memories", "corpus", "near-dup", "noise", "would drop", "days",
                                       "rules file"], rows, "lrrrrrll")]

    lines += ["", "by day" + (f" (latest {MAX_DAYS} of {len(days)})" if len(days) > MAX_DAYS else "")]
    rows = [[d["day"], f"{d['memories']:,}", pct(d["near_duplicate_share"]), pct(d["noise_share"]),
             _bar(d["memories"], max((x["memories"] for x in days), default=0))] for d in days[-MAX_DAYS:]]
    lines += ["  " + x for x in table(["day", "memories", "near-dup", "noise", ""], rows, "lrrrl")]

    lines += ["", "by type (metadata.type; categories are the platform's, filled hours later if ever)"]
    rows = [[t["type"] or "(untyped)", f"{t['memories']:,}", pct(t["share"]), pct(t["uncategorized_share"]),
             "-" if t["category_agrees_share"] is None else pct(t["category_agrees_share"])] for t in types["rows"]]
    lines += ["  " + x for x in table(["type", "memories", "share", "uncategorized", "category agrees"],
                                      rows, "lrrrr")]

    if r["clusters"]:
        lines += ["", f"largest near-duplicate clusters ({len(r['clusters'])} of {nd['clusters']:,})"]
        for c in r["clusters"]:
            when = f"{c['first_day']} .. {c['last_day']}" if c["first_day"] else "no dates"
            policies = ", ".join(f"{p} {n:,}" for p, n in c["policies"].items())
            lines.append(f"  #{c['id']}  {c['size']:,} memories, {c['shapes']} shape{'s' if c['shapes'] > 1 else ''}, "
                         f"{when}, noise {pct(c['noise_share'])}; {policies}")
            lines.append(f"      shape: {_clip(c['shape'])}")
            why = []
            if c["markers"]:
                why.append("markers " + ", ".join(c["markers"]))
            if c["drop_rule"]:
                why.append(f"drop rule {c['drop_rule']}")
            if why:
                lines.append("      " + "; ".join(why))
            for sample in c["samples"]:
                lines.append(f"      | {_clip(sample)}")
    if check is not None:
        lines.append("")
        lines += render_check(check)
    return "\n".join(lines)


def render_check(check: dict) -> list[str]:
    if check["missing"]:
        return ["check: cannot run"] + ["  " + m for m in check["missing"]]
    head = "check: PASSED" if check["passed"] else "check: FAILED"
    ceilings = ", ".join(f"{k} {v:g}" for k, v in check["ceilings"].items())
    return [f"{head} ({ceilings})"] + ["  " + f for f in check["failures"]]


def _bar(n: int, most: int, width: int = 30) -> str:
    return "#" * max(1, round(width * n / most)) if most and n else ""


def _clip(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= SAMPLE_WIDTH else text[:SAMPLE_WIDTH - 3] + "..."

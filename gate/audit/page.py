"""The audit report as one self-contained HTML page: inline CSS and SVG, no script, no network.

Fit to attach to an incident or a weekly job: the headline shares against their ceilings, the
memories written per day (noise, near-duplicates, the rest), the per-policy table, the largest
clusters with samples, and the type table. Every piece of memory text is escaped.
"""

from __future__ import annotations

from html import escape

from gate.audit.text import pct

_CSS = """
:root { --ink:#1d2330; --muted:#5d6677; --line:#e3e6ec; --bg:#f6f7f9; --card:#fff;
        --clean:#7b93b8; --dup:#e2a33b; --noise:#d2553f; --ok:#2f8f5b; --bad:#c23b2a; }
* { box-sizing: border-box; }
body { margin:0; background:var(--bg); color:var(--ink);
       font: 15px/1.5 -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif; }
main { max-width: 1120px; margin: 0 auto; padding: 28px 24px 48px; }
header h1 { font-size: 24px; margin: 0 0 4px; letter-spacing: -0.01em; }
header p { margin: 0; color: var(--muted); }
code, .mono { font-family: ui-monospace, "SFMono-Regular", Menlo, Consolas, monospace; font-size: 13px; }
section { background: var(--card); border: 1px solid var(--line); border-radius: 10px;
          padding: 18px 20px; margin-top: 18px; }
section h2 { font-size: 17px; margin: 0 0 12px; }
section h2 small { font-weight: normal; color: var(--muted); font-size: 13px; margin-left: 6px; }
.cards { display: grid; grid-template-columns: repeat(auto-fit, minmax(190px, 1fr)); gap: 12px; margin-top: 18px; }
.card { background: var(--card); border: 1px solid var(--line); border-radius: 10px; padding: 14px 16px; }
.card .label { color: var(--muted); font-size: 13px; }
.card .value { font-size: 28px; font-weight: 650; letter-spacing: -0.02em; }
.card .note { color: var(--muted); font-size: 12.5px; }
.card.over { border-color: var(--bad); box-shadow: inset 4px 0 0 var(--bad); }
.card.within { box-shadow: inset 4px 0 0 var(--ok); }
.verdict { margin-top: 18px; padding: 12px 16px; border-radius: 10px; font-weight: 600; }
.verdict.pass { background: #e6f4ec; color: #1f6a41; }
.verdict.fail { background: #fbe9e6; color: #8f2517; }
.verdict.missing { background: #fff4e0; color: #7a4d00; }
.verdict ul { margin: 6px 0 0; padding-left: 20px; font-weight: normal; }
table { border-collapse: collapse; width: 100%; }
th, td { text-align: left; padding: 7px 10px; border-bottom: 1px solid var(--line); vertical-align: top; }
th { font-size: 12.5px; text-transform: uppercase; letter-spacing: 0.04em; color: var(--muted); font-weight: 600; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
tr:last-child td { border-bottom: none; }
.meter { display: inline-block; width: 64px; height: 7px; background: #eef0f4; border-radius: 4px;
         margin-left: 8px; vertical-align: middle; overflow: hidden; }
.meter i { display: block; height: 100%; }
.tag { display: inline-block; padding: 1px 7px; border-radius: 999px; background: #eef0f4; color: var(--muted);
       font-size: 12px; margin-left: 6px; }
.tag.current { background: #e4ecfb; color: #28569e; }
.legend { display: flex; gap: 16px; color: var(--muted); font-size: 13px; margin-bottom: 6px; }
.legend span::before { content: ""; display: inline-block; width: 11px; height: 11px; border-radius: 2px;
                       margin-right: 6px; vertical-align: -1px; background: var(--c); }
svg text { font-family: inherit; }
.clusters { display: grid; gap: 12px; }
.cluster { border: 1px solid var(--line); border-radius: 8px; padding: 12px 14px; }
.cluster .head { display: flex; flex-wrap: wrap; gap: 6px 14px; align-items: baseline; }
.cluster .size { font-size: 18px; font-weight: 650; }
.cluster .shape { background: #f3f4f7; border-radius: 6px; padding: 6px 9px; margin: 8px 0; overflow-wrap: anywhere; }
.cluster ol { margin: 6px 0 0; padding-left: 22px; color: #333b4a; }
.cluster li { overflow-wrap: anywhere; }
.muted { color: var(--muted); }
.grid2 { display: grid; grid-template-columns: 1fr 1fr; gap: 18px; }
@media (max-width: 800px) { .grid2 { grid-template-columns: 1fr; } }
footer { color: var(--muted); font-size: 12.5px; margin-top: 22px; }
"""

_CEILING_KEYS = {"near_duplicates": "audit_max_near_duplicate_share", "noise": "audit_max_noise_share"}


def render(report: dict, check: dict | None = None) -> str:
    verdict = check if check is not None else report.get("check")
    r = report
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en">',
        "<head>",
        '<meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>gate audit: {escape(_source_name(r['source']))}</title>",
        f"<style>{_CSS}</style>",
        "</head>",
        "<body>",
        "<main>",
        _header(r),
        _check_banner(check) if check is not None else "",
        _cards(r, verdict),
        _days(r),
        _policies(r),
        _clusters(r),
        '<div class="grid2">' + _types(r) + _sizes(r) + "</div>",
        _noise(r),
        '<footer>Near-duplicate: a memory in a cluster of two or more (one shape, or shapes at least '
        f'{r["near_duplicates"]["similarity"]:g} alike by token set). Noise: a noise marker matches the '
        "text, or the revision's drop rules would drop it. Shares of a policy or a day are of its own "
        "memories. Made by <code>gate audit</code>.</footer>",
        "</main>",
        "</body>",
        "</html>",
    ]
    return "\n".join(p for p in parts if p)


def _source_name(source: str) -> str:
    return source.rsplit("/", 1)[-1]


def _header(r: dict) -> str:
    rules = r["rules"]
    days = [d["day"] for d in r["days"] if not d["day"].startswith("(")]
    span = f" · {escape(days[0])} to {escape(days[-1])}" if days else ""
    return ("<header><h1>Memory store audit</h1>"
            f"<p><code>{escape(r['source'])}</code> · {r['memories']:,} memories{span}</p>"
            f"<p>judged by <code>{escape(rules['path'])}</code> (policy <code>{escape(rules['policy'])}</code>, "
            f"level {escape(rules['level'])}, text as a {escape(rules['role'])} turn)</p></header>")


def _check_banner(check: dict) -> str:
    if check["missing"]:
        items = "".join(f"<li>{escape(m)}</li>" for m in check["missing"])
        return f'<div class="verdict missing" id="check">Check cannot run<ul>{items}</ul></div>'
    if check["passed"]:
        return '<div class="verdict pass" id="check">Check passed: every share is within its ceiling</div>'
    items = "".join(f"<li>{escape(f)}</li>" for f in check["failures"])
    return f'<div class="verdict fail" id="check">Check failed<ul>{items}</ul></div>'


def _cards(r: dict, verdict: dict | None) -> str:
    nd, noise, types = r["near_duplicates"], r["noise"], r["types"]
    ceilings = (verdict or {}).get("ceilings", {})

    def card(label, value, note, section=None):
        cls = ""
        if section is not None and _CEILING_KEYS[section] in ceilings:
            ceiling = ceilings[_CEILING_KEYS[section]]
            cls = " over" if r[section]["share"] > ceiling + 1e-12 else " within"
            note += f" · ceiling {pct(ceiling)}"
        return (f'<div class="card{cls}"><div class="label">{label}</div><div class="value">{value}</div>'
                f'<div class="note">{note}</div></div>')

    return '<div class="cards">' + "".join([
        card("Memories", f"{r['memories']:,}", f"{r['distinct_shapes']:,} distinct shapes"),
        card("Near-duplicate share", pct(nd["share"]),
             f"{nd['memories']:,} in {nd['clusters']:,} clusters", "near_duplicates"),
        card("Noise share", pct(noise["share"]),
             f"markers {pct(noise['marker_share'])} · drop rules {pct(noise['would_drop_share'])}", "noise"),
        card("Largest cluster", f"{nd['largest']:,}", "memories of one heartbeat or fact"),
        card("Uncategorized", pct(types["uncategorized_share"]), f"untyped {pct(types['untyped_share'])}"),
    ]) + "</div>"


def _days(r: dict) -> str:
    days = r["days"]
    if not days:
        return ""
    width, height, left, bottom, top = 1060, 260, 48, 42, 12
    plot_w, plot_h = width - left - 10, height - bottom - top
    most, tick = _scale(max(d["memories"] for d in days))
    step = plot_w / len(days)
    bar = max(1.0, step * 0.72)
    out = [f'<svg id="per-day-chart" role="img" aria-label="memories written per day" viewBox="0 0 {width} {height}" '
           f'width="100%" preserveAspectRatio="xMidYMid meet" xmlns="http://www.w3.org/2000/svg">']
    for value in range(0, most + 1, tick):
        y = top + plot_h * (1 - value / most)
        out.append(f'<line x1="{left}" x2="{width - 10}" y1="{y:.1f}" y2="{y:.1f}" stroke="#e3e6ec"/>')
        out.append(f'<text x="{left - 6}" y="{y + 4:.1f}" text-anchor="end" font-size="11" fill="#5d6677">'
                   f'{_short_count(value)}</text>')
    label_every = max(1, round(len(days) / 12))
    for i, d in enumerate(days):
        x = left + i * step + (step - bar) / 2
        noise = d["noise"]
        dup = d["near_duplicates_not_noise"]
        clean = d["memories"] - noise - dup
        y = top + plot_h
        tip = (f"{d['day']}: {d['memories']:,} memories, noise {pct(d['noise_share'])}, "
               f"near-duplicate {pct(d['near_duplicate_share'])}")
        out.append(f"<g><title>{escape(tip)}</title>")
        for count, color in ((clean, "var(--clean)"), (dup, "var(--dup)"), (noise, "var(--noise)")):
            if count <= 0:
                continue
            h = plot_h * count / most
            y -= h
            out.append(f'<rect x="{x:.1f}" y="{y:.1f}" width="{bar:.1f}" height="{h:.1f}" fill="{color}"/>')
        out.append("</g>")
        if i % label_every == 0:
            out.append(f'<text x="{x + bar / 2:.1f}" y="{height - bottom + 16}" text-anchor="middle" font-size="11" '
                       f'fill="#5d6677">{escape(d["day"][5:] if d["day"][:1].isdigit() else d["day"])}</text>')
    out.append("</svg>")
    legend = ('<div class="legend"><span style="--c:var(--clean)">other memories</span>'
              '<span style="--c:var(--dup)">near-duplicates</span>'
              '<span style="--c:var(--noise)">noise</span></div>')
    rows = "".join(
        f"<tr><td>{escape(d['day'])}</td><td class='num'>{d['memories']:,}</td>"
        f"<td class='num'>{pct(d['near_duplicate_share'])}</td><td class='num'>{pct(d['noise_share'])}</td></tr>"
        for d in days[-14:])
    table = (f'<details><summary class="muted">the latest {min(14, len(days))} days as numbers</summary>'
             '<table id="per-day-table"><thead><tr><th>day</th><th class="num">memories</th>'
             f'<th class="num">near-dup</th><th class="num">noise</th></tr></thead><tbody>{rows}</tbody></table>'
             "</details>")
    return (f'<section><h2>Memories written per day<small>{len(days)} days</small></h2>{legend}'
            + "".join(out) + table + "</section>")


def _scale(largest: int) -> tuple[int, int]:
    """(axis top, tick step): a step of 1, 2 or 5 times a power of ten, four to six ticks."""
    largest = max(1, largest)
    step = 1
    while True:
        for m in (1, 2, 5):
            if largest <= step * m * 5:
                tick = step * m
                return -(-largest // tick) * tick, tick
        step *= 10


def _short_count(x: float) -> str:
    if x >= 1_000_000:
        return f"{x / 1_000_000:.1f}M"
    if x >= 10_000:
        return f"{x / 1000:.0f}k"
    if x >= 1000:
        return f"{x / 1000:.1f}k"
    return f"{x:.0f}"


def _meter(x: float, color: str) -> str:
    return f'<span class="meter"><i style="width:{min(1.0, x) * 100:.1f}%;background:{color}"></i></span>'


def _policies(r: dict) -> str:
    rows = []
    for p in r["policies"]:
        tags = ""
        if p["current"]:
            tags += '<span class="tag current">these rules</span>'
        if p.get("revision"):
            tags += f'<span class="tag">{escape(p["revision"])}</span>'
        when = f"{escape(p['first_day'])} to {escape(p['last_day'])}" if p["first_day"] else "—"
        rows.append(
            f"<tr><td><code>{escape(p['policy'])}</code>{tags}</td><td class='num'>{p['memories']:,}</td>"
            f"<td class='num'>{pct(p['corpus_share'])}</td>"
            f"<td class='num'>{pct(p['near_duplicate_share'])}{_meter(p['near_duplicate_share'], 'var(--dup)')}</td>"
            f"<td class='num'>{pct(p['noise_share'])}{_meter(p['noise_share'], 'var(--noise)')}</td>"
            f"<td class='num'>{pct(p['would_drop_share'])}</td><td>{when}</td></tr>")
    return ('<section><h2>By policy<small>the rules revision stamped on each memory (metadata.policy); '
            "shares of the policy's own memories</small></h2>"
            '<table id="per-policy-table"><thead><tr><th>policy</th><th class="num">memories</th>'
            '<th class="num">of corpus</th><th class="num">near-duplicate</th><th class="num">noise</th>'
            f'<th class="num">would drop</th><th>written</th></tr></thead><tbody>{"".join(rows)}</tbody></table>'
            "</section>")


def _clusters(r: dict) -> str:
    clusters = r["clusters"]
    if not clusters:
        return ('<section id="largest-clusters"><h2>Largest near-duplicate clusters</h2>'
                '<p class="muted">No two memories share a shape.</p></section>')
    cards = []
    for c in clusters:
        policies = ", ".join(f"<code>{escape(p)}</code> {n:,}" for p, n in c["policies"].items())
        when = f"{escape(c['first_day'])} to {escape(c['last_day'])}" if c["first_day"] else "no dates"
        why = []
        if c["markers"]:
            why.append("markers " + ", ".join(escape(m) for m in c["markers"]))
        if c["drop_rule"]:
            why.append(f"drop rule <code>{escape(c['drop_rule'])}</code>")
        samples = "".join(f"<li>{escape(s)}</li>" for s in c["samples"])
        cards.append(
            f'<div class="cluster"><div class="head"><span class="size">{c["size"]:,} memories</span>'
            f'<span class="muted">#{c["id"]} · {c["shapes"]} shape{"s" if c["shapes"] > 1 else ""} · {when} · '
            f'noise {pct(c["noise_share"])}</span></div>'
            f'<div class="shape mono">{escape(c["shape"])}</div>'
            f'<div class="muted">{policies}{" · " + "; ".join(why) if why else ""}</div>'
            f"<ol>{samples}</ol></div>")
    total = r["near_duplicates"]["clusters"]
    return (f'<section id="largest-clusters"><h2>Largest near-duplicate clusters<small>{len(clusters)} of '
            f'{total:,}; the shape collapses numbers, ids, hashes, paths and times</small></h2>'
            f'<div class="clusters">{"".join(cards)}</div></section>')


def _types(r: dict) -> str:
    rows = "".join(
        f"<tr><td>{escape(t['type'] or '(untyped)')}</td><td class='num'>{t['memories']:,}</td>"
        f"<td class='num'>{pct(t['share'])}</td><td class='num'>{pct(t['uncategorized_share'])}</td>"
        f"<td class='num'>{'—' if t['category_agrees_share'] is None else pct(t['category_agrees_share'])}</td></tr>"
        for t in r["types"]["rows"])
    return ('<section><h2>By type<small>metadata.type against the platform\'s categories</small></h2>'
            '<table id="per-type-table"><thead><tr><th>type</th><th class="num">memories</th><th class="num">share</th>'
            '<th class="num">uncategorized</th><th class="num">category agrees</th></tr></thead>'
            f"<tbody>{rows}</tbody></table></section>")


def _sizes(r: dict) -> str:
    rows = "".join(f"<tr><td>{escape(b['sizes'])}</td><td class='num'>{b['clusters']:,}</td>"
                   f"<td class='num'>{b['memories']:,}</td></tr>" for b in r["near_duplicates"]["cluster_sizes"])
    return ('<section><h2>Cluster sizes</h2><table id="cluster-size-table"><thead><tr><th>memories per cluster</th>'
            f'<th class="num">clusters</th><th class="num">memories</th></tr></thead><tbody>{rows}</tbody></table>'
            "</section>")


def _noise(r: dict) -> str:
    noise = r["noise"]
    if not noise["markers"] and not noise["drop_rules"]:
        return ""
    rows = "".join(f"<tr><td>noise marker</td><td><code>{escape(k)}</code></td><td class='num'>{v:,}</td></tr>"
                   for k, v in noise["markers"].items())
    rows += "".join(f"<tr><td>drop rule</td><td><code>{escape(k)}</code></td><td class='num'>{v:,}</td></tr>"
                    for k, v in noise["drop_rules"].items())
    return ('<section><h2>What the noise is<small>memories each marker or drop rule matches '
            '(one memory can match several)</small></h2><table id="noise-table"><thead><tr><th>kind</th><th>id</th>'
            f'<th class="num">memories</th></tr></thead><tbody>{rows}</tbody></table></section>')

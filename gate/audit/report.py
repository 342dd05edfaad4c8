"""The audit report: one JSON-ready dict, built once from the tally; text and HTML render it.

Definitions (README's `gate audit` section says the same):
- near-duplicate: a memory in a cluster of two or more (one shape, or shapes at least
  `similarity` alike); the share is near-duplicate memories / memories (the v1 corpus: 20.5%);
- noise: a memory whose text a noise marker matches, or which the revision's drop rules would
  drop; marker and drop figures are also given apart;
- a policy's shares are over that policy's own memories, a day's over that day's.
"""

from __future__ import annotations

from collections import Counter, defaultdict

from gate.audit.records import NO_POLICY, UNKNOWN_DAY
from gate.audit.scan import DROPPED, MARKER
from gate.platform.secret import redact

SAMPLES = 3
CLUSTER_SIZE_BUCKETS = ((2, 2), (3, 5), (6, 20), (21, 100), (101, None))


def share(part: int, whole: int) -> float:
    return part / whole if whole else 0.0


def build(tally, clusters, *, source: str, rules: dict, similarity: float, top: int) -> dict:
    memories = tally.memories
    marker_ids = rules.get("marker_ids", ())
    totals = Counter()
    by_policy: dict = defaultdict(Counter)
    by_day: dict = defaultdict(Counter)
    for policy, day, flags, in_cluster, n in tally.attribution():
        for bucket in (totals, by_policy[policy], by_day[day]):
            bucket["memories"] += n
            if flags:
                bucket["noise"] += n
            if flags & MARKER:
                bucket["marker"] += n
            if flags & DROPPED:
                bucket["dropped"] += n
            if in_cluster:
                bucket["near_duplicate"] += n
                if not flags:
                    bucket["near_duplicate_clean"] += n
    policy_days = tally.policy_days()

    near = totals["near_duplicate"]
    markers = Counter()
    for bits, n in tally.marker_hits.items():
        for i, marker_id in enumerate(marker_ids):
            if bits >> i & 1:
                markers[marker_id] += n
    report = {
        "source": source,
        "rules": {k: rules[k] for k in ("path", "revision", "policy", "level", "role", "drop_rules_judged")},
        "memories": memories,
        "distinct_shapes": tally.distinct_shapes(),
        "near_duplicates": {
            "share": share(near, memories), "memories": near, "clusters": len(clusters),
            "largest": clusters[0].size if clusters else 0, "similarity": similarity,
            "cluster_sizes": _size_histogram(clusters),
        },
        "noise": {
            "share": share(totals["noise"], memories), "memories": totals["noise"],
            "marker_share": share(totals["marker"], memories), "marker_memories": totals["marker"],
            "markers": {m: markers[m] for m in marker_ids if markers[m]},
            "would_drop_share": share(totals["dropped"], memories), "would_drop": totals["dropped"],
            "drop_rules": dict(tally.drop_hits.most_common()),
        },
        "policies": _policies(by_policy, policy_days, memories, rules.get("policy")),
        "types": _types(tally, memories),
        "days": [_shares(day, c, "day") for day, c in sorted(by_day.items(), key=lambda kv: _day_order(kv[0]))],
        "clusters": _largest(tally, clusters[:top], marker_ids),
    }
    return report


def _shares(name, c: Counter, key: str) -> dict:
    n = c["memories"]
    return {key: name, "memories": n, "near_duplicate_share": share(c["near_duplicate"], n),
            "noise_share": share(c["noise"], n), "marker_share": share(c["marker"], n),
            "would_drop_share": share(c["dropped"], n), "near_duplicates": c["near_duplicate"],
            "noise": c["noise"], "near_duplicates_not_noise": c["near_duplicate_clean"]}


def _day_order(day: str):
    return (day == UNKNOWN_DAY, day)


def _policies(by_policy: dict, days: dict, memories: int, current: str | None) -> list:
    rows = []
    for policy, c in by_policy.items():
        row = _shares(policy, c, "policy")
        row["corpus_share"] = share(c["memories"], memories)
        row["first_day"], row["last_day"] = days.get(policy, (None, None))
        row["revision"] = None  # the rules file with this policy id, filled in by the command
        row["current"] = policy == current
        rows.append(row)
    rows.sort(key=lambda r: (r["policy"] == NO_POLICY, r["first_day"] or "", r["policy"]))
    return rows


def _types(tally, memories: int) -> dict:
    per_type: dict = defaultdict(Counter)
    for (mtype, categorized, agrees), n in tally.types.items():
        c = per_type[mtype]
        c["memories"] += n
        c["categorized"] += n if categorized else 0
        c["agrees"] += n if agrees else 0
    rows = []
    for mtype, c in sorted(per_type.items(), key=lambda kv: (kv[0] is None, -kv[1]["memories"], kv[0] or "")):
        rows.append({"type": mtype, "memories": c["memories"], "share": share(c["memories"], memories),
                     "uncategorized_share": share(c["memories"] - c["categorized"], c["memories"]),
                     "category_agrees_share": share(c["agrees"], c["categorized"]) if mtype else None})
    untyped = per_type[None]["memories"] if None in per_type else 0
    uncategorized = sum(c["memories"] - c["categorized"] for c in per_type.values())
    return {"rows": rows, "untyped": untyped, "untyped_share": share(untyped, memories),
            "uncategorized": uncategorized, "uncategorized_share": share(uncategorized, memories),
            "categories": dict(tally.categories.most_common())}


def _size_histogram(clusters) -> list:
    out = []
    for low, high in CLUSTER_SIZE_BUCKETS:
        inside = [c for c in clusters if c.size >= low and (high is None or c.size <= high)]
        label = str(low) if low == high else (f"{low}-{high}" if high else f">{low - 1}")
        out.append({"sizes": label, "clusters": len(inside), "memories": sum(c.size for c in inside)})
    return out


def _largest(tally, clusters, marker_ids) -> list:
    keys = [key for c in clusters for _, key in c.shapes[:SAMPLES]]
    shapes = tally.shape_rows(keys)
    breakdown: dict = defaultdict(lambda: {"policies": Counter(), "days": set(), "noise": 0})
    for cluster_id, policy, day, flags, n in tally.cluster_breakdown([c.id for c in clusters]):
        b = breakdown[cluster_id]
        b["policies"][policy] += n
        if day != UNKNOWN_DAY:
            b["days"].add(day)
        b["noise"] += n if flags else 0
    out = []
    for c in clusters:
        rep = shapes.get(c.shapes[0][1], {})
        samples = []
        for _, key in c.shapes[:SAMPLES]:
            row = shapes.get(key)
            if row is None:
                continue
            samples.append(redact(row["first_text"] or ""))
            if row["n"] > 1 and len(samples) < SAMPLES and row["last_text"] != row["first_text"]:
                samples.append(redact(row["last_text"] or ""))
        b = breakdown[c.id]
        days = sorted(b["days"])
        bits = rep.get("markers") or 0
        out.append({
            "id": c.id, "size": c.size, "shapes": len(c.shapes), "shape": rep.get("shape", ""),
            "samples": samples[:SAMPLES], "policies": dict(b["policies"].most_common()),
            "first_day": days[0] if days else None, "last_day": days[-1] if days else None,
            "noise_share": share(b["noise"], c.size),
            "markers": [m for i, m in enumerate(marker_ids) if bits >> i & 1],
            "drop_rule": rep.get("drop_rule"),
        })
    return out

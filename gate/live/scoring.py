"""Live scores from per-fixture rows: pure functions, no I/O, shared by the runner and rescore.

A row's `status` says what the platform did with the fixture's window:
  stored      >= 1 memory visible through a latest_only read
  suppressed  nothing stored: the event SUCCEEDED with no results, or nothing after --min-settle
  timed_out   nothing visible before --timeout (an extract miss; an exclude we cannot judge)
  failed      the send or the extraction failed: not measured
  in_flight   the run ended (interrupted) before this row concluded: not measured
  not_sent    the run ended before this row was sent: not measured
A ratio whose denominator is empty is None ("not measured"), never 1.0 or 0.0.
"""

from __future__ import annotations

import regex

MEASURED_EXTRACT = ("stored", "suppressed", "timed_out")
MEASURED_EXCLUDE = ("stored", "suppressed")
MARKER_TIMEOUT = 0.5  # seconds per marker per memory; a runaway pattern is a finding, not a hang


def ratio(num: int, den: int) -> float | None:
    return None if den == 0 else num / den


def compile_markers(markers) -> list[tuple[str, object]]:
    """NoiseMarker(id, pattern) items, or {id, pattern} dicts, compiled case-insensitively."""
    out = []
    for m in markers or ():
        mid = m["id"] if isinstance(m, dict) else m.id
        pattern = m["pattern"] if isinstance(m, dict) else m.pattern
        out.append((mid, regex.compile(pattern, regex.IGNORECASE)))
    return out


def find_leaks(text: str, compiled) -> list[str]:
    hits = []
    for mid, rx in compiled:
        try:
            if rx.search(text or "", timeout=MARKER_TIMEOUT):
                hits.append(mid)
        except TimeoutError:
            hits.append(f"{mid}(timeout)")
    return hits


def annotate_leaks(rows: list[dict], markers) -> list[dict]:
    """Recompute each row's `leaks` from its stored memory text; returns new rows."""
    compiled = compile_markers(markers)
    out = []
    for row in rows:
        row = dict(row)
        leaks = []
        for mem in row.get("memories") or []:
            hits = find_leaks(mem.get("text") or "", compiled)
            if hits:
                leaks.append({"memory_id": mem.get("id"), "markers": hits, "text": mem.get("text")})
        row["leaks"] = leaks
        out.append(row)
    return out


def row_type_match(row: dict) -> bool | None:
    """Every stored memory of an extract fixture carries metadata.type == expect_type."""
    if row.get("label") != "extract" or row.get("status") != "stored":
        return None
    types = [m.get("type") for m in row.get("memories") or []]
    return bool(types) and all(t == row.get("expect_type") for t in types)


def score_rows(rows: list[dict], types=()) -> dict:
    extract = [r for r in rows if r.get("label") == "extract"]
    exclude = [r for r in rows if r.get("label") == "exclude"]
    ex_measured = [r for r in extract if r.get("status") in MEASURED_EXTRACT]
    ex_stored = [r for r in ex_measured if r.get("status") == "stored"]
    exc_measured = [r for r in exclude if r.get("status") in MEASURED_EXCLUDE]
    exc_suppressed = [r for r in exc_measured if r.get("status") == "suppressed"]

    matched = [r for r in ex_stored if row_type_match(r)]
    by_stamp = {}
    for stamp in ("classifier", "fixture"):
        pool = [r for r in ex_stored if r.get("stamped_by") == stamp]
        by_stamp[stamp] = {"fixtures": len(pool), "type_match": ratio(sum(1 for r in pool if row_type_match(r)),
                                                                      len(pool))}

    memories_written = sum(len(r.get("memories") or []) for r in rows)
    leak_count = sum(len(r.get("leaks") or []) for r in rows)
    not_measured = [r["id"] for r in rows
                    if (r.get("label") == "extract" and r.get("status") not in MEASURED_EXTRACT)
                    or (r.get("label") == "exclude" and r.get("status") not in MEASURED_EXCLUDE)]

    per_type = {}
    for t in list(types) + sorted({r.get("expect_type") for r in extract if r.get("expect_type")} - set(types)):
        pool = [r for r in ex_measured if r.get("expect_type") == t]
        stored = [r for r in pool if r.get("status") == "stored"]
        per_type[t] = {
            "extract": sum(1 for r in extract if r.get("expect_type") == t),
            "measured": len(pool),
            "stored": len(stored),
            "extract_recall": ratio(len(stored), len(pool)),
            "type_match": ratio(sum(1 for r in stored if row_type_match(r)), len(stored)),
            "memories": sum(len(r.get("memories") or []) for r in stored),
        }

    return {
        "extract_recall": ratio(len(ex_stored), len(ex_measured)),
        "exclude_suppression": ratio(len(exc_suppressed), len(exc_measured)),
        "type_match": ratio(len(matched), len(ex_stored)),
        "type_match_by_stamp": by_stamp,
        "noise_leak_count": leak_count,
        "leaking_fixtures": sorted(r["id"] for r in rows if r.get("leaks")),
        "memories_written": memories_written,
        "counts": {
            "extract": len(extract), "extract_measured": len(ex_measured), "extract_stored": len(ex_stored),
            "exclude": len(exclude), "exclude_measured": len(exc_measured),
            "exclude_suppressed": len(exc_suppressed),
            "stamped_by": {k: sum(1 for r in rows if r.get("stamped_by") == k)
                           for k in ("classifier", "fixture", None)},
            "status": _count(r.get("status") for r in rows),
        },
        "not_measured": not_measured,
        "per_type": per_type,
    }


def _count(values) -> dict:
    out: dict = {}
    for v in values:
        out[v] = out.get(v, 0) + 1
    return dict(sorted(out.items(), key=lambda kv: str(kv[0])))


# Metrics where a smaller number is better: their threshold is a ceiling.
CEILINGS = ("noise_leak_count",)
LIVE_METRICS = ("extract_recall", "exclude_suppression", "type_match", "noise_leak_count")


def live_floors(thresholds: dict) -> dict:
    """The thresholds a live run is checked against.

    `live_<metric>` keys apply to live runs only and win over the plain key. `exclude_suppression`
    and `type_match` exist only live, so their plain keys are live floors. `extract_recall` is
    shared by both modes (the seed: "Offline: flagged for capture. Live: >= 1 memory stored").
    """
    thresholds = thresholds or {}
    floors = {m: thresholds[m] for m in LIVE_METRICS if m in thresholds}
    for key, value in thresholds.items():
        if key.startswith("live_") and key[5:] in LIVE_METRICS:
            floors[key[5:]] = value
    return floors


def evaluate_check(scores: dict, thresholds: dict, *, interrupted: bool = False,
                   interrupt_reason: str | None = None, apply_ok: bool | None = True) -> dict:
    """A live run passes only when it measured what it set out to and every floor holds."""
    failures = []
    if apply_ok is False:
        failures.append("the revision's instructions and categories were not verified on the project")
    if interrupted:
        failures.append(f"run interrupted ({interrupt_reason or 'unknown'}): scores cover only what landed")
    nm = scores.get("not_measured") or []
    if nm:
        shown = ", ".join(nm[:5]) + (f" and {len(nm) - 5} more" if len(nm) > 5 else "")
        failures.append(f"{len(nm)} fixture(s) not measured: {shown}")
    floors = live_floors(thresholds)
    for metric, bound in floors.items():
        value = scores.get(metric)
        if value is None:
            failures.append(f"{metric} not measured (no fixture of its kind concluded)")
        elif metric in CEILINGS:
            if value > bound:
                failures.append(f"{metric} {value} above the ceiling {bound}")
        elif value < bound:
            failures.append(f"{metric} {value:.3f} below the floor {bound}")
    return {"passed": not failures, "failures": failures, "floors": floors}

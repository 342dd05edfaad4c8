"""The live report: JSON on disk (written atomically, often, so an interrupted run leaves one)
and a short text summary. It names where the run wrote, never the key."""

from __future__ import annotations

import json
import os
import tempfile
from datetime import datetime, timezone

COMPACT_MEMORY = ("id", "text", "type")
ROW_INTERNAL = ("trace",)


def now_iso() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def shape_rows(rows: list[dict], mode: str, messages: dict | None = None) -> list[dict]:
    out = []
    for row in rows:
        r = dict(row)
        if mode == "compact":
            r["memories"] = [{k: m.get(k) for k in COMPACT_MEMORY} for m in r.get("memories") or []]
            for k in ROW_INTERNAL:
                r.pop(k, None)
        elif messages is not None and r["id"] in messages:
            r["sent"] = messages[r["id"]]
        r["types"] = sorted({m.get("type") for m in r.get("memories") or []}, key=str)
        out.append(r)
    return out


def write_report(path: str, report: dict) -> None:
    """Write via a temp file and rename, so a reader (or a second Ctrl-C) never sees half a file."""
    directory = os.path.dirname(os.path.abspath(path)) or "."
    os.makedirs(directory, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".gate-report-", suffix=".json", dir=directory)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump(report, f, indent=2, ensure_ascii=False, default=str)
            f.write("\n")
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def fmt_ratio(value, num=None, den=None) -> str:
    if value is None:
        return "not measured"
    tail = f" ({num}/{den})" if num is not None and den is not None else ""
    return f"{value:.3f}{tail}"


def summary_lines(report: dict) -> list[str]:
    s = report.get("scores") or {}
    c = s.get("counts") or {}
    by = s.get("type_match_by_stamp") or {}
    lines = [
        f"live run {report.get('run_id')} ({report.get('policy')}) -> org {report['written_to']['org_id']} / "
        f"project {report['written_to']['project_id']} at {report.get('base_url')}",
        f"  extract_recall      {fmt_ratio(s.get('extract_recall'), c.get('extract_stored'), c.get('extract_measured'))}",
        f"  exclude_suppression {fmt_ratio(s.get('exclude_suppression'), c.get('exclude_suppressed'), c.get('exclude_measured'))}",
        f"  type_match          {fmt_ratio(s.get('type_match'))}   (stamped by classifier: "
        f"{fmt_ratio((by.get('classifier') or {}).get('type_match'))} on {(by.get('classifier') or {}).get('fixtures', 0)}; "
        f"by fixture expect_type: {fmt_ratio((by.get('fixture') or {}).get('type_match'))} on "
        f"{(by.get('fixture') or {}).get('fixtures', 0)})",
        f"  noise_leak_count    {s.get('noise_leak_count', 0)}",
        f"  memories_written    {s.get('memories_written', 0)}",
    ]
    rows = report.get("rows") or []
    misses = [r["id"] for r in rows if r.get("label") == "extract" and r.get("status") in ("suppressed", "timed_out")]
    kept = [r["id"] for r in rows if r.get("label") == "exclude" and r.get("status") == "stored"]
    if misses:
        lines.append(f"  extract misses: {', '.join(misses)}")
    if kept:
        lines.append(f"  excluded windows that stored memories: {', '.join(kept)}")
    for r in rows:
        for leak in r.get("leaks") or []:
            lines.append(f"  leak in {r['id']}: {', '.join(leak['markers'])}: {str(leak.get('text'))[:80]!r}")
    if s.get("not_measured"):
        lines.append(f"  not measured: {', '.join(s['not_measured'][:10])}")
    if report.get("interrupted"):
        lines.append(f"  INTERRUPTED: {report.get('interrupt_reason')}")
    check = report.get("check") or {}
    if check.get("passed"):
        lines.append("  check: passed")
    else:
        lines.append("  check: FAILED" + "".join(f"\n    - {f}" for f in check.get("failures") or []))
    return lines

"""`gate rescore`: re-score a saved live report with another revision's noise markers and thresholds.

No network: the stored memory text is in the report's rows, so changing a marker does not need
a new live run. Types were stamped at write time and do not depend on the revision rescoring.
"""

from __future__ import annotations

import json

from gate.live import report as rep
from gate.live.scoring import annotate_leaks, evaluate_check, score_rows


class RescoreError(ValueError):
    pass


def rescore(report: dict, rev) -> dict:
    if not isinstance(report, dict) or report.get("kind") != "live" or not isinstance(report.get("rows"), list):
        raise RescoreError("not a live report (expected kind 'live' with rows)")
    for row in report["rows"]:
        if not isinstance(row, dict) or "id" not in row or not isinstance(row.get("memories", []), list):
            raise RescoreError("a row lacks its id or stored memories; cannot re-score it")
    rows = annotate_leaks(report["rows"], rev.noise_markers)
    for r in rows:
        r["types"] = sorted({m.get("type") for m in r.get("memories") or []}, key=str)
    types = tuple(rev.categories or ())
    scores = score_rows(rows, types)
    apply_ok = (report.get("apply") or {}).get("ok") if report.get("apply") is not None else None
    check = evaluate_check(scores, dict(rev.thresholds or {}), interrupted=bool(report.get("interrupted")),
                           interrupt_reason=report.get("interrupt_reason"), apply_ok=apply_ok)
    out = dict(report)
    out.update(rows=rows, scores=scores, check=check, thresholds=dict(rev.thresholds or {}),
               noise_markers=[{"id": m.id, "pattern": m.pattern} for m in rev.noise_markers],
               generated_at=rep.now_iso())
    out["rescored"] = {"with_policy": rev.policy, "with_rules": rev.path,
                       "original_policy": report.get("policy"),
                       "original_scores": {k: (report.get("scores") or {}).get(k) for k in
                                           ("extract_recall", "exclude_suppression", "type_match",
                                            "noise_leak_count", "memories_written")},
                       "original_check_passed": (report.get("check") or {}).get("passed")}
    return out


def run_rescore(report_path: str, *, rules_path: str | None = None, out_path: str | None = None,
                check: bool = False, fmt: str = "text", echo=print) -> int:
    from gate.language.errors import GateError
    from gate.language.loader import load_revision

    try:
        with open(report_path, encoding="utf-8") as f:
            report = json.load(f)
    except OSError as e:
        echo(f"{report_path}: cannot read: {e.strerror or e}")
        return 2
    except ValueError as e:
        echo(f"{report_path}: not JSON: {e}")
        return 2
    rules = rules_path or (report.get("rules") if isinstance(report, dict) else None)
    if not rules:
        echo(f"{report_path}: the report names no rules file; pass --rules")
        return 2
    try:
        rev = load_revision(rules)
    except GateError as e:
        echo(str(e))
        return 2
    try:
        new = rescore(report, rev)
    except RescoreError as e:
        echo(f"{report_path}: {e}")
        return 2
    if out_path:
        rep.write_report(out_path, new)
    if fmt == "json":
        echo(json.dumps(new, indent=2, ensure_ascii=False, default=str))
    else:
        echo(f"rescored {report_path} (run {new.get('run_id')}, sent with {new['rescored']['original_policy']}) "
             f"with {rev.policy} from {rules}")
        before = new["rescored"]["original_scores"].get("noise_leak_count")
        after = new["scores"]["noise_leak_count"]
        if before != after:
            echo(f"  noise_leak_count {before} -> {after}")
        for line in rep.summary_lines(new):
            echo(line)
        if out_path:
            echo(f"report: {out_path}")
    return 1 if check and not new["check"]["passed"] else 0

"""Scores of one system, from what the run recorded. Pure functions; no I/O.

A ratio with nothing to divide by is None ("not measured"), never 0 or 1. Stage failures count
as failed questions: a failed search retrieves nothing, a failed answer is wrong.
"""

from __future__ import annotations

from gate.bench.answering import containment, token_f1
from gate.bench.dataset import CATEGORIES, UNSCORED

LISTED_FALSE_DROPS = 200  # false drops listed one by one in a report; the count is always exact


def ingest_metrics(record) -> dict:
    injected = sum(record.noise_injected.values())
    stored = sum(record.noise_stored.values())
    drops = len(record.false_drops)
    return {
        "real_turns": record.real_turns,
        "real_stored": record.real_stored,
        "false_drops": drops,
        "false_drops_per_1k_real_turns": _ratio(1000 * drops, record.real_turns),
        "false_drops_by_rule": _count(d.rule for d in record.false_drops),
        "false_drop_list": [d.to_json() for d in record.false_drops[:LISTED_FALSE_DROPS]],
        "evidence_turns": record.evidence_turns,
        "evidence_kept": record.evidence_kept,
        "evidence_retention": _ratio(record.evidence_kept, record.evidence_turns),
        "noise_injected": injected,
        "noise_stored": stored,
        "noise_stored_share": _ratio(stored, injected),
        "noise_by_kind": {kind: {"injected": n, "stored": record.noise_stored.get(kind, 0)}
                          for kind, n in sorted(record.noise_injected.items())},
        "noise_dropped_by_rule": dict(sorted(record.noise_dropped_by.items(), key=lambda kv: -kv[1])),
        "stored_items": record.stored_items,
        "failed_conversations": {k: {"stage": s, "error": e} for k, (s, e) in record.failed.items()},
        "latency_ms": {"gate_per_window": _mean(record.gate_ms), "ingest_per_item": _mean(record.add_ms),
                       "ingest_p95": _percentile(record.add_ms, 95)},
    }


def case_metrics(questions, results: dict, cutoffs, context_k: int) -> dict:
    """Retrieval and answer scores over the questions asked of one system."""
    cutoffs = sorted(set(cutoffs))
    retrieval = {}
    for k in cutoffs:
        recalls, noise_hits, hits = [], 0, 0
        for q in questions:
            r = results[q.key]
            top = r.hits[:k]
            hits += len(top)
            noise_hits += sum(1 for h in top if _is_noise(h))
            if q.evidence and q.category not in UNSCORED:
                found = {h.source for h in top}
                recalls.append(sum(1 for ref in q.evidence if ref in found) / len(q.evidence))
        retrieval[str(k)] = {"evidence_recall": _mean(recalls), "noise_in_top_k": _ratio(noise_hits, hits),
                             "noise_items_per_question": _ratio(noise_hits, len(questions))}
    context_noise = sum(1 for q in questions for h in results[q.key].hits[:context_k] if _is_noise(h))
    by_category, scored = {}, []
    for number, name in CATEGORIES.items():
        group = [q for q in questions if q.category == number]
        if not group:
            continue
        if number in UNSCORED:
            by_category[name] = {"questions": len(group), "scored": False,
                                 "stage_failures": sum(1 for q in group if results[q.key].failure)}
            continue
        rows = [_score(q, results[q.key], context_k) for q in group]
        scored.extend(rows)
        by_category[name] = _summary(rows)
    failures = _count(results[q.key].failure["stage"] for q in questions if results[q.key].failure)
    usage = {role: {"input": sum(results[q.key].usage.get(role, {}).get("input", 0) for q in questions),
                    "output": sum(results[q.key].usage.get(role, {}).get("output", 0) for q in questions)}
             for role in ("answerer", "judge")}
    return {
        "questions": len(questions),
        "scored": len(scored),
        "overall": _summary(scored),
        "by_category": by_category,
        "retrieval": retrieval,
        "noise_in_context": _ratio(context_noise, sum(len(results[q.key].hits[:context_k]) for q in questions)),
        "source_metadata_returned": _ratio(sum(1 for q in questions for h in results[q.key].hits if h.source),
                                           sum(len(results[q.key].hits) for q in questions)),
        "stage_failures": failures,
        "tokens": usage,
        "latency_ms": {
            "search": _mean([results[q.key].search_ms for q in questions if results[q.key].search_ms is not None]),
            "search_p95": _percentile([results[q.key].search_ms for q in questions
                                       if results[q.key].search_ms is not None], 95),
            "answer": _mean([results[q.key].answer_ms for q in questions if results[q.key].answer_ms is not None]),
            "judge": _mean([results[q.key].judge_ms for q in questions if results[q.key].judge_ms is not None]),
        },
    }


def _score(question, result, context_k: int) -> dict:
    if result.failure:
        return {"correct": 0.0, "containment": 0.0, "f1": 0.0, "failed": 1}
    share = containment(question.answer, " ".join(h.text for h in result.hits[:context_k]))
    return {"correct": float(result.correct), "containment": share if share is not None else 0.0,
            "f1": token_f1(result.answer, question.answer), "failed": 0}


def _summary(rows) -> dict:
    return {"questions": len(rows), "judge_accuracy": _mean([r["correct"] for r in rows]),
            "containment": _mean([r["containment"] for r in rows]), "token_f1": _mean([r["f1"] for r in rows]),
            "stage_failures": sum(r["failed"] for r in rows)}


def _is_noise(hit) -> bool:
    return bool(hit.kind) and hit.kind != "real"


def _count(items) -> dict:
    out: dict = {}
    for item in items:
        out[item] = out.get(item, 0) + 1
    return dict(sorted(out.items(), key=lambda kv: (-kv[1], str(kv[0]))))


def _ratio(numerator, denominator):
    return None if not denominator else numerator / denominator


def _mean(values):
    values = list(values)
    return sum(values) / len(values) if values else None


def _percentile(values, pct: float):
    values = sorted(values)
    if not values:
        return None
    index = min(len(values) - 1, max(0, round(pct / 100 * len(values)) - 1))
    return values[index]

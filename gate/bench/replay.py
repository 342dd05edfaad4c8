"""`gate bench-replay`: answer and judge again on the retrieval a full report saved.

No store is opened and nothing is ingested or searched: the ingest metrics are carried over, the
retrieval and answer metrics are recomputed (with other cutoffs, answerer or judge if asked).
"""

from __future__ import annotations

import time

from gate.bench.dataset import Question, read_json
from gate.bench.metrics import case_metrics
from gate.bench.records import CaseResult
from gate.bench.report import FORMAT, assemble
from gate.bench.runner import answer_and_judge

PRE_ANSWER_STAGES = frozenset({"reset", "ingest", "search"})  # failures replay cannot undo


class ReplayError(ValueError):
    pass


def load_full_report(path: str) -> dict:
    report = read_json(path, ReplayError)
    if not isinstance(report, dict) or report.get("format") != FORMAT:
        raise ReplayError(f"{path}: not a gate bench report (expected format {FORMAT!r})")
    if report.get("mode") != "full" or not isinstance(report.get("cases"), list):
        raise ReplayError(f"{path}: a compact report keeps no retrieval; replay needs one written with "
                          "--report-mode full")
    return report


def replay(report: dict, answerer, judge, *, cutoffs=None, context_k=None, mode: str = "compact",
           run_id: str | None = None) -> dict:
    started = time.perf_counter()
    config = dict(report["config"])
    config["cutoffs"] = sorted(set(cutoffs)) if cutoffs else config["cutoffs"]
    config["context_k"] = context_k or config["context_k"]
    config["answerer"], config["judge"] = answerer.name, judge.name
    config["replayed_from"] = report.get("run_id")
    systems = report["systems"]
    names = [s["name"] for s in systems]
    questions, results = [], {n: {} for n in names}
    for case in report["cases"]:
        question = Question(key=case["key"], sample_id=case["sample_id"], question=case["question"],
                            answer=str(case.get("gold", "")), category=int(case["category"]),
                            evidence=tuple(case.get("evidence", ())), unresolved=())
        questions.append(question)
        for name in names:
            result = CaseResult.from_json(case["results"][name])
            if result.failure and result.failure.get("stage") in PRE_ANSWER_STAGES:
                results[name][question.key] = result
                continue
            fresh = CaseResult(hits=result.hits, search_ms=result.search_ms)
            if question.scored:
                answer_and_judge(question, fresh, answerer, judge, config["context_k"])
            results[name][question.key] = fresh
    metrics = {n: {"ingest": report["metrics"][n]["ingest"],
                   **case_metrics(questions, results[n], config["cutoffs"], config["context_k"])} for n in names}
    return assemble(systems=systems, questions=questions, results=results, metrics=metrics, mode=mode,
                    run_id=run_id or f"{report.get('run_id')}-replay", seconds=time.perf_counter() - started,
                    dataset_info=report["dataset"], config=config)

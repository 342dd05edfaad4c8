"""The pipeline: ingest through each gate into its store, search, answer, judge.

Every system (no gate, each revision's drop form, optionally its full form) sees the same
conversations with the same noise in the same places. A stage that fails is recorded, redacted,
and scored as a failure; it never stops the run and is never skipped.
"""

from __future__ import annotations

import contextlib
import time
from dataclasses import dataclass

from gate.bench import cases, noise
from gate.bench.dataset import Turn
from gate.bench.records import CaseResult, FalseDrop, Ingest
from gate.bench.stores import Memory, StoreError

MAX_ERROR = 300  # characters of a stage error kept in a report


@dataclass(frozen=True)
class Settings:
    case_set: str = "fast"
    noise_rate: float = 0.0
    seed: int = 0
    top_k: int = 50
    cutoffs: tuple = (5, 10, 20, 50)
    context_k: int = 10  # memories the answerer and the containment judge see
    run_id: str = "bench"


@dataclass
class Run:
    """Everything a report is made from."""

    settings: Settings
    questions: list
    conversations: list
    systems: list
    ingest: dict  # system name -> Ingest
    results: dict  # system name -> {question key -> CaseResult}
    seconds: float


class _Quiet:
    def update(self, n: int = 1) -> None:
        pass


@contextlib.contextmanager
def _no_progress(label: str, total: int):
    yield _Quiet()


def run_bench(dataset, systems, open_store, answerer, judge, settings: Settings, progress=None) -> Run:
    progress = progress or _no_progress
    started = time.perf_counter()
    questions = cases.select(dataset.questions, settings.case_set)
    wanted = {q.sample_id for q in questions}
    conversations = [c for c in dataset.conversations if c.sample_id in wanted]
    evidence = {(q.sample_id, ref) for q in dataset.questions if q.sample_id in wanted for ref in q.evidence}
    streams = {c.sample_id: noise.interleave(c, settings.noise_rate, settings.seed) for c in conversations}

    ingest, stores = {}, {}
    total = sum(len(s) for s in streams.values()) * len(systems)
    with progress("ingest", total) as bar:
        for system in systems:
            store = open_store(system.name)
            stores[system.name] = store
            ingest[system.name] = _ingest(system, store, conversations, streams, evidence, bar)

    results = {system.name: {} for system in systems}
    try:
        with progress("search", len(questions) * len(systems)) as bar:
            for system in systems:
                store, failed = stores[system.name], ingest[system.name].failed
                for question in questions:
                    results[system.name][question.key] = _ask(question, store, failed, answerer, judge, settings)
                    bar.update(1)
    finally:
        for name, store in stores.items():
            with contextlib.suppress(Exception):  # a cleanup failure must not lose the run's results
                store.cleanup([c.sample_id for c in conversations])
    return Run(settings=settings, questions=questions, conversations=conversations, systems=systems,
               ingest=ingest, results=results, seconds=time.perf_counter() - started)


def _ingest(system, store, conversations, streams, evidence, bar) -> Ingest:
    record = Ingest()
    scopes = [c.sample_id for c in conversations]
    try:
        store.reset(scopes)
    except Exception as exc:  # noqa: BLE001 (any backend failure is a scored stage failure)
        for scope in scopes:
            record.failed[scope] = ("reset", _error(exc))
    policy = getattr(system, "policy", None)
    for conversation in conversations:
        stream = streams[conversation.sample_id]
        failed = conversation.sample_id in record.failed
        gate, session = None, None
        for item in stream:
            bar.update(1)
            is_turn = isinstance(item, Turn)
            if is_turn:
                record.real_turns += 1
                record.evidence_turns += (conversation.sample_id, item.dia_id) in evidence
                if item.session != session:  # a new session: the hook's recent shapes start empty
                    gate, session = system.session(), item.session
            else:
                record.noise_injected[item.kind] = record.noise_injected.get(item.kind, 0) + 1
            gate = gate or system.session()
            window = item.window() if is_turn else item.window
            t0 = time.perf_counter()
            verdict = gate.judge(window)
            record.gate_ms.append((time.perf_counter() - t0) * 1000)
            if not verdict.stored:
                if is_turn and verdict.action == "drop":
                    record.false_drops.append(FalseDrop(conversation.sample_id, item.dia_id, verdict.rule,
                                                        (conversation.sample_id, item.dia_id) in evidence))
                elif not is_turn and verdict.action == "drop":
                    record.noise_dropped_by[verdict.rule] = record.noise_dropped_by.get(verdict.rule, 0) + 1
                continue
            if is_turn:
                record.real_stored += 1
                record.evidence_kept += (conversation.sample_id, item.dia_id) in evidence
            else:
                record.noise_stored[item.kind] = record.noise_stored.get(item.kind, 0) + 1
            if failed:
                continue
            memory = Memory(source=item.dia_id if is_turn else item.id, kind="real" if is_turn else item.kind,
                            text=verdict.stored, policy=policy, type=verdict.type)
            t0 = time.perf_counter()
            try:
                store.add(conversation.sample_id, memory)
            except Exception as exc:  # noqa: BLE001
                record.failed[conversation.sample_id] = ("ingest", _error(exc))
                failed = True
                continue
            record.add_ms.append((time.perf_counter() - t0) * 1000)
            record.stored_items += 1
        if not failed:
            try:
                store.flush()
            except Exception as exc:  # noqa: BLE001
                record.failed[conversation.sample_id] = ("ingest", _error(exc))
    return record


def _ask(question, store, failed: dict, answerer, judge, settings: Settings) -> CaseResult:
    result = CaseResult()
    if question.sample_id in failed:
        stage, error = failed[question.sample_id]
        result.failure = {"stage": stage, "error": error}
        return result
    t0 = time.perf_counter()
    try:
        result.hits = list(store.search(question.sample_id, question.question, settings.top_k))
    except Exception as exc:  # noqa: BLE001
        result.failure = {"stage": "search", "error": _error(exc)}
        return result
    result.search_ms = (time.perf_counter() - t0) * 1000
    if question.scored:
        answer_and_judge(question, result, answerer, judge, settings.context_k)
    return result


def answer_and_judge(question, result: CaseResult, answerer, judge, context_k: int) -> None:
    """Answer from the top `context_k` memories and judge it; a failure is recorded on the result."""
    context = result.hits[:context_k]
    t0 = time.perf_counter()
    try:
        answer = answerer.answer(question.question, context)
    except Exception as exc:  # noqa: BLE001
        result.failure = {"stage": "answer", "error": _error(exc)}
        return
    result.answer_ms = (time.perf_counter() - t0) * 1000
    result.answer = answer.text
    if answer.usage:
        result.usage["answerer"] = answer.usage
    t0 = time.perf_counter()
    try:
        judgment = judge.judge(question.question, question.answer, answer, context)
    except Exception as exc:  # noqa: BLE001
        result.failure = {"stage": "judge", "error": _error(exc)}
        return
    result.judge_ms = (time.perf_counter() - t0) * 1000
    result.correct, result.detail = judgment.correct, judgment.detail
    if judgment.usage:
        result.usage["judge"] = judgment.usage


def _error(exc: Exception) -> str:
    """A stage error for a report. Store and model errors are redacted where they are raised;
    anything else is named by its type and first line only."""
    from gate.platform.secret import redact

    text = str(exc).splitlines()[0] if str(exc) else ""
    if not isinstance(exc, StoreError):
        text = f"{type(exc).__name__}: {text}" if text else type(exc).__name__
    text = redact(text)
    return text if len(text) <= MAX_ERROR else text[: MAX_ERROR - 3] + "..."

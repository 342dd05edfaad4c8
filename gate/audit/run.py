"""The audit pipeline: a source's batches -> worker processes (scan) -> the tally -> the report.

Batches flow through a bounded window of in-flight tasks, so a JSON Lines file of any size is
read as fast as the workers take it and never held whole. With one job, or a source that
fits in one batch, everything runs in this process.
"""

from __future__ import annotations

import multiprocessing
import os
from collections import deque

from gate.audit import report as report_mod
from gate.audit import scan
from gate.audit.scan import BadRecord
from gate.audit.sources import SourceError
from gate.audit.tally import Tally

DEFAULT_SIMILARITY = 0.8
DEFAULT_TOP = 10


class AuditError(Exception):
    """The audit cannot run or finish; the message is one line for the user."""


def default_jobs() -> int:
    return max(1, min(os.cpu_count() or 1, 4))


def audit(batches, judge, *, source: str, rules: dict, jobs: int | None = None,
          similarity: float = DEFAULT_SIMILARITY, top: int = DEFAULT_TOP, progress=None) -> dict:
    """The report dict for every memory in `batches` (see gate.audit.report).
    `progress(memories so far)` is called after each batch, when given."""
    tally = Tally()
    try:
        try:
            _fold(batches, judge, tally, jobs or default_jobs(), progress)
        except (BadRecord, SourceError) as exc:
            raise AuditError(str(exc)) from None
        clusters = tally.clusters(similarity)
        tally.mark_clusters(clusters)
        return report_mod.build(tally, clusters, source=source, rules=rules, similarity=similarity, top=top)
    finally:
        tally.close()


def _fold(batches, judge, tally: Tally, jobs: int, progress=None) -> None:
    scan.install(judge)
    batches = iter(batches)
    first = next(batches, None)
    if first is None:
        return
    second = next(batches, None)
    if jobs <= 1 or second is None or "fork" not in multiprocessing.get_all_start_methods():
        for batch in _chain(first, second, batches):
            _add(tally, scan.scan_batch(batch), progress)
        return
    # fork: the workers inherit the compiled judge, which need not be picklable
    with multiprocessing.get_context("fork").Pool(jobs) as pool:
        pending: deque = deque()
        for batch in _chain(first, second, batches):
            pending.append(pool.apply_async(scan.scan_batch, (batch,)))
            while len(pending) > jobs * 2:
                _add(tally, pending.popleft().get(), progress)
        while pending:
            _add(tally, pending.popleft().get(), progress)


def _add(tally: Tally, result, progress) -> None:
    tally.add(result)
    if progress is not None:
        progress(tally.memories)


def _chain(first, second, rest):
    yield first
    if second is not None:
        yield second
        yield from rest

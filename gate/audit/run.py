"""The audit pipeline: a source's parts -> worker processes (scan) -> their tally files -> one
merged tally -> clusters -> the report.

The workers fold what they read into tally files of their own, and send back only small
counters, so the main process does next to nothing while they work. A JSON Lines file is
handed out as byte ranges the workers read themselves; other sources' batches flow through a
bounded window of in-flight tasks, so no source is ever held whole. With one job, or a source
of one part, everything runs in this process, through the same code.
"""

from __future__ import annotations

import multiprocessing
import os
from collections import deque
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from contextlib import contextmanager

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


def audit(parts, judge, *, source: str, rules: dict, jobs: int | None = None,
          similarity: float = DEFAULT_SIMILARITY, top: int = DEFAULT_TOP, progress=None) -> dict:
    """The report dict for every memory in `parts` (gate.audit.sources: read_export, read_live).
    `progress(memories so far)` is called after each part, when given."""
    tally = Tally()
    try:
        scan.install(judge, tally.dir)
        parts = iter(parts)
        try:
            first = next(parts, None)
            second = next(parts, None) if first is not None else None
            jobs = jobs or default_jobs()
            parallel = second is not None and jobs > 1 and "fork" in multiprocessing.get_all_start_methods()
            try:
                with _workers(jobs if parallel else 0) as pool:
                    _fold(_chain(first, second, parts), tally, pool, jobs, progress)
            finally:
                scan.finish()
            # the fold's workers are gone with their caches; these start from this lean process
            with _workers(jobs if parallel else 0) as pool:
                tally.merge()
                clusters = tally.clusters(similarity, pool)
        except (BadRecord, SourceError) as exc:
            raise AuditError(str(exc)) from None
        except BrokenProcessPool:
            raise AuditError("a worker process died before it finished its part (killed, or out of memory); "
                             "nothing was written; run again, with fewer --jobs if memory is short") from None
        tally.mark_clusters(clusters)
        return report_mod.build(tally, clusters, source=source, rules=rules, similarity=similarity, top=top)
    finally:
        tally.close()


@contextmanager
def _workers(jobs: int):
    """A pool of `jobs` forked worker processes (they inherit the compiled judge, which need
    not be picklable), or None for none; on the way out they finish, or on an error the parts
    not started are dropped. A worker that dies (killed, out of memory) breaks the pool and
    every wait on it raises BrokenProcessPool, where a multiprocessing.Pool would wait forever."""
    if not jobs:
        yield None
        return
    pool = ProcessPoolExecutor(jobs, mp_context=multiprocessing.get_context("fork"))
    try:
        yield pool
    except BaseException:
        pool.shutdown(wait=True, cancel_futures=True)
        raise
    else:
        pool.shutdown(wait=True)


def _fold(parts, tally: Tally, pool, jobs: int, progress=None) -> None:
    if pool is None:
        for part in parts:
            _add(tally, scan.scan_part(part), progress)
        return
    # A bounded window of parts in flight, taken in order: the store's first bad record is the
    # one reported, and a source of objects is never read far ahead of the workers.
    pending: deque = deque()
    for part in parts:
        pending.append(pool.submit(scan.scan_part, part))
        while len(pending) > jobs * 2:
            _add(tally, pending.popleft().result(), progress)
    while pending:
        _add(tally, pending.popleft().result(), progress)


def _add(tally: Tally, counts, progress) -> None:
    tally.add(counts)
    if progress is not None:
        progress(tally.memories)


def _chain(first, second, rest):
    if first is None:
        return
    yield first
    if second is not None:
        yield second
        yield from rest

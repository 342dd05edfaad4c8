"""JSON (Lines) in, one JSON decision per line out, in constant memory."""

from __future__ import annotations

import json
from collections import deque


# RecursionError: a line nested deeper than the JSON parser goes is bad input too.
_NOT_JSON = (ValueError, RecursionError)


def classify_stream(classifier, lines, out, *, level=None, track_shapes: int = 0, source: str = "-") -> int:
    """Classify each window; returns how many inputs could not be parsed.

    Input is JSON Lines; when the first non-blank line is not complete JSON,
    the whole input is read as one (pretty-printed) JSON window, and if it is
    not that either, as JSON Lines whose first line is bad.
    """
    recent = deque(maxlen=track_shapes) if track_shapes else None
    numbered = enumerate(lines, 1)
    for number, line in numbered:
        if not line.strip():
            continue
        try:
            item = json.loads(line)
        except _NOT_JSON:
            rest = [line, *(text for _, text in numbered)]
            try:
                item = json.loads("".join(rest))
            except _NOT_JSON:
                return _each_line(classifier, enumerate(rest, number), out, level, recent, source)
            _emit(classifier, item, out, level, recent)
            return 0
        _emit(classifier, item, out, level, recent)
        return _each_line(classifier, numbered, out, level, recent, source)
    return 0


def _each_line(classifier, numbered, out, level, recent, source) -> int:
    bad = 0
    for number, line in numbered:
        if not line.strip():
            continue
        try:
            item = json.loads(line)
        except _NOT_JSON as exc:
            _error(out, source, number, exc)
            bad += 1
            continue
        _emit(classifier, item, out, level, recent)
    return bad


def _emit(classifier, item, out, level, recent) -> None:
    out.write(_decide(classifier, item, level, recent))
    out.flush()


def _decide(classifier, item, level, recent) -> str:
    """One parsed input line -> its output line."""
    window, shapes, item_level = item, (), level
    if isinstance(item, dict) and "window" in item:
        window = item["window"]
        given = item.get("recent_shapes")
        shapes = tuple(s for s in given if isinstance(s, str)) if isinstance(given, list) else ()
        if isinstance(item.get("level"), str) and level is None:
            item_level = item["level"]
    if recent is not None:
        shapes = tuple(shapes) + tuple(recent)
    decision = classifier.classify(window, level=item_level, recent_shapes=shapes)
    if recent is not None:
        recent.append(decision.shape)
    return json.dumps(decision.to_json(), ensure_ascii=False) + "\n"


def _error(out, source, number, exc) -> None:
    out.write(_error_line(source, number, exc))
    out.flush()


def _error_line(source, number, exc) -> str:
    message = f"{source}:{number}: not JSON: {exc.msg if hasattr(exc, 'msg') else exc}"
    return json.dumps({"error": message}) + "\n"


# -- several processes -------------------------------------------------------------------
#
# Lines are read in batches and classified by forked workers (which inherit the
# classifier, so nothing is pickled but text); results are written in input order.
# At most a few batches per worker are in flight, so memory stays flat however
# long the input is.

BATCH = 256  # lines per task: big enough that task overhead vanishes, small enough to stream
_WORKER = None  # (classifier, level, source), set in the parent before forking


def classify_parallel(classifier, lines, out, *, jobs: int, level=None, source: str = "-") -> int:
    """classify_stream with `jobs` worker processes; same output, same order.

    Falls back to one process where fork is not available, and for an input whose
    first line is not JSON (a pretty-printed window is read whole, in order)."""
    import itertools
    import multiprocessing

    numbered = enumerate(lines, 1)
    head = []
    for number, line in numbered:
        head.append((number, line))
        if line.strip():
            break
    parallel = bool(head) and "fork" in multiprocessing.get_all_start_methods()
    if parallel:
        try:
            json.loads(head[-1][1])
        except _NOT_JSON:  # maybe one pretty-printed window: the one-process reader decides
            parallel = False
    if not parallel:
        return classify_stream(classifier, itertools.chain((text for _, text in head), (t for _, t in numbered)),
                               out, level=level, source=source)
    global _WORKER
    _WORKER = (classifier, level, source)
    bad = 0
    try:
        with multiprocessing.get_context("fork").Pool(jobs) as pool:
            pending = []
            batches = _batches(itertools.chain(head, numbered))
            for batch in batches:
                pending.append(pool.apply_async(_work, (batch,)))
                if len(pending) >= jobs * 4:
                    bad += _write(out, pending.pop(0).get())
            for result in pending:
                bad += _write(out, result.get())
    finally:
        _WORKER = None
    return bad


def _batches(numbered):
    batch = []
    for item in numbered:
        batch.append(item)
        if len(batch) >= BATCH:
            yield batch
            batch = []
    if batch:
        yield batch


def _work(batch) -> tuple[str, int]:
    classifier, level, source = _WORKER
    out, bad = [], 0
    for number, line in batch:
        if not line.strip():
            continue
        try:
            item = json.loads(line)
        except _NOT_JSON as exc:
            out.append(_error_line(source, number, exc))
            bad += 1
            continue
        out.append(_decide(classifier, item, level, None))
    return "".join(out), bad


def _write(out, result) -> int:
    text, bad = result
    out.write(text)
    out.flush()
    return bad

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
    out.write(json.dumps(decision.to_json(), ensure_ascii=False) + "\n")
    out.flush()


def _error(out, source, number, exc) -> None:
    message = f"{source}:{number}: not JSON: {exc.msg if hasattr(exc, 'msg') else exc}"
    out.write(json.dumps({"error": message}) + "\n")
    out.flush()

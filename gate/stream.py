"""JSON (Lines) in, one JSON decision per line out, in constant memory."""

from __future__ import annotations

import json
from collections import deque


def classify_stream(classifier, lines, out, *, level=None, track_shapes: int = 0, source: str = "-") -> int:
    """Classify each window; returns how many inputs could not be parsed.

    Input is JSON Lines; when the first non-blank line is not complete JSON,
    the whole input is read as one (pretty-printed) JSON window.
    """
    recent = deque(maxlen=track_shapes) if track_shapes else None
    bad = 0
    first = True
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            item = json.loads(line)
        except ValueError as exc:
            if first:
                rest = line + "".join(lines)
                try:
                    item = json.loads(rest)
                except ValueError as whole_exc:
                    _error(out, source, number, whole_exc)
                    return bad + 1
                _emit(classifier, item, out, level, recent)
                return bad
            _error(out, source, number, exc)
            bad += 1
            continue
        first = False
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

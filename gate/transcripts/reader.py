"""Read a transcript file, or the part of it after a byte offset, into entries.

A hook runs after every reply of a session that may be hours long: it reads only what was
appended since its last offset. A line still being written (no newline yet) is not consumed,
so the next read starts at its beginning. Unknown line types, malformed JSON and lines of the
wrong shape are skipped and counted, never fatal; a file that cannot be opened raises OSError.
"""

from __future__ import annotations

import json
import os
from collections import Counter

from gate.transcripts import claude, codex
from gate.transcripts.entries import Reading

_HEAD_LIMIT = 8 * 1024 * 1024  # a Codex session_meta line carries the instructions: allow them


def read_transcript(path, offset: int = 0, *, final: bool = False, first_line: int | None = None) -> Reading:
    """Entries of `path` from byte `offset` on.

    `final=True` also reads a last line without a newline (the file is finished), but `offset`
    stays before it: should the file grow after all, that line is read again whole. An offset
    past the end of the file or not at a line start means the file was replaced: it is read
    from 0 and `restarted` is set. `first_line` is the line number at `offset` when the caller
    knows it; entries' `line` is 0 (unknown) otherwise, unless reading from 0.
    """
    path = os.fspath(path)
    skipped, unknown = Counter(), Counter()
    entries: list = []
    with open(path, "rb") as handle:
        size = os.fstat(handle.fileno()).st_size
        restarted = False
        if offset < 0 or offset > size or (offset > 0 and not _at_line_start(handle, offset)):
            offset, restarted = 0, True
        fmt, parser = _format_from_head(handle, path) if offset > 0 else (None, None)
        line = first_line if first_line is not None else (1 if offset == 0 else 0)
        position = resume = offset
        handle.seek(offset)
        consumed = 0
        for raw in handle:
            whole = raw.endswith(b"\n")
            if not whole and not final:
                break  # still being written: the next read starts here
            start, position = position, position + len(raw)
            if whole:
                resume = position
            consumed += 1
            number = line + consumed - 1 if line else 0
            if not raw.strip():
                continue
            obj = _parse(raw)
            if not isinstance(obj, dict):
                skipped["malformed"] += 1
                continue
            if not isinstance(obj.get("type", ""), str):
                skipped["untyped"] += 1
                continue
            if parser is None:
                fmt = codex.FORMAT if codex.looks_like_codex(obj, start == 0) else claude.FORMAT
                parser = codex.CodexLines(path) if fmt == codex.FORMAT else claude.ClaudeLines()
            try:
                result = parser.entries(obj, start, position, number)
            except Exception as exc:  # a line of a shape no version writes: counted, never fatal
                result = f"unreadable:{type(exc).__name__}"
            if isinstance(result, list):
                entries.extend(result)
            elif result is None:
                name = obj.get("type") if isinstance(obj.get("type"), str) else "untyped"
                skipped[name] += 1
                unknown[name] += 1
            else:
                skipped[result] += 1
    return Reading(entries=entries, offset=resume, skipped=dict(skipped), format=fmt or claude.FORMAT,
                   lines=consumed, unknown=dict(unknown), restarted=restarted)


def _parse(raw: bytes):
    try:
        text = raw.decode("utf-8")  # as str: json.loads would sniff the encoding of bytes first
    except UnicodeDecodeError:  # one bad byte should not cost the line
        text = raw.decode("utf-8", "replace")
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        return None


def _at_line_start(handle, offset: int) -> bool:
    handle.seek(offset - 1)
    return handle.read(1) == b"\n"


def _format_from_head(handle, path: str):
    """Reading from the middle: the file's first line says its format (and a Codex session's id)."""
    handle.seek(0)
    head = handle.readline(_HEAD_LIMIT)
    obj = _parse(head) if head.endswith(b"\n") else None
    if not isinstance(obj, dict):
        return None, None
    if codex.looks_like_codex(obj, True):
        parser = codex.CodexLines(path)
        parser.entries(obj, 0, len(head), 1)  # learns the session id; its entries were read before
        return codex.FORMAT, parser
    return claude.FORMAT, claude.ClaudeLines()

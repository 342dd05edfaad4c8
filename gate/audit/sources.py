"""Where the memories come from: an export file or a live scope, read-only, in parts.

Every source yields parts, in the order of the store: a `FileChunk` (a range of whole lines of a
JSON Lines file, which a worker process reads, decodes and parses itself, so the reader only
finds line starts) or a `Batch` of `(place, memory object)`, `place` naming the file and item
(or page and item) for an error message.

- JSON Lines (`.jsonl`, `.ndjson`, or any file whose first character is not `[`/`{` followed
  by a whole document): one memory object per line, or one get_all page (`{"results": [...]}`)
  per line. Cut into chunks of a few MB at line starts; no chunk is ever held whole by the
  reader, and a worker holds one at a time.
- JSON: a list of memories, a get_all page, a list of pages, or `{"memories": [...]}`.
  Loaded whole (use JSON Lines for a large export).
- The emulator's store: the SQLite file of `gate emulator --db FILE`, opened read-only; what
  a latest_only read returns (no deleted or superseded memories), across every project in it.
- Live: get_all pages of one scope through the platform client (`POST /v3/memories/` is the
  platform's read; nothing else is ever sent).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass

BATCH = 2000
SQLITE_MAGIC = b"SQLite format 3\x00"
UTF8_BOM = b"\xef\xbb\xbf"
# A JSON Lines file is cut into about CHUNKS_PER_FILE chunks (so a small file still spreads
# over the workers), each between these sizes (so a large one streams a few MB at a time).
CHUNKS_PER_FILE = 16
MIN_CHUNK_BYTES = 64 << 10
MAX_CHUNK_BYTES = 4 << 20


@dataclass(frozen=True)
class FileChunk:
    """The whole lines in bytes [start, end) of a JSON Lines file."""
    path: str
    name: str  # the file's name, as errors print it
    index: int  # the chunk's place in the file: chunks are folded in any order
    start: int
    end: int


@dataclass(frozen=True)
class Batch:
    index: int  # the batch's place in the source
    items: list  # (place, memory object)


class SourceError(Exception):
    """The source cannot be read; the message is one line for the user."""


def export_kind(path: str) -> str:
    """'jsonl', 'json' or 'sqlite', from the file's first bytes (the suffix only breaks a tie)."""
    try:
        with open(path, "rb") as handle:
            head = handle.read(4096)
    except FileNotFoundError:
        raise SourceError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise SourceError(f"{path}: is a directory, expected an export file") from None
    except OSError as exc:
        raise SourceError(f"{path}: cannot read: {exc.strerror or exc}") from None
    if head.startswith(SQLITE_MAGIC):
        return "sqlite"
    if path.endswith((".jsonl", ".ndjson")):
        return "jsonl"
    stripped = head.lstrip(b"\xef\xbb\xbf \t\r\n")
    if stripped.startswith(b"["):
        return "json"
    if stripped.startswith(b"{"):
        # one object per line, or one document spread over lines?
        first_line = stripped.split(b"\n", 1)[0].strip()
        try:
            json.loads(first_line)
            return "jsonl"
        except ValueError:
            return "json"
    return "jsonl"


def read_export(path: str, batch: int = BATCH):
    kind = export_kind(path)
    if kind == "sqlite":
        return _numbered(_read_emulator_store(path, batch))
    if kind == "json":
        return _numbered(_read_json(path, batch))
    return _chunks(path)


def _numbered(batches):
    for index, items in enumerate(batches):
        yield Batch(index, items)


def _chunks(path: str):
    """The file cut at line starts into FileChunks; only a few bytes around each cut are read."""
    name = os.path.basename(path)
    try:
        with open(path, "rb") as handle:
            size = os.fstat(handle.fileno()).st_size
            step = min(MAX_CHUNK_BYTES, max(MIN_CHUNK_BYTES, size // CHUNKS_PER_FILE))
            start, index = 0, 0
            while start < size:
                end = min(size, start + step)
                if end < size:
                    handle.seek(end - 1)  # a cut right after a newline keeps that line whole
                    handle.readline()
                    end = handle.tell()
                yield FileChunk(path, name, index, start, end)
                start, index = end, index + 1
    except OSError as exc:
        raise SourceError(f"{name}: cannot read: {exc.strerror or exc}") from None


def read_chunk(chunk: FileChunk):
    """(line index in the chunk, line) for each non-blank line of the chunk, as text mode reads
    it: UTF-8, a byte order mark at the file's start dropped, "\\r\\n" and "\\r" ending lines too."""
    try:
        with open(chunk.path, "rb") as handle:
            handle.seek(chunk.start)
            data = handle.read(chunk.end - chunk.start)
    except OSError as exc:
        raise SourceError(f"{chunk.name}: cannot read: {exc.strerror or exc}") from None
    if chunk.start == 0 and data.startswith(UTF8_BOM):
        data = data[len(UTF8_BOM):]
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        before = data[:exc.start]
        column = exc.start - (max(before.rfind(b"\n"), before.rfind(b"\r")) + 1)
        raise SourceError(f"{chunk.name}:{line_number(chunk, _count_lines(before))}: not UTF-8 text "
                          f"({exc.reason} at byte {column} of the line)") from None
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    for number, line in enumerate(text.split("\n")):
        if line and not line.isspace():
            yield number, line


def line_number(chunk: FileChunk, index: int) -> int:
    """The file's line number of line `index` of the chunk (counted only for an error message)."""
    before, left, cr = 0, chunk.start, False
    with open(chunk.path, "rb") as handle:
        while left > 0:
            block = handle.read(min(left, 1 << 20))
            if not block:
                break
            left -= len(block)
            before += _count_lines(block) - (cr and block.startswith(b"\n"))  # a "\r\n" across two blocks
            cr = block.endswith(b"\r")
    return before + index + 1


def _count_lines(data: bytes) -> int:
    """Line ends in `data`: "\\n", "\\r\\n" and a lone "\\r", as text mode reads them."""
    return data.count(b"\n") + data.count(b"\r") - data.count(b"\r\n")


def _read_json(path: str, batch: int):
    name = os.path.basename(path)
    try:
        with open(path, encoding="utf-8-sig") as handle:
            data = json.load(handle)
    except UnicodeDecodeError as exc:
        raise SourceError(f"{name}: not UTF-8 text ({exc.reason})") from None
    except json.JSONDecodeError as exc:
        raise SourceError(f"{name}:{exc.lineno}:{exc.colno}: not JSON: {exc.msg}") from None
    out = []
    for place, item in _memories_in(data, name):
        out.append((place, item))
        if len(out) >= batch:
            yield out
            out = []
    if out:
        yield out


def _memories_in(data, where: str):
    """(place, memory object) for each memory in a JSON document of any accepted shape."""
    if isinstance(data, dict):
        for key in ("results", "memories"):
            if isinstance(data.get(key), list):
                for i, item in enumerate(data[key]):
                    yield f"{where}: {key}[{i}]", item
                return
        if "memory" in data:
            yield where, data
            return
        raise SourceError(f"{where}: expected a list of memories, a get_all page ({{\"results\": [...]}}) "
                          "or {\"memories\": [...]}")
    if not isinstance(data, list):
        raise SourceError(f"{where}: expected a list of memories, got {type(data).__name__}")
    for i, item in enumerate(data):
        if isinstance(item, dict) and "memory" not in item and isinstance(item.get("results"), list):
            for j, inner in enumerate(item["results"]):  # a list of get_all pages
                yield f"{where}: [{i}].results[{j}]", inner
        else:
            yield f"{where}: [{i}]", item


def _read_emulator_store(path: str, batch: int):
    import sqlite3

    from gate.platform.emulator_store import memory_json

    name = os.path.basename(path)
    try:
        db = sqlite3.connect(f"file:{os.path.abspath(path)}?mode=ro", uri=True)
        db.row_factory = sqlite3.Row
        rows = db.execute(
            "SELECT * FROM memories WHERE is_deleted=0 AND (superseded_by IS NULL OR superseded_by NOT IN "
            "(SELECT id FROM memories WHERE is_deleted=0)) ORDER BY created_at, rowid")
    except sqlite3.Error as exc:
        raise SourceError(f"{name}: not a gate emulator store ({exc})") from None
    out = []
    try:
        for row in rows:
            r = dict(row)
            r["metadata"] = json.loads(r["metadata"] or "{}")
            r["categories"] = json.loads(r["categories"] or "[]")
            out.append((f"{name}: memory {r['id']}", memory_json(r)))
            if len(out) >= batch:
                yield out
                out = []
    except (sqlite3.Error, ValueError) as exc:
        raise SourceError(f"{name}: cannot read the emulator's memories ({exc})") from None
    finally:
        db.close()
    if out:
        yield out


def read_live(client, filters: dict, *, page_size: int = 100, max_pages: int = 100_000):
    """Pages of one scope through `client` (a gate.platform.client.PlatformClient): reads only."""
    for page in range(1, max_pages + 1):
        res = client.get_all_page(filters, page=page, page_size=page_size)
        if not res.ok:
            raise SourceError(f"live read, page {page}: {res.error}")
        items, more = _page(res.data, page_size)
        if items:
            yield Batch(page - 1, [(f"live page {page}, item {i}", item) for i, item in enumerate(items)])
        if not more:
            return
    raise SourceError(f"live read: more than {max_pages} pages; stopped")


def _page(data, page_size: int) -> tuple[list, bool]:
    """(memories, more pages?) of a get_all answer: a {results, next} page or a bare list."""
    if isinstance(data, dict):
        items = data.get("results") or data.get("memories") or []
        more = bool(data.get("next")) if "next" in data else len(items) >= page_size
        return list(items), more
    if isinstance(data, list):
        return data, len(data) >= page_size
    raise SourceError(f"live read: expected a page of memories, got {type(data).__name__}")

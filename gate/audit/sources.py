"""Where the memories come from: an export file or a live scope, read-only, in batches.

Every source yields batches of `(place, item)`: `place` names the file and line (or page and
item) for an error message, `item` is a memory object or, for JSON Lines, the raw line, so
the JSON is parsed in the worker processes and not in the reader.

- JSON Lines (`.jsonl`, `.ndjson`, or any file whose first character is not `[`/`{` followed
  by a whole document): one memory object per line, or one get_all page (`{"results": [...]}`)
  per line. Streamed: the file is never held in memory.
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

BATCH = 2000
SQLITE_MAGIC = b"SQLite format 3\x00"


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
        return _read_emulator_store(path, batch)
    if kind == "json":
        return _read_json(path, batch)
    return _read_jsonl(path, batch)


def _read_jsonl(path: str, batch: int):
    name = os.path.basename(path)
    out = []
    try:
        with open(path, encoding="utf-8-sig", errors="strict") as handle:
            for number, line in enumerate(handle, 1):
                if not line.strip():
                    continue
                out.append((f"{name}:{number}", line))
                if len(out) >= batch:
                    yield out
                    out = []
    except UnicodeDecodeError as exc:
        raise SourceError(f"{name}: not UTF-8 text ({exc.reason} at byte {exc.start} of a line)") from None
    except OSError as exc:
        raise SourceError(f"{name}: cannot read: {exc.strerror or exc}") from None
    if out:
        yield out


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
            yield [(f"live page {page}, item {i}", item) for i, item in enumerate(items)]
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

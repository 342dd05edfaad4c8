"""The audit's SQLite tables, and the two ways rows get in: a part folded in, a file merged in.

Each process that reads memories (a worker, or the main process for a small store) folds its
parts into a file of its own, so no process waits on another and nothing per memory crosses
between them; at the end the main process merges the files into one, in SQLite's own code.

- shapes: one row per shape: how many memories have it, the first and the last of them (their
  text, created_at and position in the store; the last's text and created_at are NULL while
  the shape has one memory: most shapes, and the table is read whole for each LSH band), the
  first one's noise-marker bits and drop rule, and the shape's LSH band keys.
- cells: memories per (shape, policy, day, noise flags); a cell may have several rows.

Parts are folded, and files merged, in any order: a row keeps the sample of the lowest position
as its first and the highest as its last, so the result is the same as reading in order.
"""

from __future__ import annotations

import sqlite3

from gate.audit.shape import BANDS

_BAND_COLUMNS = [f"b{i}" for i in range(BANDS)]
SHAPE_COLUMNS = ("key", "shape", "n", "first_text", "first_at", "first_pos", "last_text", "last_at", "last_pos",
                 "markers", "drop_rule", *_BAND_COLUMNS)
_SCHEMA = f"""
CREATE TABLE IF NOT EXISTS shapes (
    key INTEGER PRIMARY KEY, shape TEXT NOT NULL, n INTEGER NOT NULL,
    first_text TEXT, first_at TEXT, first_pos INTEGER NOT NULL,
    last_text TEXT, last_at TEXT, last_pos INTEGER NOT NULL,
    markers INTEGER, drop_rule TEXT,
    {", ".join(f"{c} INTEGER" for c in _BAND_COLUMNS)}
);
CREATE TABLE IF NOT EXISTS cells (key INTEGER NOT NULL, policy TEXT NOT NULL, day TEXT NOT NULL,
                                  flags INTEGER NOT NULL, n INTEGER NOT NULL);
"""
# When a shape is already there: add the counts, keep the earlier first and the later last.
# (SET reads the row as it was, whatever the order of the assignments.)
_EARLIER = "excluded.first_pos < first_pos"
_LATER = "excluded.last_pos > last_pos"
_COMBINE = ("ON CONFLICT(key) DO UPDATE SET n = n + excluded.n, "
            + ", ".join(f"{c} = CASE WHEN {_EARLIER} THEN excluded.{c} ELSE {c} END"
                        for c in ("first_text", "first_at", "markers", "drop_rule"))
            + ", first_pos = MIN(first_pos, excluded.first_pos), "
            + ", ".join(f"last_{c} = CASE WHEN {_LATER} THEN COALESCE(excluded.last_{c}, excluded.first_{c}) "
                        f"ELSE COALESCE(last_{c}, first_{c}) END" for c in ("text", "at"))
            + ", last_pos = MAX(last_pos, excluded.last_pos)")
_UPSERT = f"INSERT INTO shapes VALUES ({','.join('?' * len(SHAPE_COLUMNS))}) {_COMBINE}"
# `WHERE true`: without it SQLite would read ON CONFLICT as the SELECT's join constraint
_MERGE_SHAPES = f"INSERT INTO shapes SELECT {', '.join(SHAPE_COLUMNS)} FROM part.shapes WHERE true {_COMBINE}"
_MERGE_CELLS = "INSERT INTO cells SELECT key, policy, day, flags, n FROM part.cells"


# Page cache of a connection. The tables are far larger than any cache, their rows come in
# key order (a merge) or in small batches (a part), and the OS caches the file: a larger
# cache made no measurable difference to folding, merging or reading a band, only to memory.
CACHE_MB = 8


def connect(path: str, cache_mb: int = CACHE_MB) -> sqlite3.Connection:
    """A connection for writing a tally file only this process uses: no journal, no fsync (a
    temporary file that a crash loses whole anyway), `cache_mb` of page cache."""
    db = sqlite3.connect(path, isolation_level=None)
    for pragma in ("journal_mode=OFF", "synchronous=OFF", "temp_store=FILE", f"cache_size=-{cache_mb * 1024}"):
        db.execute(f"PRAGMA {pragma}")
    db.executescript(_SCHEMA)
    return db


def add_part(db: sqlite3.Connection, shapes: list, cells: list) -> None:
    """Fold one part's rows in: `shapes` rows in SHAPE_COLUMNS order, `cells` (key, policy, day, flags, n)."""
    db.execute("BEGIN")
    db.executemany(_UPSERT, shapes)
    db.executemany("INSERT INTO cells VALUES (?,?,?,?,?)", cells)
    db.execute("COMMIT")


def merge_file(db: sqlite3.Connection, path: str) -> None:
    """Fold every row of another tally file in."""
    db.execute("ATTACH DATABASE ? AS part", (path,))
    try:
        db.execute("BEGIN")
        db.execute(_MERGE_SHAPES)
        db.execute(_MERGE_CELLS)
        db.execute("COMMIT")
    finally:
        db.execute("DETACH DATABASE part")

"""The spool: flagged windows waiting for the platform, in one SQLite file (WAL mode, 0600).

Only what the gate flagged is written here: the turns that would be sent, their type, the
policy, level and shape that decided, the session, the repository and a content key. Beside
them, two small tables let a hook read only what is new: the byte offset reached in each
transcript, and the shapes (hashes, not text) of a session's recent windows.

An item moves pending -> sending (claimed by one flush) -> sent, or -> parked when it keeps
failing. A claim names its flush; a flush that died (kill -9) leaves its lock file free, and
the next flush takes the item back (counting a resend: the platform may have had it).
"""

from __future__ import annotations

import json
import os
import sqlite3
import time
from dataclasses import dataclass

from gate.capture.paths import private_dir

SPOOL_FILE = "spool.sqlite3"
SCHEMA_VERSION = 1
STATES = ("pending", "sending", "sent", "parked")
SHAPES_KEPT_S = 30 * 86400  # a session's recent shapes are forgotten a month after its last event

_SCHEMA = """
CREATE TABLE IF NOT EXISTS items (
    id INTEGER PRIMARY KEY,
    content_key TEXT NOT NULL UNIQUE,
    state TEXT NOT NULL DEFAULT 'pending',
    type TEXT NOT NULL,
    policy TEXT NOT NULL,
    level TEXT NOT NULL,
    rule TEXT,
    shape TEXT NOT NULL,
    session_id TEXT NOT NULL,
    repository TEXT NOT NULL,
    payload TEXT NOT NULL,            -- JSON list of {role, content}: exactly what is sent
    created_at REAL NOT NULL,
    attempts INTEGER NOT NULL DEFAULT 0,   -- failed sends that count toward parking
    resends INTEGER NOT NULL DEFAULT 0,    -- sends whose answer was lost: the platform may hold a copy
    next_attempt_at REAL NOT NULL DEFAULT 0,
    claimed_by TEXT,
    claimed_at REAL,
    event_id TEXT,
    sent_at REAL,
    error TEXT                             -- the last failure, redacted
);
CREATE INDEX IF NOT EXISTS items_due ON items (state, next_attempt_at, id);
CREATE TABLE IF NOT EXISTS transcripts (
    path TEXT PRIMARY KEY,
    offset INTEGER NOT NULL,
    updated_at REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS sessions (
    session_id TEXT PRIMARY KEY,
    shapes TEXT NOT NULL,                  -- JSON list of shape ids, oldest first
    updated_at REAL NOT NULL
);
"""

_COLUMNS = ("id", "content_key", "state", "type", "policy", "level", "rule", "shape", "session_id",
            "repository", "payload", "created_at", "attempts", "resends", "next_attempt_at",
            "claimed_by", "claimed_at", "event_id", "sent_at", "error")


@dataclass(frozen=True)
class NewItem:
    """A flagged window on its way into the spool."""

    content_key: str
    type: str
    policy: str
    level: str
    rule: str | None
    shape: str
    session_id: str
    repository: str
    messages: tuple  # ({role, content}, ...)


@dataclass(frozen=True)
class Item:
    id: int
    content_key: str
    state: str
    type: str
    policy: str
    level: str
    rule: str | None
    shape: str
    session_id: str
    repository: str
    payload: str
    created_at: float
    attempts: int
    resends: int
    next_attempt_at: float
    claimed_by: str | None
    claimed_at: float | None
    event_id: str | None
    sent_at: float | None
    error: str | None

    @property
    def messages(self) -> list:
        return json.loads(self.payload)


class SpoolError(Exception):
    """The spool could not be read or written (full disk, permissions, a corrupt file)."""


class Spool:
    """One connection to the spool. Every method is one transaction."""

    def __init__(self, directory: str, *, busy_timeout: float = 10.0):
        self.directory = private_dir(directory)
        self.path = os.path.join(self.directory, SPOOL_FILE)
        try:
            _create_private(self.path)
            self._db = sqlite3.connect(self.path, timeout=busy_timeout, isolation_level=None)
            _write_ahead_log(self._db, busy_timeout)
            # FULL: a commit that says 'sent' survives a power cut, not only a killed process
            self._db.execute("PRAGMA synchronous=FULL")
            if self._db.execute("PRAGMA user_version").fetchone()[0] != SCHEMA_VERSION:
                # idempotent statements: two processes creating the spool at once both succeed
                self._db.executescript(_SCHEMA + f"PRAGMA user_version={SCHEMA_VERSION};")
        except (sqlite3.Error, OSError) as exc:
            raise _failure(self.path, exc) from None

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> "Spool":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # -- what the hook reads and writes ------------------------------------------------------

    def resume_point(self, path: str, session_id: str) -> tuple[int, list[str]]:
        """Where a hook goes on: the transcript's offset and the session's recent shapes, read
        in one statement (one snapshot). Read apart, another hook could record between the two
        reads, and this one would judge the windows after the old offset against their own
        shapes, dropping them as repeats."""
        row = self._read("SELECT (SELECT offset FROM transcripts WHERE path = ?),"
                         " (SELECT shapes FROM sessions WHERE session_id = ?)", (path, session_id))[0]
        offset, stored = row[0] or 0, row[1]
        try:
            shapes = json.loads(stored) if stored is not None else []
        except ValueError:
            shapes = []
        if not isinstance(shapes, list):  # a damaged row is no shapes, never an error
            shapes = []
        return offset, [shape for shape in shapes if isinstance(shape, str)]

    def record(self, *, transcript: str, offset: int, session_id: str, shapes: list[str],
               items: list[NewItem], read_from: int | None = None, now: float | None = None) -> int:
        """Store new flagged items with the transcript offset and session shapes that go with
        them, all or nothing: a failed write leaves the offset where it was, so the same
        windows are read again next time. Returns how many items were new.

        `read_from` is the offset the caller started at: if another hook moved it meanwhile
        (two events at once), the offset only moves forward."""
        now = time.time() if now is None else now
        added = 0
        with self._write():
            row = self._db.execute("SELECT offset FROM transcripts WHERE path = ?", (transcript,)).fetchone()
            if row is not None and read_from is not None and row[0] != read_from:
                offset = max(offset, row[0])
            for item in items:
                cursor = self._db.execute(
                    "INSERT OR IGNORE INTO items (content_key, type, policy, level, rule, shape, session_id,"
                    " repository, payload, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (item.content_key, item.type, item.policy, item.level, item.rule, item.shape,
                     item.session_id, item.repository,
                     json.dumps(list(item.messages), ensure_ascii=False), now))
                added += cursor.rowcount
            self._db.execute(
                "INSERT INTO transcripts (path, offset, updated_at) VALUES (?, ?, ?)"
                " ON CONFLICT(path) DO UPDATE SET offset = excluded.offset, updated_at = excluded.updated_at",
                (transcript, offset, now))
            self._db.execute(
                "INSERT INTO sessions (session_id, shapes, updated_at) VALUES (?, ?, ?)"
                " ON CONFLICT(session_id) DO UPDATE SET shapes = excluded.shapes, updated_at = excluded.updated_at",
                (session_id, json.dumps(shapes), now))
            # a repeat is judged against recent windows; a month-old session has none worth keeping
            self._db.execute("DELETE FROM sessions WHERE updated_at < ?", (now - SHAPES_KEPT_S,))
        return added

    # -- what a flush does -------------------------------------------------------------------

    def claim(self, claimer: str, now: float | None = None) -> Item | None:
        """Take the next due pending item for `claimer`; no other flush can take it."""
        now = time.time() if now is None else now
        with self._write():
            row = self._db.execute(
                "SELECT id FROM items WHERE state = 'pending' AND next_attempt_at <= ?"
                " ORDER BY id LIMIT 1", (now,)).fetchone()  # oldest first: windows reach the platform in order
            if row is None:
                return None
            self._db.execute("UPDATE items SET state = 'sending', claimed_by = ?, claimed_at = ? WHERE id = ?",
                             (claimer, now, row[0]))
            return self._item(row[0])

    def mark_sent(self, item_id: int, claimer: str, event_id: str | None, now: float | None = None) -> bool:
        now = time.time() if now is None else now
        with self._write():
            cursor = self._db.execute(
                "UPDATE items SET state = 'sent', event_id = ?, sent_at = ?, claimed_by = NULL, error = NULL"
                " WHERE id = ? AND state = 'sending' AND claimed_by = ?", (event_id, now, item_id, claimer))
            return cursor.rowcount == 1

    def release(self, item_id: int, claimer: str, *, error: str | None, counted: bool, in_doubt: bool,
                retry_in: float = 0.0, park: bool = False, now: float | None = None) -> None:
        """Give a claimed item back: pending again (due after `retry_in`), or parked."""
        now = time.time() if now is None else now
        with self._write():
            self._db.execute(
                "UPDATE items SET state = ?, claimed_by = NULL, error = ?, attempts = attempts + ?,"
                " resends = resends + ?, next_attempt_at = ? WHERE id = ? AND state = 'sending' AND claimed_by = ?",
                ("parked" if park else "pending", error, int(counted), int(in_doubt), now + retry_in,
                 item_id, claimer))

    def claimers(self) -> list[str]:
        return [r[0] for r in self._read("SELECT DISTINCT claimed_by FROM items WHERE state = 'sending'")]

    def reclaim(self, claimer: str) -> int:
        """Items a dead flush was sending go back to pending; each may already be on the platform."""
        with self._write():
            return self._db.execute(
                "UPDATE items SET state = 'pending', claimed_by = NULL, resends = resends + 1, next_attempt_at = 0,"
                " error = 'the flush sending it stopped before the answer was recorded'"
                " WHERE state = 'sending' AND claimed_by = ?", (claimer,)).rowcount

    # -- what a person asks ------------------------------------------------------------------

    def items(self, states=STATES, limit: int | None = None) -> list[Item]:
        marks = ",".join("?" * len(states))
        sql = f"SELECT {', '.join(_COLUMNS)} FROM items WHERE state IN ({marks}) ORDER BY id"
        if limit is not None:
            sql += f" LIMIT {int(limit)}"
        return [Item(*row) for row in self._read(sql, tuple(states))]

    def counts(self) -> dict:
        out = dict.fromkeys(STATES, 0)
        for state, n in self._read("SELECT state, COUNT(*) FROM items GROUP BY state"):
            out[state] = n
        return out

    def retry(self, ids=None) -> int:
        """Parked (and waiting) items become due now, their failure count reset."""
        where = "state IN ('parked', 'pending')"
        args: tuple = ()
        if ids:
            where += f" AND id IN ({','.join('?' * len(ids))})"
            args = tuple(ids)
        with self._write():
            return self._db.execute(f"UPDATE items SET state = 'pending', attempts = 0, next_attempt_at = 0"
                                    f" WHERE {where}", args).rowcount

    def purge_sent_before(self, when: float) -> int:
        with self._write():
            return self._db.execute("DELETE FROM items WHERE state = 'sent' AND sent_at < ?", (when,)).rowcount

    # -- plumbing ----------------------------------------------------------------------------

    def _item(self, item_id: int) -> Item:
        row = self._db.execute(f"SELECT {', '.join(_COLUMNS)} FROM items WHERE id = ?", (item_id,)).fetchone()
        return Item(*row)

    def _read(self, sql: str, args: tuple = ()) -> list:
        try:
            return self._db.execute(sql, args).fetchall()
        except sqlite3.Error as exc:
            raise _failure(self.path, exc) from None

    def _write(self):
        return _Transaction(self)


class _Transaction:
    """BEGIN IMMEDIATE ... COMMIT: the write lock is taken up front, so two flushes never
    both read an item as pending; any failure rolls back and surfaces as SpoolError."""

    def __init__(self, spool: Spool):
        self.db = spool._db
        self.path = spool.path

    def __enter__(self):
        try:
            self.db.execute("BEGIN IMMEDIATE")
        except sqlite3.Error as exc:
            raise _failure(self.path, exc) from None
        return self.db

    def __exit__(self, kind, exc, tb):
        try:
            if kind is None:
                self.db.execute("COMMIT")
                return False
        except sqlite3.Error as error:
            _rollback(self.db)
            raise _failure(self.path, error) from None
        _rollback(self.db)
        if isinstance(exc, sqlite3.Error):
            raise _failure(self.path, exc) from None
        return False


def _failure(path: str, exc: Exception) -> SpoolError:
    text = str(exc)
    if "disk" in text or "full" in text or isinstance(exc, OSError):
        text += " (a full disk or a read-only folder? nothing was changed)"
    return SpoolError(f"{path}: {text}")


def _rollback(db) -> None:
    try:
        db.execute("ROLLBACK")
    except sqlite3.Error:
        pass


def _write_ahead_log(db, timeout: float) -> None:
    """Put the spool in WAL mode (kept in the file). Two processes opening a new spool at once
    both switch it, and SQLite refuses one of them at once, without waiting as it waits for a
    lock (two hooks of one session's end: the later lost its windows). The other has switched
    it, so asking again soon succeeds; ask until `timeout` has passed."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            db.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() >= deadline:
                raise
            time.sleep(0.01)


def _create_private(path: str) -> None:
    """Create the database file 0600 before SQLite does (it gives its WAL and shared-memory
    files the database file's mode), and tighten one made by someone else."""
    try:
        os.close(os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600))
    except FileExistsError:
        if os.stat(path).st_mode & 0o077:
            os.chmod(path, 0o600)

"""The embedded backend: SQLite FTS5 ranked by BM25, one database file per system and run.

A real database on the local disk, so the whole benchmark runs on a fresh machine with no service.
Questions are searched as an OR of their content words (porter-stemmed), like a plain BM25 engine.
"""

from __future__ import annotations

import os
import re
import sqlite3

from gate.bench.stores import Hit, Memory, StoreError
from gate.bench.text import STOPWORDS

class SqliteStore:
    live = False

    def __init__(self, directory: str, system: str, *, keep: bool = False):
        self.directory = directory
        self.keep = keep  # keep the database after the run, for inspection
        self.path = os.path.join(directory, re.sub(r"[^A-Za-z0-9_.-]+", "-", system) + ".sqlite")
        self._db = None

    def describe(self) -> dict:
        return {"backend": "sqlite", "path": self.path}

    def reset(self, scopes) -> None:
        try:
            os.makedirs(self.directory, exist_ok=True)
            for suffix in ("", "-wal", "-shm", "-journal"):
                if os.path.exists(self.path + suffix):
                    os.remove(self.path + suffix)
            self._db = sqlite3.connect(self.path)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._db.execute("CREATE VIRTUAL TABLE memories USING fts5("
                             "text, scope UNINDEXED, source UNINDEXED, kind UNINDEXED, policy UNINDEXED, "
                             "tokenize='porter unicode61')")
            self._db.commit()
        except (OSError, sqlite3.Error) as exc:
            raise StoreError(f"cannot create {self.path}: {exc}") from None

    def add(self, scope: str, memory: Memory) -> None:
        try:
            self._db.execute("INSERT INTO memories (text, scope, source, kind, policy) VALUES (?, ?, ?, ?, ?)",
                             (memory.text, scope, memory.source, memory.kind, memory.policy))
        except (sqlite3.Error, AttributeError) as exc:
            raise StoreError(f"insert into {os.path.basename(self.path)} failed: {exc}") from None

    def flush(self) -> None:
        try:
            self._db.commit()
        except (sqlite3.Error, AttributeError) as exc:
            raise StoreError(f"commit to {os.path.basename(self.path)} failed: {exc}") from None

    def search(self, scope: str, query: str, k: int) -> list:
        expression = match_expression(query)
        if not expression:
            return []
        try:
            rows = self._db.execute(
                "SELECT text, source, kind, bm25(memories) AS rank FROM memories "
                "WHERE memories MATCH ? AND scope = ? ORDER BY rank LIMIT ?", (expression, scope, k)).fetchall()
        except (sqlite3.Error, AttributeError) as exc:
            raise StoreError(f"search in {os.path.basename(self.path)} failed: {exc}") from None
        return [Hit(text=t, source=s, kind=kd, score=round(-r, 4)) for t, s, kd, r in rows]

    def count(self) -> int:
        return self._db.execute("SELECT count(*) FROM memories").fetchone()[0]

    def close(self) -> None:
        if self._db is not None:
            self._db.close()
            self._db = None

    def cleanup(self, scopes=()) -> None:
        self.close()
        if self.keep:
            return
        for suffix in ("", "-wal", "-shm", "-journal"):
            try:
                os.remove(self.path + suffix)
            except OSError:
                pass
        try:
            os.rmdir(self.directory)  # only when the run left nothing else in it
        except OSError:
            pass


def match_expression(query: str) -> str:
    words = list(dict.fromkeys(re.findall(r"\w+", query.lower())))
    content = [w for w in words if w not in STOPWORDS] or words
    return " OR ".join(f'"{w}"' for w in content)

"""The emulator's state: memories, add events and project configuration in SQLite.

Time drives everything: an infer=True add computes its facts at once but they become visible
only at `visible_at`; the event reports PENDING, then RUNNING, then SUCCEEDED at that moment.
Deletes are soft: rows stay with is_deleted=1 and the entity renamed, and vanish from reads.
"""

from __future__ import annotations

import json
import sqlite3
import threading
import time
import uuid
from datetime import datetime, timezone

from gate.platform import emulator_extract as ex

SCHEMA = """
CREATE TABLE IF NOT EXISTS memories (
    id TEXT PRIMARY KEY, org_id TEXT NOT NULL, project_id TEXT NOT NULL,
    user_id TEXT, app_id TEXT, agent_id TEXT, run_id TEXT,
    memory TEXT NOT NULL, hash TEXT NOT NULL, metadata TEXT NOT NULL,
    categories TEXT NOT NULL DEFAULT '[]', event_id TEXT,
    created_at REAL NOT NULL, visible_at REAL NOT NULL,
    superseded_by TEXT, is_deleted INTEGER NOT NULL DEFAULT 0, deleted_at REAL
);
CREATE INDEX IF NOT EXISTS memories_scope ON memories(org_id, project_id, is_deleted);
CREATE TABLE IF NOT EXISTS events (
    id TEXT PRIMARY KEY, org_id TEXT NOT NULL, project_id TEXT NOT NULL,
    created_at REAL NOT NULL, done_at REAL NOT NULL, final_status TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS projects (
    org_id TEXT NOT NULL, project_id TEXT NOT NULL,
    custom_instructions TEXT NOT NULL DEFAULT '', custom_categories TEXT NOT NULL DEFAULT '[]',
    PRIMARY KEY (org_id, project_id)
);
"""


class FilterError(ValueError):
    """A filter the platform would answer with 400."""


def _iso(t: float) -> str:
    return datetime.fromtimestamp(t, tz=timezone.utc).isoformat()


class Store:
    def __init__(self, db: str = ":memory:", clock=time.time):
        self.clock = clock
        self._lock = threading.RLock()
        self._db = sqlite3.connect(db, check_same_thread=False, isolation_level=None)
        self._db.row_factory = sqlite3.Row
        self._db.executescript(SCHEMA)

    def close(self) -> None:
        with self._lock:
            self._db.close()

    # -- projects ----------------------------------------------------------------------------

    def project(self, org_id: str, project_id: str) -> dict:
        with self._lock:
            row = self._db.execute("SELECT * FROM projects WHERE org_id=? AND project_id=?",
                                   (org_id, project_id)).fetchone()
        if row is None:
            return {"custom_instructions": "", "custom_categories": []}
        return {"custom_instructions": row["custom_instructions"],
                "custom_categories": json.loads(row["custom_categories"])}

    def update_project(self, org_id: str, project_id: str, changes: dict) -> None:
        current = self.project(org_id, project_id)
        current.update(changes)
        with self._lock:
            self._db.execute(
                "INSERT INTO projects(org_id, project_id, custom_instructions, custom_categories) "
                "VALUES(?,?,?,?) ON CONFLICT(org_id, project_id) DO UPDATE SET "
                "custom_instructions=excluded.custom_instructions, custom_categories=excluded.custom_categories",
                (org_id, project_id, current["custom_instructions"] or "",
                 json.dumps(current["custom_categories"] or [])))

    # -- writes ------------------------------------------------------------------------------

    def add(self, org_id: str, project_id: str, *, messages: list, entities: dict, metadata: dict,
            infer: bool, delay: float, leak: bool, fail: bool = False) -> dict:
        now = self.clock()
        if not infer:
            # direct import: immediate, every message verbatim, assistant turns included
            facts = [m["content"] for m in messages if (m.get("content") or "").strip()]
            ids = self._insert(org_id, project_id, facts, entities, metadata, None, now, now)
            return {"status": "SUCCEEDED",
                    "results": [{"id": i, "memory": f, "event": "ADD"} for i, f in ids]}
        event_id = str(uuid.uuid4())
        done_at = now + max(0.0, delay)
        instructions = bool(self.project(org_id, project_id)["custom_instructions"].strip())
        with self._lock:
            self._db.execute("INSERT INTO events VALUES(?,?,?,?,?,?)",
                             (event_id, org_id, project_id, now, done_at, "FAILED" if fail else "SUCCEEDED"))
            if not fail:
                facts = ex.extract(messages, instructions_active=instructions, leak=leak)
                self._insert(org_id, project_id, facts, entities, metadata, event_id, now, done_at)
        return {"event_id": event_id, "status": "PENDING",
                "message": "Memory processing has been queued for background execution"}

    def _insert(self, org_id, project_id, facts, entities, metadata, event_id, now, visible_at):
        out = []
        with self._lock:
            for fact in facts:
                key = ex.normalise(fact)
                # infer=True deduplicates: the same fact in the same scope is one record
                if event_id is not None and self._db.execute(
                        "SELECT 1 FROM memories WHERE org_id=? AND project_id=? AND is_deleted=0 AND hash=? "
                        "AND user_id IS ? AND app_id IS ?",
                        (org_id, project_id, key, entities.get("user_id"), entities.get("app_id"))).fetchone():
                    continue
                mid = str(uuid.uuid4())
                self._db.execute(
                    "INSERT INTO memories(id, org_id, project_id, user_id, app_id, agent_id, run_id, memory, hash,"
                    " metadata, event_id, created_at, visible_at) VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?)",
                    (mid, org_id, project_id, entities.get("user_id"), entities.get("app_id"),
                     entities.get("agent_id"), entities.get("run_id"), fact, key, json.dumps(metadata),
                     event_id, now, visible_at))
                subject = ex.superseded_subject(fact) if event_id is not None else None
                if subject:
                    # a contradicted fact is superseded, not deleted; latest_only hides it
                    self._db.execute(
                        "UPDATE memories SET superseded_by=? WHERE org_id=? AND project_id=? AND is_deleted=0"
                        " AND superseded_by IS NULL AND id<>? AND user_id IS ? AND app_id IS ?"
                        " AND instr(lower(memory), ?) > 0",
                        (mid, org_id, project_id, mid, entities.get("user_id"), entities.get("app_id"), subject))
                out.append((mid, fact))
        return out

    def delete(self, org_id: str, project_id: str, entities: dict) -> int:
        """Soft delete of every visible memory matching all the given entities."""
        now = self.clock()
        where = " AND ".join(f"{k}=?" for k in entities)
        stamp = int(now)
        with self._lock:
            ids = [r["id"] for r in self._db.execute(
                f"SELECT id FROM memories WHERE org_id=? AND project_id=? AND is_deleted=0 AND visible_at<=?"
                f" AND {where}", (org_id, project_id, now, *entities.values()))]
            for mid in ids:
                self._db.execute(
                    "UPDATE memories SET is_deleted=1, deleted_at=?, "
                    "user_id=CASE WHEN user_id IS NULL THEN NULL ELSE user_id || '_deleted_' || ? END "
                    "WHERE id=?", (now, stamp, mid))
        return len(ids)

    # -- reads -------------------------------------------------------------------------------

    def event(self, event_id: str, org_id: str) -> dict | None:
        now = self.clock()
        with self._lock:
            ev = self._db.execute("SELECT * FROM events WHERE id=? AND org_id=?", (event_id, org_id)).fetchone()
            if ev is None:
                return None
            span = ev["done_at"] - ev["created_at"]
            if now >= ev["done_at"]:
                status = ev["final_status"]
            elif now < ev["created_at"] + span * 0.25:
                status = "PENDING"
            else:
                status = "RUNNING"
            results = []
            if status == "SUCCEEDED":
                results = [{"id": r["id"], "memory": r["memory"], "event": "ADD"} for r in self._db.execute(
                    "SELECT id, memory FROM memories WHERE event_id=? ORDER BY rowid", (event_id,))]
        return {"id": event_id, "status": status, "created_at": _iso(ev["created_at"]),
                "updated_at": _iso(min(now, ev["done_at"])), "results": results}

    def query(self, org_id: str, project_id: str, filters: dict, *, latest_only: bool) -> list[dict]:
        if not isinstance(filters, dict) or not filters:
            raise FilterError("filters are required")
        check_filters(filters)
        now = self.clock()
        with self._lock:
            rows = [dict(r) for r in self._db.execute(
                "SELECT * FROM memories WHERE org_id=? AND project_id=? AND is_deleted=0 AND visible_at<=?"
                " ORDER BY created_at, rowid", (org_id, project_id, now))]
            if latest_only:
                visible = {r["id"] for r in rows}
                rows = [r for r in rows if not r["superseded_by"] or r["superseded_by"] not in visible]
        out = []
        for r in rows:
            r["metadata"] = json.loads(r["metadata"])
            r["categories"] = json.loads(r["categories"])
            if matches(filters, r):
                out.append(memory_json(r))
        return out

    def count_all(self) -> dict:
        with self._lock:
            live = self._db.execute("SELECT COUNT(*) FROM memories WHERE is_deleted=0").fetchone()[0]
            dead = self._db.execute("SELECT COUNT(*) FROM memories WHERE is_deleted=1").fetchone()[0]
        return {"live": live, "deleted": dead}


def memory_json(r: dict) -> dict:
    return {"id": r["id"], "memory": r["memory"], "user_id": r["user_id"], "app_id": r["app_id"],
            "agent_id": r["agent_id"], "run_id": r["run_id"], "metadata": r["metadata"],
            "categories": r["categories"], "hash": r["hash"],
            "created_at": _iso(r["created_at"]), "updated_at": _iso(r["visible_at"])}


ENTITY_FIELDS = ("user_id", "app_id", "agent_id", "run_id")


def check_filters(f) -> None:
    if not isinstance(f, dict) or not f:
        raise FilterError("each filter must be a non-empty object")
    for key, value in f.items():
        if key in ("AND", "OR"):
            if not isinstance(value, list) or not value:
                raise FilterError(f"{key} must be a non-empty list")
            for v in value:
                check_filters(v)
        elif key == "NOT":
            if not isinstance(value, list):  # the shape in the docs; the platform 400s on it
                raise FilterError("NOT must be a list of filters")
            for v in value:
                check_filters(v)
        elif key in ENTITY_FIELDS:
            if not isinstance(value, (str, dict)):
                raise FilterError(f"{key} must be a string or an operator object")
        elif key == "metadata":
            if not isinstance(value, dict):
                raise FilterError("metadata filter must be an object")
        elif key == "categories":
            if not isinstance(value, dict) or not set(value) <= {"in", "contains"}:
                raise FilterError("categories filter takes 'in' or 'contains'")
        else:
            raise FilterError(f"unsupported filter field '{key}'")


def _match_value(actual, want) -> bool:
    if isinstance(want, dict):
        if "in" in want:
            return actual in (want["in"] or [])
        if "ne" in want:
            return actual != want["ne"]
        return False
    if want == "*":
        return actual is not None
    return actual == want


def matches(f: dict, r: dict) -> bool:
    for key, value in f.items():
        if key == "AND":
            ok = all(matches(v, r) for v in value)
        elif key == "OR":
            ok = any(matches(v, r) for v in value)
        elif key == "NOT":
            ok = not any(matches(v, r) for v in value)
        elif key == "metadata":
            ok = all(r["metadata"].get(k) == v for k, v in value.items())
        elif key == "categories":
            cats = r["categories"] or []
            wanted = value.get("in") or ([value["contains"]] if "contains" in value else [])
            ok = any(c in cats for c in wanted)
        else:
            ok = _match_value(r.get(key), value)
        if not ok:
            return False
    return True

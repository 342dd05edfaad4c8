"""The audit's running totals, in bounded memory: per-shape state lives in a temporary SQLite file.

A million memories may hold a million distinct shapes, so nothing per shape or per memory is
kept in Python: `add` folds each worker's batch into two tables (SQLite's page cache is the only
memory they take), and the small totals (markers, drop rules, types) into counters. `clusters`
then groups shapes into near-duplicate clusters with SQL and a union-find over the LSH
candidates only, and `attribution` splits the corpus by policy and day in one grouped query.
"""

from __future__ import annotations

import os
import sqlite3
import tempfile
from collections import Counter
from dataclasses import dataclass, field

from gate.audit.records import UNKNOWN_DAY
from gate.audit.shape import BANDS, similar, token_set

_SCHEMA = f"""
CREATE TABLE shapes (
    key INTEGER PRIMARY KEY, shape TEXT NOT NULL, n INTEGER NOT NULL,
    first_text TEXT, first_at TEXT, last_text TEXT, last_at TEXT, markers INTEGER, drop_rule TEXT,
    {", ".join(f"b{i} INTEGER" for i in range(BANDS))}
);
CREATE TABLE cells (key INTEGER NOT NULL, policy TEXT NOT NULL, day TEXT NOT NULL,
                    flags INTEGER NOT NULL, n INTEGER NOT NULL);
"""
_UPSERT = (f"INSERT INTO shapes VALUES (?,?,?,?,?,?,?,?,?,{','.join('?' * BANDS)}) "
           "ON CONFLICT(key) DO UPDATE SET n = n + excluded.n, last_text = excluded.last_text, "
           "last_at = excluded.last_at")
MAX_BUCKET_COMPARISONS = 4  # representatives a shape is compared with inside one LSH bucket
# A band shared by more shapes than this is made of words common to a whole family of texts
# (one template's words), not of one text's: similar shapes also meet in their other bands,
# and verifying every member of such a bucket would cost more than the rest of the audit.
MAX_BUCKET = 500


@dataclass
class Cluster:
    id: int
    size: int  # memories
    shapes: list = field(default_factory=list)  # (n, key) of its member shapes, largest first


class Tally:
    def __init__(self, workdir: str | None = None):
        self._dir = tempfile.TemporaryDirectory(prefix="gate-audit-", dir=workdir)
        self.db = sqlite3.connect(os.path.join(self._dir.name, "tally.sqlite"), isolation_level=None)
        for pragma in ("journal_mode=OFF", "synchronous=OFF", "temp_store=FILE", "cache_size=-65536"):
            self.db.execute(f"PRAGMA {pragma}")
        self.db.executescript(_SCHEMA)
        self.memories = 0
        self.marker_hits: Counter = Counter()  # marker bits -> memories
        self.drop_hits: Counter = Counter()
        self.types: Counter = Counter()
        self.categories: Counter = Counter()

    def close(self) -> None:
        self.db.close()
        self._dir.cleanup()

    def add(self, batch) -> None:
        """Fold one gate.audit.scan.BatchResult in."""
        self.memories += batch.memories
        self.marker_hits.update(batch.marker_hits)
        self.drop_hits.update(batch.drop_hits)
        self.types.update(batch.types)
        self.categories.update(batch.categories)
        rows = []
        for key, (form, bands, n, first, first_at, last, last_at, markers, drop) in batch.shapes.items():
            rows.append((key, form, n, first, first_at, last, last_at, markers, drop,
                         *(bands or (None,) * BANDS)))
        self.db.execute("BEGIN")
        self.db.executemany(_UPSERT, rows)
        self.db.executemany("INSERT INTO cells VALUES (?,?,?,?,?)",
                            [(*cell, n) for cell, n in batch.cells.items()])
        self.db.execute("COMMIT")

    # -- clustering ------------------------------------------------------------------------

    def clusters(self, similarity: float) -> list[Cluster]:
        """Every near-duplicate cluster (two memories or more), largest first.

        Memories of one shape are one cluster; shapes whose token sets are at least `similarity`
        alike (Jaccard), found through a shared LSH band and then verified, are merged."""
        parent: dict = {}

        def find(x):
            root = x
            while parent.get(root, root) != root:
                root = parent[root]
            while parent.get(x, x) != root:  # path compression
                parent[x], x = root, parent[x]
            return root

        if similarity <= 1.0:
            for band in range(BANDS):
                col = f"b{band}"
                rows = self.db.execute(
                    f"SELECT {col}, key, shape FROM shapes WHERE {col} IN "
                    f"(SELECT {col} FROM shapes WHERE {col} IS NOT NULL GROUP BY {col} "
                    f"HAVING COUNT(*) BETWEEN 2 AND {MAX_BUCKET}) ORDER BY {col}, n DESC, key")
                bucket, reps = None, []
                for value, key, form in rows:
                    if value != bucket:
                        bucket, reps = value, []
                    tokens = token_set(form)
                    for rep_key, rep_tokens in reps:
                        if similar(tokens, rep_tokens, similarity):
                            a, b = find(key), find(rep_key)
                            if a != b:
                                parent[a] = b
                            break
                    else:
                        if len(reps) < MAX_BUCKET_COMPARISONS:
                            reps.append((key, tokens))
        involved = set(parent) | set(parent.values())
        groups: dict = {}
        for chunk in _chunks(list(involved), 500):
            marks = ",".join("?" * len(chunk))
            for key, n in self.db.execute(f"SELECT key, n FROM shapes WHERE key IN ({marks})", chunk):
                groups.setdefault(find(key), []).append((n, key))
        for key, n in self.db.execute("SELECT key, n FROM shapes WHERE n > 1"):
            if key not in involved:
                groups[key] = [(n, key)]
        out = []
        for members in groups.values():
            size = sum(n for n, _ in members)
            if size > 1:
                members.sort(key=lambda m: (-m[0], m[1]))
                out.append(Cluster(id=0, size=size, shapes=members))
        out.sort(key=lambda c: (-c.size, c.shapes[0][1]))
        for i, cluster in enumerate(out, 1):
            cluster.id = i
        return out

    def mark_clusters(self, clusters: list[Cluster]) -> None:
        """Remember which cluster each shape belongs to, for the attribution queries."""
        self.db.execute("CREATE TEMP TABLE member (key INTEGER PRIMARY KEY, cluster INTEGER NOT NULL)")
        self.db.execute("BEGIN")
        self.db.executemany("INSERT INTO member VALUES (?,?)",
                            ((key, c.id) for c in clusters for _, key in c.shapes))
        self.db.execute("COMMIT")

    # -- attribution -----------------------------------------------------------------------

    def attribution(self):
        """(policy, day, noise flags, in a near-duplicate cluster, memories) rows."""
        return self.db.execute(
            "SELECT c.policy, c.day, c.flags, m.cluster IS NOT NULL, SUM(c.n) "
            "FROM cells c LEFT JOIN member m ON m.key = c.key GROUP BY 1, 2, 3, 4")

    def cluster_breakdown(self, cluster_ids: list[int]):
        """(cluster, policy, day, flags, memories) rows for the given clusters."""
        if not cluster_ids:
            return []
        marks = ",".join("?" * len(cluster_ids))
        return self.db.execute(
            f"SELECT m.cluster, c.policy, c.day, c.flags, SUM(c.n) FROM cells c JOIN member m ON m.key = c.key "
            f"WHERE m.cluster IN ({marks}) GROUP BY 1, 2, 3, 4", cluster_ids).fetchall()

    def shape_rows(self, keys: list[int]) -> dict:
        """key -> {shape, n, first_text, first_at, last_text, last_at, markers, drop_rule}."""
        out = {}
        for chunk in _chunks(keys, 500):
            marks = ",".join("?" * len(chunk))
            for row in self.db.execute(
                    "SELECT key, shape, n, first_text, first_at, last_text, last_at, markers, drop_rule "
                    f"FROM shapes WHERE key IN ({marks})", chunk):
                out[row[0]] = dict(zip(("key", "shape", "n", "first_text", "first_at", "last_text", "last_at",
                                        "markers", "drop_rule"), row))
        return out

    def policy_days(self) -> dict:
        """policy -> (first day, last day) of its dated memories."""
        return {policy: (first, last) for policy, first, last in self.db.execute(
            "SELECT policy, MIN(day), MAX(day) FROM cells WHERE day <> ? GROUP BY policy", (UNKNOWN_DAY,))}

    def distinct_shapes(self) -> int:
        return self.db.execute("SELECT COUNT(*) FROM shapes").fetchone()[0]


def _chunks(items: list, size: int):
    for i in range(0, len(items), size):
        yield items[i:i + size]

"""The audit's running totals, in bounded memory: per-shape state lives in temporary SQLite files.

A million memories may hold a million distinct shapes, so nothing per shape or per memory is
kept in Python: each process folds its parts into a file of its own (gate.audit.store), the
main process keeps the small totals (markers, drop rules, types) of each part and then merges
the files into one. `clusters` groups shapes into near-duplicate clusters with SQL and a
union-find over the LSH candidates only, each band of candidates read by a worker when there is
a pool, and `attribution` splits the corpus by policy and day in one grouped query.
"""

from __future__ import annotations

import os
import sqlite3
import tempfile
from collections import Counter
from dataclasses import dataclass, field

from gate.audit import store
from gate.audit.records import UNKNOWN_DAY
from gate.audit.shape import BANDS, similar, token_set

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
        self.dir = self._dir.name  # where each process writes its tally file
        self.path = None  # the merged file, once `merge` has run
        self.db = None
        self._files: dict = {}  # the processes' tally files, in the order first seen
        self.memories = 0
        self.marker_hits: Counter = Counter()  # marker bits -> memories
        self.drop_hits: Counter = Counter()
        self.types: Counter = Counter()
        self.categories: Counter = Counter()

    def close(self) -> None:
        if self.db is not None:
            self.db.close()
        self._dir.cleanup()

    def add(self, counts) -> None:
        """Take in one part's counters (a gate.audit.scan.PartCounts); its rows are in its file."""
        self.memories += counts.memories
        self.marker_hits.update(counts.marker_hits)
        self.drop_hits.update(counts.drop_hits)
        self.types.update(counts.types)
        self.categories.update(counts.categories)
        self._files.setdefault(counts.path, None)

    def merge(self) -> None:
        """Merge every process's file into the first (its rows are the bulk already), the others
        then deleted; with no part at all, an empty file."""
        files = [path for path in self._files if path]
        self.path = files[0] if files else os.path.join(self.dir, "tally.sqlite")
        self.db = store.connect(self.path)
        for path in files[1:]:
            store.merge_file(self.db, path)
            os.remove(path)

    # -- clustering ------------------------------------------------------------------------

    def clusters(self, similarity: float, pool=None) -> list[Cluster]:
        """Every near-duplicate cluster (two memories or more), largest first.

        Memories of one shape are one cluster; shapes whose token sets are at least `similarity`
        alike (Jaccard), found through a shared LSH band and then verified, are merged. Each
        band's similar pairs do not depend on the others', so `pool` (an executor of worker
        processes) may find them side by side; the clusters are the same."""
        parent: dict = {}

        def find(x):
            root = x
            while parent.get(root, root) != root:
                root = parent[root]
            while parent.get(x, x) != root:  # path compression
                parent[x], x = root, parent[x]
            return root

        if similarity <= 1.0:
            jobs = [(self.path, band, similarity) for band in range(BANDS)]
            for pairs in (pool.map(similar_pairs, jobs) if pool is not None else map(similar_pairs, jobs)):
                for key, other in pairs:
                    a, b = find(key), find(other)
                    if a != b:
                        parent[a] = b
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
                    "SELECT key, shape, n, first_text, first_at, COALESCE(last_text, first_text), "
                    "COALESCE(last_at, first_at), markers, drop_rule "
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


def similar_pairs(job: tuple) -> list:
    """(shape, similar shape) pairs found in one LSH band of the tally file: `job` is
    (path, band, similarity). Inside a bucket, each shape is compared with the bucket's first
    few dissimilar shapes (its largest), and paired with the first one it is similar to."""
    path, band, similarity = job
    col = f"b{band}"
    db = sqlite3.connect(path)
    try:
        db.execute(f"PRAGMA cache_size=-{store.CACHE_MB * 1024}")
        rows = db.execute(
            f"SELECT {col}, key, shape FROM shapes WHERE {col} IN "
            f"(SELECT {col} FROM shapes WHERE {col} IS NOT NULL GROUP BY {col} "
            f"HAVING COUNT(*) BETWEEN 2 AND {MAX_BUCKET}) ORDER BY {col}, n DESC, key")
        pairs, bucket, reps = [], None, []
        for value, key, form in rows:
            if value != bucket:
                bucket, reps = value, []
            tokens = token_set(form)
            for rep_key, rep_tokens in reps:
                if similar(tokens, rep_tokens, similarity):
                    pairs.append((key, rep_key))
                    break
            else:
                if len(reps) < MAX_BUCKET_COMPARISONS:
                    reps.append((key, tokens))
        return pairs
    finally:
        db.close()


def _chunks(items: list, size: int):
    for i in range(0, len(items), size):
        yield items[i:i + size]

"""One batch of memories in, what the tally needs out: the per-memory work, run in worker processes.

A batch is a list of `(place, item)` from gate.audit.sources. For each memory: read it, take its
shape, shape key and LSH signature, its noise-marker bits and its drop verdict. What leaves the
worker is already folded by shape and by (shape, policy, day, noise), so a store full of one
heartbeat sends back a handful of rows, not one per memory.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from gate.audit.records import Memory, RecordError, read_memory
from gate.audit.shape import shape, shape_key, signature

MARKER = 1  # noise flag bits of a memory
DROPPED = 2
SAMPLE_CHARS = 400  # of a sample text kept for the report


class BadRecord(Exception):
    """A memory the audit cannot read; the message is `place: what is wrong`."""


@dataclass
class BatchResult:
    memories: int = 0
    # shape key -> [shape, bands, n, first text, first created_at, last text, last created_at, markers, drop]
    shapes: dict = field(default_factory=dict)
    # (shape key, policy, day, noise flags) -> count
    cells: dict = field(default_factory=dict)
    marker_hits: dict = field(default_factory=dict)  # marker bits -> count
    drop_hits: dict = field(default_factory=dict)  # drop rule -> count
    types: dict = field(default_factory=dict)  # (type, categorized, type in categories) -> count
    categories: dict = field(default_factory=dict)  # platform category -> count


_judge = None  # set in each worker (or in the parent for an inline run) by `install`
_signatures: dict = {}  # shape key -> LSH signature, across batches (heartbeat shapes recur)
_SIGNATURE_CACHE = 100_000


def install(judge) -> None:
    global _judge
    _judge = judge


def scan_batch(batch: list) -> BatchResult:
    out = BatchResult()
    judge = _judge
    for place, item in batch:
        for where, obj in _objects(place, item):
            try:
                memory = read_memory(obj)
            except RecordError as exc:
                raise BadRecord(f"{where}: {exc}") from None
            _tally(out, memory, judge)
    return out


def _objects(place: str, item):
    if isinstance(item, str):  # a JSON Lines line, parsed here in the worker
        try:
            item = json.loads(item)
        except ValueError as exc:
            raise BadRecord(f"{place}: not JSON ({exc})") from None
        if isinstance(item, dict) and "memory" not in item and isinstance(item.get("results"), list):
            for i, inner in enumerate(item["results"]):  # a get_all page on one line
                yield f"{place}: results[{i}]", inner
            return
    yield place, item


def _tally(out: BatchResult, m: Memory, judge) -> None:
    out.memories += 1
    text = m.text
    form = shape(text)
    key = shape_key(form)
    markers = judge.markers(text) if judge else 0
    drop = judge.drop_rule(text) if judge else None
    flags = (MARKER if markers else 0) | (DROPPED if drop else 0)

    entry = out.shapes.get(key)
    if entry is None:
        sample = text[:SAMPLE_CHARS]
        bands = _signatures.get(key, False)
        if bands is False:
            if len(_signatures) >= _SIGNATURE_CACHE:
                _signatures.clear()
            bands = _signatures[key] = signature(form)
        out.shapes[key] = [form, bands, 1, sample, m.created_at, sample, m.created_at, markers, drop]
    else:
        entry[2] += 1
        entry[5] = text[:SAMPLE_CHARS]
        entry[6] = m.created_at
    cell = (key, m.policy, m.day, flags)
    out.cells[cell] = out.cells.get(cell, 0) + 1
    if markers:
        out.marker_hits[markers] = out.marker_hits.get(markers, 0) + 1
    if drop:
        out.drop_hits[drop] = out.drop_hits.get(drop, 0) + 1
    type_key = (m.type, bool(m.categories), m.type in m.categories if m.type else False)
    out.types[type_key] = out.types.get(type_key, 0) + 1
    for category in m.categories:
        out.categories[category] = out.categories.get(category, 0) + 1

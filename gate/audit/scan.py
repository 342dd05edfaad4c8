"""One part of a store in, folded into this process's own tally file; its small counters out.

Runs in each worker process (and in the main process for a small store or --jobs 1). A part
is a gate.audit.sources.FileChunk, whose lines are read, decoded and parsed here, or a Batch
of memory objects. For each memory: read it, take its shape, shape key and LSH signature, its
noise-marker bits and its drop verdict. The part is folded by shape and by (shape, policy, day,
noise) in memory, so a store full of one heartbeat writes a handful of rows, then added to
this process's SQLite file (gate.audit.store). What goes back to the main process is only the
part's counters (memories, markers, drop rules, types, categories) and the file's path.

Each memory's position in the store is (part index << 32) + its rank in the part: parts finish
in any order, and the store keeps the samples of the lowest and highest positions.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field

from gate.audit import store
from gate.audit.records import RecordError, read_memory
from gate.audit.shape import BANDS, shape, shape_key, signature
from gate.audit.sources import FileChunk, line_number, read_chunk

MARKER = 1  # noise flag bits of a memory
DROPPED = 2
SAMPLE_CHARS = 400  # of a sample text kept for the report
_RANK_BITS = 32  # a part holds fewer memories than this many bits count
_NO_BANDS = (None,) * BANDS


class BadRecord(Exception):
    """A memory the audit cannot read; the message is `place: what is wrong`."""


@dataclass
class PartCounts:
    """What the main process keeps of a part: the counters, and where its rows went."""
    memories: int = 0
    marker_hits: dict = field(default_factory=dict)  # marker bits -> count
    drop_hits: dict = field(default_factory=dict)  # drop rule -> count
    types: dict = field(default_factory=dict)  # (type, categorized, type in categories) -> count
    categories: dict = field(default_factory=dict)  # platform category -> count
    path: str = ""  # the tally file the part's rows were added to


class _Fold:
    """One part's rows before they are written."""

    __slots__ = ("counts", "shapes", "cells")

    def __init__(self):
        self.counts = PartCounts()
        # shape key -> [shape, bands, n, first text, first created_at, first position,
        #               last text, last created_at, last position, markers, drop rule]
        self.shapes: dict = {}
        self.cells: dict = {}  # (shape key, policy, day, noise flags) -> count


_judge = None  # set in the main process by `install`, before the workers fork
_workdir = None
_store = None  # (pid, connection): this process's tally file, opened on its first part
_signatures: dict = {}  # shape key -> LSH signature, across parts (heartbeat shapes recur)
_SIGNATURE_CACHE = 100_000


def install(judge, workdir: str) -> None:
    """What every part is judged with, and the folder of the per-process tally files."""
    global _judge, _workdir, _store
    _judge, _workdir, _store = judge, workdir, None


def finish() -> None:
    """Close this process's tally file, so that the main process can merge it (a worker's
    closes with the worker)."""
    global _store
    if _store is not None and _store[0] == os.getpid():
        _store[2].close()
    _store = None


def scan_part(part) -> PartCounts:
    fold = _Fold()
    _fold_in(fold, _chunk_memories(part) if isinstance(part, FileChunk) else _batch_memories(part), _judge)
    path, db = _this_process_store()
    store.add_part(db, _shape_rows(fold.shapes), [(*cell, n) for cell, n in fold.cells.items()])
    fold.counts.path = path
    return fold.counts


def _chunk_memories(chunk: FileChunk):
    """(position, Memory) for each memory in a chunk's lines."""
    position = chunk.index << _RANK_BITS
    for number, line in read_chunk(chunk):
        try:
            obj = json.loads(line)
        except (ValueError, RecursionError):
            raise BadRecord(f"{chunk.name}:{line_number(chunk, number)}: not JSON ({_json_error(line)})") from None
        if not isinstance(obj, dict) or "memory" in obj or not isinstance(obj.get("results"), list):
            try:
                yield position, read_memory(obj)
            except RecordError as exc:
                raise BadRecord(f"{chunk.name}:{line_number(chunk, number)}: {exc}") from None
            position += 1
            continue
        for i, item in enumerate(obj["results"]):  # a get_all page on one line
            try:
                yield position, read_memory(item)
            except RecordError as exc:
                raise BadRecord(f"{chunk.name}:{line_number(chunk, number)}: results[{i}]: {exc}") from None
            position += 1


def _batch_memories(batch):
    base = batch.index << _RANK_BITS
    for rank, (place, obj) in enumerate(batch.items):
        try:
            yield base + rank, read_memory(obj)
        except RecordError as exc:
            raise BadRecord(f"{place}: {exc}") from None


def _json_error(line: str) -> str:
    """json's message for a line, as it reads with its line break (so positions are the file's)."""
    try:
        json.loads(line + "\n")
    except (ValueError, RecursionError) as exc:
        return str(exc)
    return "unreadable"


def _this_process_store():
    global _store
    pid = os.getpid()
    if _store is None or _store[0] != pid:  # a forked worker does not write its parent's file
        path = os.path.join(_workdir, f"part-{pid}.sqlite")
        _store = (pid, path, store.connect(path))
    return _store[1], _store[2]


def _shape_rows(shapes: dict) -> list:
    """Rows in gate.audit.store.SHAPE_COLUMNS order; a shape of one memory has no last sample apart."""
    return [(key, form, n, first, first_at, first_pos, last if n > 1 else None, last_at if n > 1 else None, last_pos,
             markers, drop, *(bands or _NO_BANDS))
            for key, (form, bands, n, first, first_at, first_pos, last, last_at, last_pos, markers, drop)
            in shapes.items()]


def _fold_in(fold: _Fold, memories, judge) -> None:
    """Each (position, Memory) judged and folded in: by shape, and by (shape, policy, day, noise)."""
    counts, shapes, cells = fold.counts, fold.shapes, fold.cells
    marker_hits, drop_hits, kinds = counts.marker_hits, counts.drop_hits, {}
    markers_of = judge.markers if judge else None
    drop_of = judge.drop_rule if judge else None
    n = 0
    for position, m in memories:
        n += 1
        text = m.text
        form = shape(text)
        key = shape_key(form)
        markers = markers_of(text) if markers_of else 0
        drop = drop_of(text) if drop_of else None
        entry = shapes.get(key)
        if entry is None:
            sample = text[:SAMPLE_CHARS]
            bands = _signatures.get(key, False)
            if bands is False:
                if len(_signatures) >= _SIGNATURE_CACHE:
                    _signatures.clear()
                bands = _signatures[key] = signature(form)
            shapes[key] = [form, bands, 1, sample, m.created_at, position, sample, m.created_at, position,
                           markers, drop]
        else:
            entry[2] += 1
            entry[6] = text[:SAMPLE_CHARS]
            entry[7] = m.created_at
            entry[8] = position
        cell = (key, m.policy, m.day, (MARKER if markers else 0) | (DROPPED if drop else 0))
        cells[cell] = cells.get(cell, 0) + 1
        if markers:
            marker_hits[markers] = marker_hits.get(markers, 0) + 1
        if drop:
            drop_hits[drop] = drop_hits.get(drop, 0) + 1
        kind = (m.type, m.categories)
        kinds[kind] = kinds.get(kind, 0) + 1
    counts.memories += n
    types, categories = counts.types, counts.categories
    for (mtype, names), k in kinds.items():
        type_key = (mtype, bool(names), mtype in names if mtype else False)
        types[type_key] = types.get(type_key, 0) + k
        for name in names:
            categories[name] = categories.get(name, 0) + k

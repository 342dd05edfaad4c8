"""Labeled windows from YAML: load, validate, and summarize coverage."""

from __future__ import annotations

import gc
import os
from collections import Counter
from contextlib import contextmanager
from dataclasses import dataclass
from functools import partial

from gate.language.errors import GateError, Problem
from gate.language.model import DURABLE_TYPES
from gate.language.yamlsource import read_yaml

LABELS = ("drop", "exclude", "extract")


@dataclass(frozen=True)
class Fixture:
    id: str
    window: list
    label: str
    expect_type: str | None
    note: str
    tags: tuple = ()
    todo: str | None = None
    file: str = ""
    line: int | None = None


def fixture_files(paths) -> list[str]:
    """Files and folders -> the YAML files in them, sorted, folders recursively."""
    files = []
    for path in paths:
        if os.path.isdir(path):
            for root, _, names in os.walk(path):
                files += [os.path.join(root, n) for n in names if n.endswith((".yaml", ".yml"))]
        elif os.path.exists(path):
            files.append(path)
        else:
            raise GateError(Problem(path, "no such fixture file or folder"))
    return sorted(files)


def load_fixtures(paths, require_all_types: bool = False, use_cache: bool = True) -> list[Fixture]:
    """Every fixture in `paths`; all problems in all files raised together.
    `use_cache`: read valid files parsed before from the cache (gate/evaluation/fixturecache.py)."""
    with _collector_paused():
        return _load_fixtures(paths, require_all_types, use_cache)


@contextmanager
def _collector_paused():
    """Loading builds millions of small objects and frees none: the cycle collector
    would walk them again and again (half the time of a 100,000-fixture load)."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def _load_fixtures(paths, require_all_types: bool, use_cache: bool) -> list[Fixture]:
    from gate.language.schema import validate

    fixtures, problems, first_seen = [], [], {}
    files = fixture_files(paths)
    if not files:
        raise GateError(Problem(", ".join(paths) or ".", "no fixture files found"))
    fast_reads = _read_all_plainly_valid(files, use_cache)  # most files: no located parse, no jsonschema
    for file in files:
        fast = fast_reads[file]
        if fast is not None:
            data, lines = fast
            if any(entry["id"] in first_seen for entry in data):
                fast = None  # a duplicate id: the located path words the problem
        if fast is None:
            try:
                located = read_yaml(file)
            except GateError as exc:
                problems += exc.problems
                continue
            if located.data is None:
                continue
            found = validate(located, "fixtures.schema.json", describe=lambda p, d=located.data: _describe(d, p))
            if found:
                problems += found
                continue
            data, lines = located.data, [located.where((index,))[0] for index in range(len(located.data))]
        for index, entry in enumerate(data):
            line = lines[index]
            if entry["id"] in first_seen:
                problems.append(located.problem((index, "id"), f"fixture '{entry['id']}': duplicate id "
                                                                f"(first in {first_seen[entry['id']]})"))
                continue
            first_seen[entry["id"]] = f"{file}:{line}"
            fixtures.append(Fixture(entry["id"], entry["window"], entry["label"], entry["expect_type"],
                                    entry["note"], tuple(entry.get("tags", ())), entry.get("todo"), file, line))
    if problems:
        raise GateError(problems)
    # A set that is all `todo` (candidates exported by `gate replay`, waiting for labels) asks
    # nothing of coverage yet; any labeled set must cover every durable type.
    if require_all_types and not all(f.todo for f in fixtures):
        covered = {f.expect_type for f in fixtures if f.label == "extract"}
        missing = [t for t in DURABLE_TYPES if t not in covered]
        if missing:
            raise GateError(Problem(files[0], f"no extract fixture for type(s): {', '.join(missing)}"))
    return fixtures


# -- the fast path -------------------------------------------------------------------------
#
# A 100,000-fixture corpus spends most of its loading time recording a line for
# every YAML node and in jsonschema. A file whose entries plainly satisfy the
# schema needs neither: it is parsed once (libyaml composes, lines of entries
# only) and checked by the code below. Anything else, or any doubt, takes the
# located path, whose problems name their line. The check mirrors
# schemas/fixtures.schema.json; it is used only while that schema is the one it
# was written for (the hash of what it validates: descriptions and examples do
# not count), so a schema change can never be half-checked.

_SCHEMA_SHA = "a66d12d8ca2a4458e868a123cb06a41c4139c21d98e329452aa93fe6d4810407"  # of _validation_only(schema)
_ENTRY_KEYS = frozenset(("id", "window", "label", "expect_type", "note", "tags", "todo"))
_TURN_KEYS = frozenset(("role", "content", "sidechain"))
_BLOCK_TYPES = frozenset(("text", "tool_use", "tool_result", "thinking", "image"))
_KINDS = frozenset(("preference", "decision", "convention", "insight", "runbook", "session_state"))
_ID = "^[a-z0-9][a-z0-9._-]*$"
_TAG = "^[a-z0-9_-]+$"
_fast_schema_ok = None


_PARALLEL_BYTES = 8_000_000  # below this, forking costs more than parsing in one process


def _read_all_plainly_valid(files, use_cache: bool = False) -> dict:
    """_read_plainly_valid for every file, in worker processes when there is a lot to parse.
    Files parsed before are read from the cache here: sending them back from workers costs more."""
    found = {}
    if use_cache and _schema_is_known():
        from gate.evaluation import fixturecache

        for file in files:
            try:
                with open(file, "rb") as handle:
                    hit = fixturecache.get(handle.read())
            except OSError:
                continue
            if hit is not None:
                found[file] = hit
        files = [file for file in files if file not in found]
    found.update(_parse_all(files, keep=use_cache))
    return found


def _parse_all(files, keep: bool) -> dict:
    try:
        total = sum(os.path.getsize(f) for f in files)
    except OSError:
        total = 0
    jobs = min(len(files), len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1)
    if total >= _PARALLEL_BYTES and jobs > 1:
        import multiprocessing

        if "fork" in multiprocessing.get_all_start_methods():
            _schema_is_known()  # once, before forking
            with multiprocessing.get_context("fork").Pool(jobs) as pool:
                return dict(zip(files, pool.map(partial(_read_plainly_valid, keep=keep), files, chunksize=1)))
    return {file: _read_plainly_valid(file, keep) for file in files}


def _schema_is_known() -> bool:
    global _fast_schema_ok
    if _fast_schema_ok is None:
        import hashlib
        import json

        from gate.language.schema import load_schema

        schema = json.dumps(_validation_only(load_schema("fixtures.schema.json")), sort_keys=True).encode()
        _fast_schema_ok = hashlib.sha256(schema).hexdigest() == _SCHEMA_SHA
    return _fast_schema_ok


_ANNOTATIONS = frozenset(("description", "examples", "title", "$comment"))
_NAME_MAPS = frozenset(("properties", "$defs", "patternProperties"))  # their keys are names, not keywords


def _validation_only(node, names: bool = False):
    """The schema without what only an editor reads (descriptions, examples): those
    change no verdict, so editing them must not switch the fast path off."""
    if isinstance(node, dict):
        return {k: _validation_only(v, k in _NAME_MAPS and not names) for k, v in node.items()
                if names or k not in _ANNOTATIONS}
    if isinstance(node, list):
        return [_validation_only(v) for v in node]
    return node


def _read_plainly_valid(file: str, keep: bool = False):
    """(entries, their lines) when the file is a YAML list of plainly valid fixtures; else None.
    `keep`: store what was parsed in the cache, keyed by the bytes it was parsed from."""
    if not _schema_is_known():
        return None
    try:
        with open(file, "rb") as handle:
            raw = handle.read()
    except OSError:
        return None  # the located path reports it
    found = _parse_plainly_valid(raw)
    if keep and found is not None:
        from gate.evaluation import fixturecache

        fixturecache.put(raw, *found)
    return found


def _parse_plainly_valid(raw: bytes):
    import yaml

    try:
        text = raw.decode("utf-8")
        loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)(text)
        try:
            root = loader.get_single_node()
            if not isinstance(root, yaml.SequenceNode) or not root.value:
                return None
            data = loader.construct_document(root)
        finally:
            loader.dispose()
        if not _same_shape(root, data) or not all(_plainly_valid(entry) for entry in data):
            return None
        return data, [node.start_mark.line + 1 for node in root.value]
    except Exception:  # unreadable, not YAML, odd YAML: the located path reports it
        return None


def _same_shape(node, value) -> bool:
    """No mapping lost a duplicate key to the constructor (the located parser rejects those)."""
    import yaml

    if isinstance(node, yaml.MappingNode):
        if not isinstance(value, dict) or len(value) != len(node.value):
            return False
        if not all(isinstance(k, yaml.ScalarNode) for k, _ in node.value):
            return False
        return all(_same_shape(v, item) for (_, v), item in zip(node.value, value.values()))
    if isinstance(node, yaml.SequenceNode):
        return isinstance(value, list) and len(value) == len(node.value) and \
            all(_same_shape(n, item) for n, item in zip(node.value, value))
    return True


def _plainly_valid(entry) -> bool:
    import re

    if not isinstance(entry, dict) or not _ENTRY_KEYS.issuperset(entry):
        return False
    id_, window, label, kind, note = (entry.get(k, _ENTRY_KEYS) for k in ("id", "window", "label", "expect_type",
                                                                          "note"))
    if not (isinstance(id_, str) and re.search(_ID, id_) and isinstance(note, str) and len(note) >= 10):
        return False
    if label not in ("drop", "exclude", "extract") or not isinstance(label, str):
        return False
    if not ((label == "extract" and isinstance(kind, str) and kind in _KINDS) or (label != "extract" and kind is None)):
        return False
    if "tags" in entry:
        tags = entry["tags"]
        if not (isinstance(tags, list) and all(isinstance(t, str) and re.search(_TAG, t) for t in tags)
                and len(set(tags)) == len(tags)):
            return False
    if "todo" in entry and not (isinstance(entry["todo"], str) and len(entry["todo"]) >= 3):
        return False
    if not isinstance(window, list) or not window:
        return False
    for turn in window:
        if not isinstance(turn, dict) or not _TURN_KEYS.issuperset(turn) or not isinstance(turn.get("role"), str):
            return False
        if "sidechain" in turn and not isinstance(turn["sidechain"], bool):
            return False
        content = turn.get("content", _TURN_KEYS)
        if isinstance(content, list):
            for block in content:
                if not (isinstance(block, dict) and isinstance(block.get("type"), str) and block["type"] in _BLOCK_TYPES
                        and all(k not in block or isinstance(block[k], str) for k in ("text", "name"))):
                    return False
        elif not isinstance(content, str):
            return False
    return True


def _describe(data, path) -> str | None:
    if path and isinstance(path[0], int) and isinstance(data, list) and path[0] < len(data):
        entry = data[path[0]]
        if isinstance(entry, dict) and isinstance(entry.get("id"), str):
            return f"fixture '{entry['id']}'"
        return f"fixture #{path[0] + 1}"
    return None


def coverage(fixtures) -> dict:
    """Counts per label, per expected type, per tag, and known gaps."""
    return {
        "total": len(fixtures),
        "labels": dict(Counter(f.label for f in fixtures)),
        "types": dict(Counter(f.expect_type for f in fixtures if f.label == "extract")),
        "tags": dict(sorted(Counter(t for f in fixtures for t in f.tags).items())),
        "todo": sum(1 for f in fixtures if f.todo),
    }

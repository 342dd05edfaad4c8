"""Labeled windows from YAML: load, validate, and summarize coverage."""

from __future__ import annotations

import os
from collections import Counter
from dataclasses import dataclass

from gate.errors import GateError, Problem
from gate.model import DURABLE_TYPES
from gate.yamlsource import read_yaml

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


def load_fixtures(paths, require_all_types: bool = False) -> list[Fixture]:
    """Every fixture in `paths`; all problems in all files raised together."""
    from gate.schema import validate

    fixtures, problems, first_seen = [], [], {}
    files = fixture_files(paths)
    if not files:
        raise GateError(Problem(", ".join(paths) or ".", "no fixture files found"))
    for file in files:
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
        for index, entry in enumerate(located.data):
            line, _ = located.where((index,))
            if entry["id"] in first_seen:
                problems.append(located.problem((index, "id"), f"fixture '{entry['id']}': duplicate id "
                                                                f"(first in {first_seen[entry['id']]})"))
                continue
            first_seen[entry["id"]] = f"{file}:{line}"
            fixtures.append(Fixture(entry["id"], entry["window"], entry["label"], entry["expect_type"],
                                    entry["note"], tuple(entry.get("tags", ())), entry.get("todo"), file, line))
    if problems:
        raise GateError(problems)
    if require_all_types:
        covered = {f.expect_type for f in fixtures if f.label == "extract"}
        missing = [t for t in DURABLE_TYPES if t not in covered]
        if missing:
            raise GateError(Problem(files[0], f"no extract fixture for type(s): {', '.join(missing)}"))
    return fixtures


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

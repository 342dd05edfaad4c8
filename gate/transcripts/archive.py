"""Transcript files named on a command line: files as given, folders searched for `*.jsonl`."""

from __future__ import annotations

import os

from gate.language.errors import GateError, Problem


def transcript_files(paths) -> list[str]:
    """Every transcript file under `paths`, each once, folders walked in sorted order; raises
    GateError naming a path that does not exist, or when nothing is found."""
    found, seen = [], set()
    for path in paths:
        if os.path.isdir(path):
            names = []
            for root, dirs, files in os.walk(path):
                dirs.sort()
                names += [os.path.join(root, n) for n in sorted(files) if n.endswith(".jsonl")]
        elif os.path.isfile(path):
            names = [path]
        else:
            raise GateError(Problem(path, "no such transcript file or folder"))
        for name in names:
            real = os.path.realpath(name)
            if real not in seen:
                seen.add(real)
                found.append(name)
    if not found:
        raise GateError(Problem(", ".join(paths) or ".", "no transcript files (*.jsonl) found"))
    return found

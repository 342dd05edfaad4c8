"""Grouped folds: near-duplicates and one source never straddle train and test.

A row's group starts as its source: the public source or session file its note
names ("adapted from github.com/org/repo/...", "sessions/NAME.jsonl"), else its
fixture file. Near-duplicate windows are then merged into one group wherever they
sit: the same shape (numbers, ids and hashes stripped), or nearly the same words.
Groups are dealt to folds largest first, each to the fold with the fewest rows;
the seed only orders groups of equal size, so folds are deterministic.
"""

from __future__ import annotations

import hashlib
import os
import re

from gate.engine.features import shape_of
from gate.engine.window import normalize_window

_ADAPTED = re.compile(r"adapted from ([\w.\-]+/[\w.\-]+/[\w.\-]+)")
_SESSION = re.compile(r"\bsessions/([\w.\-]+\.jsonl)\b")
_WORDS = re.compile(r"[^\W\d_]{2,}")
NEAR_DUPLICATE_JACCARD = 0.8  # share of distinct words two windows must have in common
_MIN_WORDS = 6  # below this, word overlap says little: only equal shapes merge
_MIN_SHAPE = 16  # characters a shape needs before two equal ones mean near-duplicates


def source_of(fixture) -> str:
    """The source a fixture was cut or adapted from, else its fixture file."""
    note = fixture.note or ""
    found = _SESSION.search(note)
    if found:
        return "session:" + found.group(1)
    found = _ADAPTED.search(note)
    if found:
        return "source:" + found.group(1)
    return "file:" + os.path.basename(fixture.file or "?")


def groups(fixtures) -> list[str]:
    """The group key of each fixture (a source, merged across near-duplicates)."""
    parent = list(range(len(fixtures)))

    def root(i):
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    def join(i, j):
        a, b = root(i), root(j)
        if a != b:
            parent[max(a, b)] = min(a, b)

    first_of = {}
    texts = [_text(f.window) for f in fixtures]
    for i, key in enumerate(source_of(f) for f in fixtures):
        join(i, first_of.setdefault(("source", key), i))
    for i, text in enumerate(texts):
        shape = shape_of(text)
        if len(shape) >= _MIN_SHAPE:  # an empty or tiny shape (a tool-only window) says nothing
            join(i, first_of.setdefault(("shape", shape), i))
    words = [frozenset(_WORDS.findall(t.lower())) for t in texts]
    for i in range(len(fixtures)):
        if len(words[i]) < _MIN_WORDS:
            continue
        for j in range(i + 1, len(fixtures)):
            if len(words[j]) < _MIN_WORDS or root(i) == root(j):
                continue
            small, large = sorted((len(words[i]), len(words[j])))
            if small < NEAR_DUPLICATE_JACCARD * large:
                continue  # the sets differ in size too much to be that similar
            if len(words[i] & words[j]) >= NEAR_DUPLICATE_JACCARD * len(words[i] | words[j]):
                join(i, j)
    names = {}
    out = []
    for i in range(len(fixtures)):
        r = root(i)
        names.setdefault(r, source_of(fixtures[r]))
        out.append(names[r])
    return out


def assign_folds(group_keys, k: int, seed: int) -> list[int]:
    """The fold (0..k-1) of each row; rows of one group share a fold."""
    sizes = {}
    for key in group_keys:
        sizes[key] = sizes.get(key, 0) + 1
    order = sorted(sizes, key=lambda g: (-sizes[g], _tiebreak(seed, g)))
    load = [0] * k
    fold_of = {}
    for key in order:
        target = min(range(k), key=lambda f: (load[f], f))
        fold_of[key] = target
        load[target] += sizes[key]
    return [fold_of[key] for key in group_keys]


def _tiebreak(seed: int, key: str) -> str:
    return hashlib.sha256(f"{seed}:{key}".encode()).hexdigest()


def _text(window) -> str:
    return "\n".join(t.text for t in normalize_window(window))

"""Case sets: which questions a run asks.

`fast` is the development loop: 10 questions of every category, drawn with a fixed seed (category 5
is drawn too, and reported unscored). `fast-<category>` is 10 of one category. `full` is every
question, for releases.
"""

from __future__ import annotations

import random

from gate.bench.dataset import CATEGORIES

FAST_PER_CATEGORY = 10
FAST_SEED = 20240507  # fixed: the fast set is the same questions on every machine and every run
NAMES = ("fast", "full") + tuple(f"fast-{name}" for name in CATEGORIES.values())


class CaseSetError(ValueError):
    pass


def select(questions, case_set: str) -> list:
    if case_set == "full":
        return list(questions)
    if case_set == "fast":
        wanted = sorted(CATEGORIES)
    elif case_set.startswith("fast-") and case_set[5:] in CATEGORIES.values():
        wanted = [c for c, name in CATEGORIES.items() if name == case_set[5:]]
    else:
        raise CaseSetError(f"unknown case set {case_set!r}; expected one of {', '.join(NAMES)}")
    rng = random.Random(FAST_SEED)
    chosen = []
    for category in wanted:
        pool = [q for q in questions if q.category == category]
        chosen.extend(rng.sample(pool, min(FAST_PER_CATEGORY, len(pool))))
    order = {q.key: i for i, q in enumerate(questions)}
    return sorted(chosen, key=lambda q: order[q.key])


def shortfall(questions, case_set: str) -> dict:
    """Categories a fast set wants that the dataset cannot fill: {name: how many it has}."""
    if case_set == "full":
        return {}
    names = CATEGORIES.values() if case_set == "fast" else [case_set[5:]]
    have = {name: 0 for name in names}
    for q in questions:
        if q.category_name in have:
            have[q.category_name] += 1
    return {name: n for name, n in have.items() if n < FAST_PER_CATEGORY}

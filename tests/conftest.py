"""The whole test run uses a cache directory of its own: it leaves nothing in the
developer's ~/.cache/gate, and no entry from an earlier run can decide a test.

Tests marked `heavy` run first, the newest revision's first (they run on every window, the
older revisions' on a share): handed out one at a time (`--maxschedchunk 1`), the longest
start while every core is free, and the run does not end on one core finishing a minute-long
test while the others wait."""

from __future__ import annotations

import os

import pytest


@pytest.fixture(autouse=True, scope="session")
def _private_cache_dir(tmp_path_factory):
    previous = os.environ.get("GATE_CACHE_DIR")
    os.environ["GATE_CACHE_DIR"] = str(tmp_path_factory.mktemp("gate-cache"))
    yield
    if previous is None:
        os.environ.pop("GATE_CACHE_DIR", None)
    else:
        os.environ["GATE_CACHE_DIR"] = previous


def pytest_collection_modifyitems(items):
    heavy = [item for item in items if item.get_closest_marker("heavy")]
    modules = list(dict.fromkeys(item.module.__name__ for item in heavy))
    position = {id(item): index for index, item in enumerate(items)}
    # longest first within a module (its parameters run oldest revision to newest), one module after
    # another, so each worker sets up a module's fixtures about once
    heavy.sort(key=lambda item: (modules.index(item.module.__name__), -position[id(item)]))
    chosen = {id(item) for item in heavy}
    items[:] = heavy + [item for item in items if id(item) not in chosen]

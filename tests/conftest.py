"""The whole test run uses a cache directory of its own: it leaves nothing in the
developer's ~/.cache/gate, and no entry from an earlier run can decide a test."""

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

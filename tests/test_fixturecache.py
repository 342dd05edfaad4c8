"""Fixture files parsed once are read back from the cache, and only while they are unchanged."""

from __future__ import annotations

import json
import os
import subprocess

import pytest
import yaml

from enginekit import GATE
from gate.language.errors import GateError
from gate.evaluation.fixtures import load_fixtures

ENTRIES = [
    {"id": "pref-tabs", "window": [{"role": "user", "content": "I prefer tabs, always"}], "label": "extract",
     "expect_type": "preference", "note": "a standing preference must be kept"},
    {"id": "hb-epoch", "window": [{"role": "assistant", "content": "epoch 3/10 loss 0.41"}], "label": "drop",
     "expect_type": None, "note": "a heartbeat must not be sent"},
]


@pytest.fixture
def cache(tmp_path, monkeypatch):
    folder = tmp_path / "cache"
    monkeypatch.setenv("GATE_CACHE_DIR", str(folder))
    return folder / "fixtures"


def write(path, entries) -> str:
    path.write_text(yaml.safe_dump(entries, sort_keys=False, allow_unicode=True))
    return str(path)


def entries_in(cache) -> list:
    return sorted(cache.glob("*.json")) if cache.exists() else []


def test_a_parsed_file_is_read_back_from_the_cache(tmp_path, cache):
    path = write(tmp_path / "f.yaml", ENTRIES)
    first = load_fixtures([path])
    [entry] = entries_in(cache)
    stored = json.loads(entry.read_text())
    stored["data"][0]["note"] = "read from the cache, not the file"  # shows which one the next load reads
    entry.write_text(json.dumps(stored))
    again = load_fixtures([path])
    assert again[0].note == "read from the cache, not the file"
    assert again[1:] == first[1:] and (again[0].id, again[0].line) == (first[0].id, first[0].line)
    assert load_fixtures([path], use_cache=False) == first


def test_an_edited_file_misses_the_cache(tmp_path, cache):
    path = tmp_path / "f.yaml"
    write(path, ENTRIES)
    load_fixtures([str(path)])
    edited = [dict(ENTRIES[0], note="the preference survives an edit"), ENTRIES[1]]
    write(path, edited)
    assert load_fixtures([str(path)])[0].note == "the preference survives an edit"
    assert len(entries_in(cache)) == 2


def test_a_corrupt_entry_is_only_a_miss(tmp_path, cache):
    path = write(tmp_path / "f.yaml", ENTRIES)
    first = load_fixtures([path])
    [entry] = entries_in(cache)
    entry.write_text('{"data": [1, 2')
    assert load_fixtures([path]) == first
    assert json.loads(entry.read_text())["lines"] == [f.line for f in first]  # written again, whole


def test_an_invalid_file_is_not_cached_and_still_names_its_line(tmp_path, cache):
    path = write(tmp_path / "f.yaml", [ENTRIES[0], dict(ENTRIES[1], label="maybe")])
    with pytest.raises(GateError) as raised:
        load_fixtures([path])
    assert f"{path}:" in str(raised.value.problems[0]) and "label" in str(raised.value.problems[0])
    assert entries_in(cache) == []


def test_what_json_cannot_give_back_is_not_cached(tmp_path, cache):
    block = {"type": "tool_use", "name": "Bash", "input": {"command": "date", "since": "2024-05-01"}}
    entry = dict(ENTRIES[0], window=[{"role": "assistant", "content": [block]}], label="drop", expect_type=None)
    path = tmp_path / "f.yaml"
    path.write_text(yaml.safe_dump([entry]).replace("'2024-05-01'", "2024-05-01"))  # a YAML date
    [loaded] = load_fixtures([str(path)])
    assert type(loaded.window[0]["content"][0]["input"]["since"]).__name__ == "date"
    assert entries_in(cache) == []


def test_eval_no_cache_parses_everything_and_keeps_nothing(tmp_path):
    """--no-cache: neither the fixtures nor the rules are kept; without it both are, and
    the report read from the caches is the report parsed from the files."""
    path = write(tmp_path / "f.yaml", ENTRIES)
    env = dict(os.environ, GATE_CACHE_DIR=str(tmp_path / "cache"))
    report = tmp_path / "r.json"
    argv = [GATE, "eval", "--fixtures", path, "--report", str(report)]
    assert subprocess.run(argv + ["--no-cache"], capture_output=True, env=env).returncode in (0, 1)
    assert not (tmp_path / "cache").exists()
    parsed = json.loads(report.read_text())
    for _ in range(2):  # fills both caches, then reads from them
        assert subprocess.run(argv, capture_output=True, env=env).returncode in (0, 1)
    assert len(list((tmp_path / "cache" / "fixtures").glob("*.json"))) == 1
    assert len(list((tmp_path / "cache").glob("*.pickle"))) == 1  # the compiled revision
    cached = json.loads(report.read_text())
    parsed.pop("generated_at"), cached.pop("generated_at")
    assert cached == parsed

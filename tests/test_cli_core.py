"""`gate classify` as an editor hook runs it: JSON Lines in, one decision per line out; the cache."""

import json
import os
import pickle
import subprocess
import sys
import threading

import pytest

from enginekit import GATE, assistant, drop_rule, match, revision_doc, run_gate, signal, user, write_rules
from gate.engine.cache import load_revision_cached
from gate.language.errors import GateError
from gate.language.loader import load_revision

RULES = revision_doc(
    drop_rules=[
        drop_rule("heartbeat", {"line_share": {"pattern": r"\b{{hb_terms}}\b.*{{num}}", "keywords": ["{{hb_terms}}"],
                                               "min_share": 0.6}}, scope="turn"),
        drop_rule("recent", {"recent_shape": True}),
    ],
    signals=[signal("prefer", match(r"\bi prefer\b", keywords=["prefer"]), {"preference": 4}, role="user")],
)

PREFER = [user("I prefer rebase over merge")]
NOISE = [assistant("Epoch 3/10 loss 0.41 ETA 5m")]
MIXED = [assistant("Epoch 3/10 loss 0.41 ETA 5m"), user("I prefer rebase over merge"),
         assistant("Epoch 4/10 loss 0.39 ETA 4m")]


@pytest.fixture()
def rules(tmp_path):
    return write_rules(tmp_path, RULES)


@pytest.fixture()
def classify(rules, tmp_path):
    """Run `gate classify --rules RULES [ARGS] < stdin`; (exit code, decisions, stderr)."""
    cache = tmp_path / "cache"

    def run(stdin, *args, env=None):
        env = {"GATE_CACHE_DIR": str(cache), **(env or {})}
        result = run_gate("classify", "--rules", rules, *args, stdin=stdin, env=env)
        stderr = result.stderr.decode("utf-8", "replace")
        assert "Traceback" not in stderr, stderr
        out = result.stdout.decode("utf-8")  # strict: the output is always valid UTF-8
        return result.returncode, [json.loads(line) for line in out.splitlines()], stderr

    return run


def lines(*items) -> str:
    return "".join(json.dumps(item) + "\n" for item in items)


def test_one_decision_per_line(classify, rules):
    code, decisions, _ = classify(lines(PREFER, NOISE, MIXED, []))
    assert code == 0
    assert [d["action"] for d in decisions] == ["flag", "drop", "flag", "drop"]
    policy = load_revision(str(rules)).policy
    assert all(d["policy"] == policy for d in decisions)
    assert decisions[0]["type"] == "preference" and decisions[0]["rule"] == "prefer"
    assert decisions[2]["payload"] == [{"role": "user", "content": "I prefer rebase over merge"}]
    assert decisions[1]["rule"] == "heartbeat" and decisions[1]["payload"] == []


def test_blank_lines_are_skipped(classify):
    code, decisions, _ = classify("\n" + lines(PREFER) + "\n   \n" + lines(NOISE) + "\n")
    assert code == 0 and [d["action"] for d in decisions] == ["flag", "drop"]


def test_a_pretty_printed_window(classify):
    code, decisions, _ = classify(json.dumps(MIXED, indent=2))
    assert code == 0 and len(decisions) == 1 and decisions[0]["action"] == "flag"


def test_a_window_from_a_file(rules, tmp_path):
    source = tmp_path / "windows.jsonl"
    source.write_text(lines(PREFER, NOISE))
    result = run_gate("classify", "--rules", rules, "--no-cache", source)
    assert result.returncode == 0
    assert [json.loads(line)["action"] for line in result.stdout.decode().splitlines()] == ["flag", "drop"]


def test_window_objects_with_recent_shapes(classify):
    code, first, _ = classify(lines({"window": PREFER}))
    shape = first[0]["shape"]
    code, decisions, _ = classify(lines({"window": PREFER, "recent_shapes": [shape]},
                                        {"window": PREFER, "recent_shapes": ["0000000000000000"]},
                                        {"window": [user("I  prefer rebase over merge ")], "recent_shapes": [shape]},
                                        {"window": PREFER, "recent_shapes": "not a list"}))
    assert code == 0
    assert [(d["action"], d["rule"]) for d in decisions] == [("drop", "recent"), ("flag", "prefer"),
                                                              ("drop", "recent"), ("flag", "prefer")]


def test_track_shapes_remembers_the_stream(classify):
    stream = lines(PREFER, [user("I prefer squash over merge")], NOISE, PREFER)
    _, untracked, _ = classify(stream)
    assert [d["action"] for d in untracked] == ["flag", "flag", "drop", "flag"]
    _, tracked, _ = classify(stream, "--track-shapes", "10")
    assert [(d["action"], d["rule"]) for d in tracked] == [("flag", "prefer"), ("flag", "prefer"),
                                                           ("drop", "heartbeat"), ("drop", "recent")]
    _, short, _ = classify(stream, "--track-shapes", "1")  # remembers only the previous window
    assert [d["action"] for d in short] == ["flag", "flag", "drop", "flag"]


def test_levels_per_line_and_on_the_command_line(classify):
    strong = [user("I prefer rebase")]  # scores 4: conservative needs 5
    code, decisions, _ = classify(lines({"window": strong, "level": "conservative"}, {"window": strong}))
    assert [(d["action"], d["level"]) for d in decisions] == [("skip", "conservative"), ("flag", "balanced")]
    code, decisions, _ = classify(lines({"window": strong, "level": "conservative"}), "--level", "aggressive")
    assert [(d["action"], d["level"]) for d in decisions] == [("flag", "aggressive")]


def test_unknown_level_on_the_command_line(rules):
    result = run_gate("classify", "--rules", rules, "--level", "reckless", stdin=lines(PREFER))
    assert result.returncode == 2 and result.stdout == b""
    stderr = result.stderr.decode()
    assert "--level" in stderr and "conservative, balanced, aggressive" in stderr and "Traceback" not in stderr


def test_bad_json_lines_report_an_error_and_continue(classify):
    stream = lines(PREFER) + "{not json\n" + lines(NOISE) + '["unterminated\n' + lines(MIXED)
    code, decisions, _ = classify(stream)
    assert code == 1
    assert [d.get("action") for d in decisions] == ["flag", None, "drop", None, "flag"]
    assert decisions[1]["error"].startswith("-:2: not JSON")
    assert decisions[3]["error"].startswith("-:4: not JSON")


def test_a_bad_first_line_does_not_stop_the_stream(classify):
    code, decisions, _ = classify("garbage\n" + lines(PREFER, NOISE))
    assert code == 1
    assert decisions[0]["error"].startswith("-:1: not JSON")
    assert [d.get("action") for d in decisions[1:]] == ["flag", "drop"]


def test_deeply_nested_json_line_is_an_error_line(classify):
    code, decisions, _ = classify(lines(PREFER) + "[" * 200_000 + "]" * 200_000 + "\n" + lines(NOISE))
    assert code == 1
    assert decisions[0]["action"] == "flag" and "error" in decisions[1] and decisions[2]["action"] == "drop"


def test_invalid_utf8_and_surrogates_never_break_the_output(classify):
    raw = b'[{"role": "user", "content": "I prefer caf\xe9 \xff\xfe tabs"}]\n'
    escaped = lines([user("I prefer \ud800 tabs")], {"window": PREFER, "level": "\ud800"})
    # PYTHONIOENCODING=utf-8 makes Python's stdin strict, as a UTF-8 desktop locale does
    code, decisions, _ = classify(raw + escaped.encode("utf-8"), env={"PYTHONIOENCODING": "utf-8"})
    assert len(decisions) == 3
    assert decisions[0]["action"] == "flag" and decisions[1]["action"] == "flag"
    assert "\ud800" not in decisions[1]["payload"][0]["content"]
    assert decisions[2]["action"] == "skip" and "unknown level" in decisions[2]["error"]


def test_non_ascii_text_is_kept(classify):
    # even where Python would write ASCII: the hook's output is UTF-8 JSON
    _, decisions, _ = classify(lines([user("I prefer café au lait, 日本語 too")]), env={"PYTHONIOENCODING": "ascii"})
    assert decisions[0]["payload"][0]["content"] == "I prefer café au lait, 日本語 too"


@pytest.mark.parametrize("make_source, reason", [
    (lambda tmp: tmp / "missing.jsonl", "No such file or directory"),
    (lambda tmp: tmp, "Is a directory"),
])
def test_a_source_that_cannot_be_read_is_a_one_line_error(classify, tmp_path, make_source, reason):
    code, decisions, stderr = classify("", str(make_source(tmp_path)))
    assert code == 2 and decisions == []
    assert stderr.strip().splitlines() == [f"{make_source(tmp_path)}: cannot read windows: {reason}"]


def test_hostile_windows_through_the_cli(classify):
    items = [None, 42, "I prefer tabs", {"role": "user", "content": "I prefer tabs"}, [1, None, "x"],
             [{"role": "user", "content": [{"type": "tool_use"}]}], {"window": "not a list"}, {"window": None}]
    code, decisions, _ = classify(lines(*items))
    assert code == 0 and len(decisions) == len(items)
    assert all(d["action"] in ("drop", "skip", "flag") for d in decisions)


def test_a_pattern_that_times_out_is_recorded_in_the_decision(tmp_path):
    # (the lookahead keeps the pattern out of the exact pattern set, so `regex` runs it)
    slow = write_rules(tmp_path, revision_doc([drop_rule("slow", match(r"(x+x+)+(?=y)"))]), name="slow.yaml")
    result = run_gate("classify", "--no-cache", "--rules", slow, stdin=lines([user("x" * 2000)], [user("fine")]))
    first, second = [json.loads(line) for line in result.stdout.decode().splitlines()]
    assert (first["action"], first["rule"], first["payload"]) == ("skip", "slow", [])
    assert "timeout" in first["error"] and "error" not in second


def test_decisions_stream_before_input_ends(rules, tmp_path):
    """A hook may keep the pipe open: each decision is written as soon as its line is read."""
    env = dict(os.environ, GATE_CACHE_DIR=str(tmp_path / "cache"))
    proc = subprocess.Popen([GATE, "classify", "--rules", str(rules)], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    watchdog = threading.Timer(20, proc.kill)
    watchdog.start()
    try:
        for window, action in ((PREFER, "flag"), (NOISE, "drop")):
            proc.stdin.write(lines(window).encode())
            proc.stdin.flush()
            assert json.loads(proc.stdout.readline())["action"] == action
        proc.stdin.close()
        assert proc.wait() == 0
    finally:
        watchdog.cancel()
        proc.kill()
        proc.wait()


# -- the compiled-revision cache --------------------------------------------

def pickles(directory):
    return sorted(p for p in directory.iterdir() if p.suffix == ".pickle") if directory.exists() else []


def test_second_load_hits_the_cache(tmp_path, monkeypatch):
    cache = tmp_path / "cache"
    monkeypatch.setenv("GATE_CACHE_DIR", str(cache))
    path = write_rules(tmp_path, RULES)
    first = load_revision_cached(str(path))
    [entry] = pickles(cache)
    # Replace the entry with a different revision: if the next load returns it, the cache was read.
    other = load_revision("other.yaml", text=(tmp_path / "rules.yaml").read_text().replace("revision: t1", "revision: t9"))
    entry.write_bytes(pickle.dumps(other))
    second = load_revision_cached(str(path))
    assert second.policy == other.policy != first.policy
    assert load_revision_cached(str(path), use_cache=False).policy == first.policy


def test_a_changed_file_misses_the_cache(tmp_path, monkeypatch):
    cache = tmp_path / "cache"
    monkeypatch.setenv("GATE_CACHE_DIR", str(cache))
    path = write_rules(tmp_path, RULES)
    first = load_revision_cached(str(path))
    changed = RULES | {"instructions": "Store only durable facts, and be brief."}
    write_rules(tmp_path, changed)
    second = load_revision_cached(str(path))
    assert second.policy != first.policy
    assert second.policy == load_revision(str(path)).policy
    assert len(pickles(cache)) == 2


def test_a_corrupt_cache_entry_is_a_miss(tmp_path, monkeypatch):
    cache = tmp_path / "cache"
    monkeypatch.setenv("GATE_CACHE_DIR", str(cache))
    path = write_rules(tmp_path, RULES)
    expected = load_revision_cached(str(path)).policy
    [entry] = pickles(cache)
    entry.write_bytes(b"not a pickle")
    assert load_revision_cached(str(path)).policy == expected


def test_a_broken_file_is_never_cached(tmp_path, monkeypatch):
    cache = tmp_path / "cache"
    monkeypatch.setenv("GATE_CACHE_DIR", str(cache))
    path = write_rules(tmp_path, RULES | {"drop_rules": [drop_rule("bad", match("(unclosed"))]})
    for _ in range(2):
        with pytest.raises(GateError):
            load_revision_cached(str(path))
    assert pickles(cache) == []


def test_cli_uses_the_cache_and_stays_light(tmp_path):
    """With a warm cache, `gate classify` reads the pickle and never imports jsonschema or httpx."""
    cache = tmp_path / "cache"
    path = write_rules(tmp_path, RULES)
    env = {"GATE_CACHE_DIR": str(cache)}
    assert run_gate("classify", "--rules", path, stdin=lines(PREFER), env=env).returncode == 0
    [entry] = pickles(cache)
    probe = ("import io, sys\nfrom gate.cli import main\n"
             f"sys.argv = ['gate', 'classify', '--rules', {str(path)!r}]\n"
             "sys.stdin = io.StringIO('[]\\n')\n"
             "try:\n    main()\nexcept SystemExit:\n    pass\n"
             "print(sorted(m for m in ('jsonschema', 'httpx') if m in sys.modules), file=sys.stderr)\n")
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, env=dict(os.environ, **env))
    assert result.stderr.decode().strip().splitlines()[-1] == "[]", result.stderr
    other = load_revision("x.yaml", text=path.read_text().replace("revision: t1", "revision: t9"))
    entry.write_bytes(pickle.dumps(other))
    out = run_gate("classify", "--rules", path, stdin=lines(PREFER), env=env).stdout
    assert json.loads(out)["policy"] == other.policy  # the CLI read the cache
    out = run_gate("classify", "--no-cache", "--rules", path, stdin=lines(PREFER), env=env).stdout
    assert json.loads(out)["policy"] != other.policy

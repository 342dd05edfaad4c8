"""Capture end to end: a session transcript grows over several hook events, the hook spools
what the gate flags, `gate flush` sends it to the emulator typed and stamped, nothing else.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import time

import pytest

from capturekit import (APP_ID, USER_ID, CaptureHome, chatter_exchange, decision_exchange, heartbeat_exchange,
                        preference_exchange, sent_adds, spool_bytes)
from platform_helpers import KEY, assert_no_key, emulator
from transcriptkit import ClaudeSession, text, tool_use


def _policy(home: CaptureHome) -> str:
    from gate.engine.cache import load_classifier

    return load_classifier(str(home.rules)).policy


def test_a_scripted_session_ends_with_the_flagged_windows_on_the_platform(tmp_path):
    with emulator(delay_ms=10) as emu:
        home = CaptureHome(tmp_path, base_url=emu.url)
        session = ClaudeSession(seed=1)
        transcript = tmp_path / "session.jsonl"

        decision_exchange(session, "keep the job queue in Postgres")
        heartbeat_exchange(session, 3)
        session.write(transcript)
        # the real command, as Claude Code runs it: nothing on stdout or stderr, exit 0
        done = home.gate("hook", "claude-code", stdin=home.event(transcript, "Stop"))
        assert (done.returncode, done.stdout, done.stderr) == (0, "", "")

        preference_exchange(session, "pnpm over npm in every repository")
        heartbeat_exchange(session, 4)
        chatter_exchange(session)
        session.bookkeeping("system", subtype="turn_duration", durationMs=5120)
        session.write(transcript)
        report = home.hook(transcript, "Stop")
        assert report.error is None

        decision_exchange(session, "ship from main only and retire release branches")
        session.write(transcript)
        report = home.hook(transcript, "SessionEnd")
        assert report.error is None and report.offset == os.path.getsize(transcript)

        with home.spool() as spool:
            pending = spool.items(("pending",))
        assert sorted(i.type for i in pending) == ["decision", "decision", "preference"]
        # only what was flagged touched the disk: the dropped heartbeats' and the chatter's words did not
        written = spool_bytes(home)
        for never in (b"loss=0.", b"Epoch", b"looks fine", b"kick off the training"):
            assert never not in written
        assert b"keep the job queue in Postgres" in written
        mode = stat.S_IMODE(os.stat(home.state_dir / "spool.sqlite3").st_mode)
        assert mode == 0o600

        done = home.gate("flush")
        assert done.returncode == 0, done.stdout + done.stderr
        assert "sent 3" in done.stdout
        assert_no_key(done.stdout, done.stderr, written)

        adds = sent_adds(emu)
        assert len(adds) == 3
        assert len(emu.writes_seen()) == 3  # and no other write of any kind
        policy = _policy(home)
        by_type = {}
        for body in adds:
            assert body["infer"] is True and body["user_id"] == USER_ID
            assert body["metadata"]["policy"] == policy
            assert body["metadata"]["session_id"] == session.session_id
            assert all(m["role"] in ("user", "assistant") for m in body["messages"])
            by_type.setdefault(body["metadata"]["type"], []).append(body)
            assert "Epoch" not in json.dumps(body)
        assert "app_id" not in by_type["preference"][0]  # a preference follows the person
        assert {b["app_id"] for b in by_type["decision"]} == {APP_ID}
        emu_memories = emu.memories(filters={"user_id": USER_ID})
        assert emu_memories, "the emulator extracted nothing"

        with home.spool() as spool:
            sent = spool.items(("sent",))
        assert len(sent) == 3 and all(i.event_id for i in sent)
        # a second flush has nothing to send; a second hook run has nothing new
        assert home.gate("flush").returncode == 0
        assert home.hook(transcript, "SessionEnd").exchanges == 0
        assert len(sent_adds(emu)) == 3


def test_the_session_remembers_shapes_across_events_so_a_repeated_frame_is_dropped(tmp_path):
    home = CaptureHome(tmp_path)
    transcript = tmp_path / "session.jsonl"
    session = ClaudeSession(seed=2)

    def status(done: int) -> None:
        session.prompt(f"we decided to wait: reindex at {done}% ({done * 50} of 5000 pages)")
        session.reply(text("Ok, waiting."))

    status(12)
    chatter_exchange(session)  # the next prompt closes the status exchange
    session.write(transcript)
    first = home.hook(transcript, "Stop")
    status(41)
    chatter_exchange(session)
    session.write(transcript)
    second = home.hook(transcript, "Stop")
    assert (first.flagged, second.flagged) == (1, 0)
    assert second.dropped == 1
    # another session has its own shapes: the same frame there is new
    other = ClaudeSession(seed=3)
    other.prompt("we decided to wait: reindex at 77% (3850 of 5000 pages)")
    other.reply(text("Ok, waiting."))
    other_path = other.write(tmp_path / "other.jsonl")
    assert home.hook(other_path, "SessionEnd", session_id="sess-2").flagged == 1


def test_the_time_budget_saves_progress_and_the_next_event_goes_on(tmp_path):
    home = CaptureHome(tmp_path)
    transcript = tmp_path / "session.jsonl"
    session = ClaudeSession(seed=4)
    for what in ("squash every merge", "keep secrets in the vault only", "drop Python 3.9 support",
                 "run migrations before the deploy, never after it", "name branches after their ticket"):
        decision_exchange(session, what)
    session.write(transcript)
    runs = []
    for _ in range(10):
        report = home.hook(transcript, "SessionEnd", budget_s=0.0)
        runs.append(report.exchanges)
        if not report.unfinished:
            break
    assert runs == [1, 1, 1, 1, 1]  # one exchange a run when the budget is spent, none twice
    with home.spool() as spool:
        assert len(spool.items(("pending",))) == 5


def test_a_session_end_over_budget_finishes_in_the_background_then_flushes(tmp_path):
    with emulator(delay_ms=5) as emu:
        home = CaptureHome(tmp_path, base_url=emu.url)
        session = ClaudeSession(seed=12)
        topics = ("squash every merge", "keep secrets in the vault only", "drop Python 3.9 support",
                  "run migrations before the deploy", "name branches after their ticket")
        for what in topics:
            decision_exchange(session, what)
        transcript = session.write(tmp_path / "session.jsonl")
        report = home.hook(transcript, "SessionEnd", budget_s=0.0, start_flush=True)
        assert report.unfinished and report.continued and report.exchanges == 1
        deadline = time.monotonic() + 60  # no event follows a session's end: nothing may wait for one
        while len(sent_adds(emu)) < len(topics) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert len(sent_adds(emu)) == len(topics)
    log = (home.state_dir / "capture.log").read_text()
    assert "hook SessionEnd: 4 exchange(s)" in log and "flush: sent 5" in log


def test_the_hook_always_exits_0_and_prints_nothing(tmp_path):
    home = CaptureHome(tmp_path)
    transcript = tmp_path / "session.jsonl"
    ClaudeSession(seed=5).write(transcript)
    cases = ["not json at all", json.dumps({"session_id": "x"}),
             home.event(tmp_path / "missing.jsonl")]
    for stdin in cases:
        done = home.gate("hook", "claude-code", stdin=stdin)
        assert (done.returncode, done.stdout, done.stderr) == (0, "", "")
    home.config_file.write_text('rules = "nowhere.yaml"\napi_key = "m0-shouldnotbehere1234"\n')
    done = home.gate("hook", "claude-code", stdin=home.event(transcript))
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")
    log = (home.state_dir / "capture.log").read_text()
    assert "not a JSON object" in log and "missing.jsonl" in log
    assert "api_key: the API key is read only from the environment" in log
    assert "m0-shouldnotbehere1234" not in log


def test_a_window_flagged_twice_is_spooled_once(tmp_path):
    # two sessions in one repository (each with its own recent shapes) say the same thing
    home = CaptureHome(tmp_path)
    reports = []
    for seed in (6, 7):
        session = ClaudeSession(seed=seed)
        decision_exchange(session, "pin the Node version in .nvmrc")
        transcript = session.write(tmp_path / f"session-{seed}.jsonl")
        reports.append(home.hook(transcript, "SessionEnd", session_id=session.session_id))
    assert [(r.flagged, r.spooled) for r in reports] == [(1, 1), (1, 0)]


def test_spool_lists_retries_and_purges(tmp_path):
    from gate.capture.spool import NewItem

    home = CaptureHome(tmp_path)
    with home.spool() as spool:
        items = [NewItem(f"k{n}", "decision", "cap1.0+x", "balanced", "we-decided", "s", "sess", APP_ID,
                         ({"role": "user", "content": f"we decided thing {n}"},)) for n in range(3)]
        spool.record(transcript="/t", offset=10, session_id="sess", shapes=[], items=items, now=1000.0)
        first = spool.claim("me", now=2000.0)
        spool.mark_sent(first.id, "me", "ev-1", now=2000.0)
        second = spool.claim("me", now=2000.0)
        spool.release(second.id, "me", error="POST /v3/memories/add/: 400 http: bad", counted=False,
                      in_doubt=False, park=True)
    listing = home.gate("spool")
    assert listing.returncode == 0
    assert "pending 1, sending 0, sent 1, parked 1" in listing.stdout
    assert "event ev-1" in listing.stdout and "400 http: bad" in listing.stdout
    parked = home.gate("spool", "--state", "parked", "--json")
    assert [json.loads(line)["content_key"] for line in parked.stdout.splitlines()] == ["k1"]
    assert "1 item(s) due now" in home.gate("spool", "retry", str(second.id)).stdout
    with home.spool() as spool:
        assert spool.counts()["parked"] == 0
    # sent at 2000 s after the epoch: purged by any date after it, and only the sent one
    assert "purged 0" in home.gate("spool", "purge", "--sent-before", "1970-01-01").stdout
    assert "purged 1" in home.gate("spool", "purge", "--sent-before", "2026-01-01").stdout
    with home.spool() as spool:
        assert spool.counts() == {"pending": 2, "sending": 0, "sent": 0, "parked": 0}
    bad = home.gate("spool", "purge", "--sent-before", "last tuesday")
    assert bad.returncode == 2 and "expected a date" in bad.stderr and "Traceback" not in bad.stderr


def test_the_flush_refuses_without_a_key_and_never_prints_one(tmp_path):
    home = CaptureHome(tmp_path)
    done = home.gate("flush", env={"GATE_TEST_MEM0_KEY": ""})
    assert done.returncode == 2
    assert "GATE_TEST_MEM0_KEY is not set" in done.stdout + done.stderr
    assert KEY not in done.stdout + done.stderr


@pytest.mark.parametrize("body, expected", [
    ('rules = "r.yaml"\n[platform]\napi_key = "m0-abcdefgh123"\n',
     ":3: platform.api_key: the API key is read only from the environment"),
    ('rules = "r.yaml"\nlevle = "balanced"\n', ":2: levle: unknown setting; expected one of rules, level"),
    ('rules = "r.yaml"\n[platform]\norg_id = "org_1"\n',
     ":3: platform.org_id: a project override needs both org_id and project_id"),
    ('rules = "r.yaml"\n[flush]\nmax_attempts = "many"\n', ":3: flush.max_attempts: expected a whole number"),
    ('rules = r.yaml\n', ":1:9: not valid TOML"),
    ('level = "balanced"\n', "rules: missing; expected the path of a rules file"),
])
def test_configuration_errors_name_the_file_line_and_field(tmp_path, body, expected):
    from gate.capture.config import load_config
    from gate.language.errors import GateError

    path = tmp_path / "config.toml"
    path.write_text(body)
    with pytest.raises(GateError) as caught:
        load_config(str(path))
    assert str(caught.value).startswith(str(path))
    assert expected in str(caught.value)
    assert "m0-abcdefgh123" not in str(caught.value)


def test_a_relative_rules_path_is_read_from_the_config_folder(tmp_path):
    from gate.capture.config import load_config

    (tmp_path / "config.toml").write_text('rules = "rules/v9.yaml"\nuser_id = "me"\n[platform]\n'
                                          'org_id = "o"\nproject_id = "p"\n')
    config = load_config(str(tmp_path / "config.toml"))
    assert config.rules == str(tmp_path / "rules" / "v9.yaml")
    assert (config.platform.org_id, config.platform.project_id, config.user_id) == ("o", "p", "me")


@pytest.mark.parametrize("url, slug", [
    ("git@github.com:Acme/Shop-API.git", "acme-shop-api"),
    ("https://github.com/acme/shop-api", "acme-shop-api"),
    ("https://token@gitlab.example.com/group/sub/tool.git/", "sub-tool"),
    ("ssh://git@git.example.com:2222/acme/shop-api.git", "acme-shop-api"),
])
def test_the_app_id_is_the_remote_slug_from_any_clone_or_worktree(tmp_path, url, slug):
    from gate.capture.repository import repository_id, slug_of

    assert slug_of(url) == slug
    main = tmp_path / "main"
    (main / ".git" / "worktrees" / "wt").mkdir(parents=True)
    (main / ".git" / "config").write_text(f'[remote "origin"]\n\turl = {url}\n')
    (main / ".git" / "worktrees" / "wt" / "commondir").write_text("../..\n")
    worktree = tmp_path / "wt"
    (worktree / "src").mkdir(parents=True)
    (worktree / ".git").write_text(f"gitdir: {main / '.git' / 'worktrees' / 'wt'}\n")
    assert repository_id(str(main)) == slug
    assert repository_id(str(worktree / "src")) == slug
    assert repository_id(str(tmp_path / "elsewhere")) == "elsewhere"


def test_broken_text_in_a_flagged_window_does_not_jam_the_hook(tmp_path):
    # a lone surrogate (a cut emoji) in the person's words; the spool must take it and move on
    home = CaptureHome(tmp_path)
    session = ClaudeSession(seed=8)
    decision_exchange(session, "log without emoji \ud83d from now on")
    decision_exchange(session, "keep one changelog per package")
    transcript = session.write(tmp_path / "session.jsonl")
    report = home.hook(transcript, "SessionEnd", session_id="sess-\udcff")
    assert report.error is None and report.spooled == 2
    assert report.offset == os.path.getsize(transcript)
    with home.spool() as spool:
        texts = [m["content"] for item in spool.items() for m in item.messages]
    assert any("log without emoji" in t for t in texts)
    assert all(t.encode("utf-8") for t in texts)


def three_decisions(tmp_path, seed: int):
    """A finished session of three decisions, each flagged: (its transcript's path, its id)."""
    session = ClaudeSession(seed=seed)
    for what in ("squash every merge", "keep secrets in the vault only", "tag releases from CI only"):
        decision_exchange(session, what)
    return session.write(tmp_path / "session.jsonl"), session.session_id


def test_two_hook_events_at_once_spool_each_window_once(tmp_path):
    home = CaptureHome(tmp_path)
    transcript, session_id = three_decisions(tmp_path, seed=9)
    # Without the time budget: on a loaded machine loading the rules alone can spend it, and the
    # rest then goes to a background hook this test would have to wait for; the race is the point here.
    runs = [home.start_gate("hook", "claude-code", "--no-budget", stdin=subprocess.PIPE) for _ in range(2)]
    for run, name in zip(runs, ("Stop", "SessionEnd")):
        run.stdin.write(home.event(transcript, name))
        run.stdin.close()
    assert [(r.wait(timeout=60), r.stdout.read(), r.stderr.read()) for r in runs] == [(0, "", "")] * 2
    with home.spool() as spool:
        assert len(spool.items()) == 3
        # whichever finished last, the offset never went back to before the last exchange
        assert spool.resume_point(str(transcript), session_id)[0] == os.path.getsize(transcript)


def _open_spool_at_once(directory, barrier, results):
    from gate.capture.spool import Spool, SpoolError

    barrier.wait()
    try:
        Spool(directory).close()
        results.put("opened")
    except SpoolError as exc:
        results.put(str(exc))


def test_processes_opening_a_new_spool_at_once_all_open_it(tmp_path):
    # Two hooks of one session's end, the first on a machine: both put the new spool in WAL mode,
    # and SQLite refused one of them at once (about one pair in six here) without waiting for the
    # lock as it does elsewhere; that hook's windows were lost. Twenty pairs: the race shows.
    import multiprocessing

    context = multiprocessing.get_context("fork")
    outcomes = []
    for pair in range(20):
        barrier, results = context.Barrier(2), context.Queue()
        workers = [context.Process(target=_open_spool_at_once, args=(str(tmp_path / str(pair)), barrier, results))
                   for _ in range(2)]
        for worker in workers:
            worker.start()
        for worker in workers:
            worker.join(timeout=60)
        outcomes += [results.get(timeout=5) for _ in workers]
    assert outcomes == ["opened"] * 40


def test_a_session_end_that_finds_the_spool_locked_goes_on_in_the_background(tmp_path):
    # a flush (or a hook) holding the spool's write lock longer than the editor's hook may wait:
    # no event follows a session's end, so its windows must not be lost
    import sqlite3

    home = CaptureHome(tmp_path)
    transcript, session_id = three_decisions(tmp_path, seed=10)
    with home.spool() as spool:
        path = spool.path
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    try:
        report = home.hook(transcript, "SessionEnd", start_flush=True)
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert report.continued and report.spooled == 0 and "locked" in report.error
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        with home.spool() as spool:
            if len(spool.items()) == 3:
                break
        time.sleep(0.1)
    with home.spool() as spool:
        assert len(spool.items()) == 3
        assert spool.resume_point(str(transcript), session_id)[0] == os.path.getsize(transcript)


def test_the_offset_only_moves_forward_when_another_hook_moved_it():
    import tempfile

    from gate.capture.spool import Spool

    with tempfile.TemporaryDirectory() as folder, Spool(folder) as spool:
        spool.record(transcript="/t", offset=100, session_id="s", shapes=[], items=[], read_from=0)
        # a slower hook that also started at 0 and got less far
        spool.record(transcript="/t", offset=60, session_id="s", shapes=[], items=[], read_from=0)
        assert spool.resume_point("/t", "s")[0] == 100
        # a restart (the file was cut short) read from the stored offset: it may go back
        spool.record(transcript="/t", offset=40, session_id="s", shapes=[], items=[], read_from=100)
        assert spool.resume_point("/t", "s")[0] == 40


def test_a_compaction_in_the_middle_of_a_reply_does_not_split_its_exchange(tmp_path):
    home = CaptureHome(tmp_path)
    session = ClaudeSession(seed=10)
    session.prompt("we decided to move the cron jobs to the worker, check the old crontab first")
    session.reply(tool_use("tu-cron", "Bash", {"command": "crontab -l"}))
    session.tool_results(("tu-cron", "0 3 * * * /srv/bin/reindex"))
    transcript = session.write(tmp_path / "session.jsonl")
    assert home.hook(transcript, "PreCompact").exchanges == 0  # the reply is still going on
    session.reply(text("Moved: the reindex job now runs in the worker at 03:00."))
    chatter_exchange(session)
    session.write(transcript)
    report = home.hook(transcript, "Stop")
    assert (report.exchanges, report.flagged) == (1, 1)
    with home.spool() as spool:
        [item] = spool.items()
    assert [m["role"] for m in item.messages] == ["user", "assistant"]  # the whole exchange, in one window
    assert "Moved: the reindex job" in item.messages[1]["content"]


def test_event_by_event_spools_what_one_read_of_the_whole_session_spools(tmp_path):
    # the same session, hooked after every reply (sometimes mid-line, as the editor writes) and
    # hooked once at its end, must leave the same items: the offsets lose and repeat nothing
    session = ClaudeSession(seed=13)
    steps = []
    for n, what in enumerate(("squash every merge", "keep secrets in the vault only", "log in UTC everywhere",
                              "tag releases from CI only", "build images on arm64 too")):
        decision_exchange(session, what)
        steps.append(len(session.lines))
        heartbeat_exchange(session, n + 2)
        steps.append(len(session.lines))
        if n % 2:
            preference_exchange(session, ("short commit subjects", "tabs in Makefiles only")[n // 2])
            session.bookkeeping("system", subtype="turn_duration", durationMs=800 + n)
            session.queued("also bump the version")
            steps.append(len(session.lines))
        chatter_exchange(session)
        steps.append(len(session.lines))
    whole = session.text()

    one = CaptureHome(tmp_path / "one")
    one_path = tmp_path / "one.jsonl"
    one_path.write_text(whole)
    one.hook(one_path, "SessionEnd")

    inc = CaptureHome(tmp_path / "inc")
    inc_path = tmp_path / "inc.jsonl"
    lines = whole.splitlines(keepends=True)
    for k, end in enumerate(steps):
        written = "".join(lines[:end])
        if k % 3 == 1 and end < len(lines):
            written += lines[end][: len(lines[end]) // 2]  # the editor is halfway through a line
        inc_path.write_text(written)
        assert inc.hook(inc_path, "Stop").error is None
    inc_path.write_text(whole)
    inc.hook(inc_path, "SessionEnd")

    def keys(home):
        with home.spool() as spool:
            return sorted((i.content_key, i.type) for i in spool.items())

    assert keys(inc) == keys(one)
    assert sorted(t for _, t in keys(one)) == ["decision"] * 5 + ["preference"] * 2

"""Nothing lost, nothing twice: the flush against the emulator's faults, a killed flush, two
flushes at once, and a full disk. Real processes, real HTTP on loopback, a real file system.
"""

from __future__ import annotations

import collections
import contextlib
import os
import resource
import signal
import subprocess
import time

import pytest

from capturekit import CaptureHome, decision_exchange, preference_exchange, sent_adds
from platform_helpers import emulator
from transcriptkit import ClaudeSession

TOPICS = ("squash every merge", "keep secrets in the vault only", "drop Python 3.9 support",
          "run migrations before the deploy", "name branches after their ticket", "pin Node in .nvmrc",
          "review every schema change twice", "tag releases from CI only", "log in UTC everywhere",
          "keep feature flags for two sprints at most", "build images on arm64 too", "use one Redis per service")


def _spooled(home: CaptureHome, tmp_path, n: int, seed: int = 11) -> str:
    """A session with `n` flagged exchanges, hooked into the spool; returns the transcript."""
    session = ClaudeSession(seed=seed)
    for i in range(n):
        if i % 4 == 3:
            preference_exchange(session, f"{TOPICS[i % len(TOPICS)]} in my own projects ({i})")
        else:
            decision_exchange(session, f"{TOPICS[i % len(TOPICS)]}, item {i}: " + "and " * (i % 5))
    transcript = session.write(tmp_path / f"session-{seed}.jsonl")
    report = home.hook(transcript, "SessionEnd")
    assert report.error is None and report.spooled == n, report
    return transcript


def _keys_sent(emu) -> collections.Counter:
    return collections.Counter(body["metadata"]["content_key"] for body in sent_adds(emu))


def _states(home: CaptureHome) -> dict:
    with home.spool() as spool:
        return spool.counts()


def test_platform_down_then_up_sends_everything_once(tmp_path):
    home = CaptureHome(tmp_path, base_url="http://127.0.0.1:9")  # nothing listens there
    _spooled(home, tmp_path, 4)
    done = home.gate("flush")  # down for a while: every flush stops at once, nothing counts against the items
    assert done.returncode == 1 and "stopped:" in done.stdout and "ConnectError" in done.stdout
    for _ in range(2):
        report = home.flush_here()
        assert report.stopped and report.sent == 0 and report.deferred == 1
    with home.spool() as spool:
        assert all(i.attempts == 0 and i.state == "pending" for i in spool.items())
    with emulator(delay_ms=5) as emu:
        home.write_config(emu.url)
        done = home.gate("flush")
        assert done.returncode == 0, done.stdout
        keys = _keys_sent(emu)
    assert len(keys) == 4 and set(keys.values()) == {1}
    assert _states(home)["sent"] == 4


def test_5xx_backs_off_then_parks_and_retry_revives(tmp_path):
    home = CaptureHome(tmp_path, max_attempts=3, backoff_seconds=0.05)
    _spooled(home, tmp_path, 3)
    with emulator(rate_5xx=1.0) as emu:
        home.write_config(emu.url, max_attempts=3, backoff_seconds=0.05)
        done = home.gate("flush")
        assert done.returncode == 1 and "503" in done.stdout
        for _ in range(2):
            time.sleep(0.25)  # past the item's backoff
            report = home.flush_here()
            assert report.stopped and report.sent == 0  # stops at the first failure: no hammering
        with home.spool() as spool:
            first = spool.items()[0]
        # the platform never accepted it: parked after 3 failures, with the (redacted) error
        assert first.state == "parked" and first.attempts == 3
        assert "503" in first.error and "failed 3 times" in first.error
        assert _states(home)["pending"] == 2
        emu.config.rate_5xx = 0.0  # the platform recovers
        assert "3 item(s) due now" in home.gate("spool", "retry").stdout
        done = home.gate("flush")
        assert done.returncode == 0, done.stdout
    assert _states(home) == {"pending": 0, "sending": 0, "sent": 3, "parked": 0}


def test_429s_are_retried_and_each_item_lands_once(tmp_path):
    home = CaptureHome(tmp_path)
    _spooled(home, tmp_path, 8)
    with emulator(rate_429=0.5, seed=3) as emu:
        home.write_config(emu.url, backoff_seconds=0.01)
        for _ in range(30):
            done = home.gate("flush")
            if done.returncode == 0:
                break
            time.sleep(0.05)
        assert done.returncode == 0, done.stdout
        assert emu.injected["429"] > 0
        accepted = collections.Counter(r.body["metadata"]["content_key"] for r in emu.writes_seen()
                                       if r.path == "/v3/memories/add/")
    assert len(accepted) == 8
    assert _states(home)["sent"] == 8


def test_a_flush_killed_mid_send_loses_nothing_and_duplicates_at_most_the_item_in_flight(tmp_path):
    home = CaptureHome(tmp_path)
    _spooled(home, tmp_path, 6)
    with emulator(slow_ms=700, delay_ms=5) as emu:
        home.write_config(emu.url)
        flush = home.start_gate("flush")
        deadline = time.monotonic() + 20
        while len(sent_adds(emu)) < 2 and time.monotonic() < deadline:
            time.sleep(0.02)
        time.sleep(0.15)  # inside the second request: the platform will take it, the spool will not know
        os.kill(flush.pid, signal.SIGKILL)
        flush.wait()
        with home.spool() as spool:
            assert spool.counts()["sending"] == 1  # the orphan claim of the dead flush
        emu.config.slow_ms = 0
        done = home.gate("flush")
        assert done.returncode == 0, done.stdout
        assert "taken back from a stopped flush 1" in done.stdout
        keys = _keys_sent(emu)
        time.sleep(0.3)  # let the killed request's handler finish storing
    assert len(keys) == 6  # nothing lost
    with home.spool() as spool:
        items = spool.items()
    assert all(i.state == "sent" for i in items)
    resent = [i.content_key for i in items if i.resends]
    assert len(resent) == 1  # the item in flight when the flush died, and the spool says so
    twice = [k for k, n in keys.items() if n > 1]
    assert set(twice) <= set(resent) and max(keys.values()) <= 2  # only it, and only once more


def test_two_flushes_at_once_send_each_item_once(tmp_path):
    home = CaptureHome(tmp_path)
    _spooled(home, tmp_path, 12)
    with emulator(slow_ms=250, delay_ms=5) as emu:
        home.write_config(emu.url)
        flushes = [home.start_gate("flush") for _ in range(2)]
        outputs = [f.communicate(timeout=60) for f in flushes]
        assert [f.returncode for f in flushes] == [0, 0], outputs
        keys = _keys_sent(emu)
    assert len(keys) == 12 and set(keys.values()) == {1}
    sent = [int(out.split("sent ")[1].split(",")[0]) for out, _ in outputs]
    assert sum(sent) == 12 and min(sent) > 0  # both really took part
    assert _states(home)["sent"] == 12


# -- a full disk ---------------------------------------------------------------------------

@contextlib.contextmanager
def _small_disk(path):
    """A 2 MB tmpfs at `path` when we may mount one (root); else a per-process file-size limit."""
    path.mkdir(parents=True, exist_ok=True)
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=2m,mode=0700", "tmpfs", str(path)],
                             capture_output=True).returncode == 0 if os.geteuid() == 0 else False
    try:
        yield mounted
    finally:
        if mounted:
            subprocess.run(["umount", "-l", str(path)], capture_output=True)


def _fill(path) -> str:
    """Write until the file system says it is full; returns the filler to delete later."""
    filler = os.path.join(path, "filler")
    with open(filler, "wb") as handle:
        try:
            while True:
                handle.write(b"\0" * 65536)
                handle.flush()
        except OSError:
            pass
    return filler


def _no_growth():
    # the fallback without a mount: any write that would grow a file fails (EFBIG), as on a full disk
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (0, 0))


def test_a_full_disk_loses_no_window_and_sends_nothing_twice(tmp_path):
    home = CaptureHome(tmp_path)
    session = ClaudeSession(seed=21)
    for what in TOPICS[:3]:
        decision_exchange(session, what)
    transcript = session.write(tmp_path / "session.jsonl")
    with _small_disk(home.state_dir) as mounted, emulator(delay_ms=5) as emu:
        home.write_config(emu.url)
        assert home.hook(transcript, "Stop").spooled == 2  # the last exchange is still open
        decision_exchange(session, TOPICS[3])
        session.write(transcript)
        # the disk fills up: the hook fails quietly and keeps its place in the transcript
        filler = _fill(home.state_dir) if mounted else None
        limit = {} if mounted else {"preexec_fn": _no_growth}
        done = home.gate("hook", "claude-code", stdin=home.event(transcript, "SessionEnd"), **limit)
        assert (done.returncode, done.stdout, done.stderr) == (0, "", "")
        done = home.gate("flush", **limit)
        said = done.stdout + done.stderr
        assert done.returncode == 1 and "disk" in said, said  # 'disk is full' or 'disk I/O error'
        assert "spool.sqlite3" in said
        assert "Traceback" not in said
        assert sent_adds(emu) == []  # nothing went out that the spool could not record
        if filler:
            os.unlink(filler)
        # space again: the next event picks up what the full disk refused, the flush sends all once
        assert home.hook(transcript, "SessionEnd").spooled == 2
        assert home.gate("flush").returncode == 0
        keys = _keys_sent(emu)
    assert len(keys) == 4 and set(keys.values()) == {1}

"""How long does Claude Code wait for gate? `python benchmarks/hook_latency.py [--repeat N] [--rules R]`.

Runs the installed `gate hook claude-code` as the editor does (a new process, the event JSON on
stdin) in a private HOME, over a synthetic session that grows one exchange per event, and prints
milliseconds from process start to exit:
- an event with nothing finished (a bookkeeping line only): the floor, no rules loaded;
- an event that finishes one exchange (the common case after each reply);
- the first event on a long session (200 exchanges read and classified at once);
- one exchange with a revision not in the compiled-revision cache yet (after a rules change);
- `gate flush` of 50 items against `gate emulator` on loopback (items/s).
Each figure is the median (and max) of --repeat runs: the machine may be shared.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "tests"))

from transcriptkit import ClaudeSession, text, tool_use  # noqa: E402  (shared line builders)

GATE = [sys.executable, "-c", "from gate.cli import main; main()"]
WORDS = ("we decided to keep the queue in Postgres", "I prefer small pull requests", "run the tests again",
         "why does the build fail on arm64", "rename the helper to parse_window", "ok thanks")


def exchange(session: ClaudeSession, n: int) -> None:
    session.prompt(f"{WORDS[n % len(WORDS)]} (step {n})")
    session.reply(tool_use(f"tu-{n}", "Bash", {"command": f"pytest -q tests/test_{n % 7}.py"}))
    session.tool_results((f"tu-{n}", f"{n % 40 + 1} passed in 0.{n % 9 + 1}s"))
    session.reply(text(f"Done: step {n} is in place and the tests pass."))


def run_hook(env, transcript, name="Stop") -> float:
    event = json.dumps({"session_id": "bench", "transcript_path": transcript, "hook_event_name": name,
                        "cwd": env["HOME"]})
    started = time.perf_counter()
    done = subprocess.run([*GATE, "hook", "claude-code"], input=event, capture_output=True, text=True, env=env)
    elapsed = (time.perf_counter() - started) * 1000
    if done.returncode != 0 or done.stdout or done.stderr:
        raise SystemExit(f"the hook misbehaved: {done.returncode} {done.stdout!r} {done.stderr!r}")
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=15)
    parser.add_argument("--rules", default=None, help="Rules file (default: newest in rules/).")
    parser.add_argument("--verbose", action="store_true", help="Print every run of the common case.")
    args = parser.parse_args()
    rules = os.path.abspath(args.rules or _newest(os.path.join(ROOT, "rules")))
    root = tempfile.mkdtemp(prefix="gate-hook-bench-")
    env = {"PATH": os.environ.get("PATH", ""), "HOME": root, "XDG_STATE_HOME": os.path.join(root, "state"),
           "XDG_CONFIG_HOME": os.path.join(root, "config"), "GATE_CACHE_DIR": os.path.join(root, "cache"),
           "BENCH_MEM0_KEY": "local"}
    os.makedirs(os.path.join(root, "config", "gate"))
    config = os.path.join(root, "config", "gate", "config.toml")
    with open(config, "w") as handle:
        handle.write(f'rules = "{rules}"\nuser_id = "bench"\n[platform]\napi_key_env = "BENCH_MEM0_KEY"\n'
                     f'base_url = "http://127.0.0.1:9"\n')
    transcript = os.path.join(root, "session.jsonl")
    cold = []
    for r in range(3):  # a new revision: the first event parses and compiles it (cache miss)
        probe = ClaudeSession(seed=50 + r)
        exchange(probe, 0)
        exchange(probe, 1)
        path = probe.write(os.path.join(root, f"probe-{r}.jsonl"))
        cold.append(run_hook({**env, "GATE_CACHE_DIR": os.path.join(root, f"cold-cache-{r}")}, path))
    session = ClaudeSession(seed=7)
    exchange(session, 0)
    exchange(session, 1)
    session.write(transcript)
    run_hook(env, transcript)  # warm the compiled-revision cache, as `gate hook install` does

    idle, one = [], []
    for n in range(2, args.repeat + 2):
        session.bookkeeping("system", subtype="turn_duration", durationMs=900)
        session.write(transcript)
        idle.append(run_hook(env, transcript))
        exchange(session, n)
        session.write(transcript)
        one.append(run_hook(env, transcript))

    long_runs = []
    for r in range(max(3, args.repeat // 5)):
        long_session = ClaudeSession(seed=100 + r)
        for n in range(200):
            exchange(long_session, n)
        path = long_session.write(os.path.join(root, f"long-{r}.jsonl"))
        long_runs.append(run_hook(env, path, "SessionEnd"))

    flush_root = os.path.join(root, "flush")  # a spool of its own: the hooks above started flushes too
    rate = _flush_rate({**env, "XDG_STATE_HOME": os.path.join(flush_root, "state")}, config, flush_root)
    print(f"rules {os.path.relpath(rules, ROOT)}; {args.repeat} runs each; median (max) ms, process start to exit")
    print(f"  event, nothing finished        {_fmt(idle)}")
    print(f"  event, one exchange finished   {_fmt(one)}")
    if args.verbose:
        print("    each run:", " ".join(f"{v:.0f}" for v in one))
    print(f"  first event, 200 exchanges     {_fmt(long_runs)}")
    print(f"  one exchange, rules not cached {_fmt(cold)}   (once per revision; install warms it)")
    print(f"  gate flush, 50 items           {rate:.0f} items/s against gate emulator on loopback")


def _flush_rate(env, config, root) -> float:
    sys.path.insert(0, ROOT)
    from gate.capture.spool import NewItem, Spool
    from gate.platform.emulator import Emulator, EmulatorConfig

    with Spool(os.path.join(root, "state", "gate")) as spool:  # root: the flush's own folder
        items = [NewItem(f"bench-{n}", "decision", "bench", "balanced", None, "s", "bench", "bench-repo",
                         ({"role": "user", "content": f"we decided thing {n}"},)) for n in range(50)]
        spool.record(transcript="/bench", offset=0, session_id="bench", shapes=[], items=items)
    with Emulator(EmulatorConfig(delay_ms=5)) as emu:
        text_ = open(config).read().replace("http://127.0.0.1:9", emu.url)
        open(config, "w").write(text_)
        started = time.perf_counter()
        done = subprocess.run([*GATE, "flush"], capture_output=True, text=True, env=env)
        elapsed = time.perf_counter() - started
    sent = int(done.stdout.split("sent ")[1].split(",")[0]) if "sent " in done.stdout else 0
    return sent / elapsed


def _fmt(values) -> str:
    return f"{statistics.median(values):6.0f} ({max(values):.0f})"


def _newest(folder: str) -> str:
    from gate.cli.common import newest_rules  # as `gate` picks it

    return newest_rules(folder)


if __name__ == "__main__":
    main()

"""How fast `gate replay` judges an archive, against `gate classify` on the same windows.

Generates a seeded archive of session files (Claude Code, and one in ten Codex) holding
--windows exchanges built from benchmarks/corpus.py's windows: prompts, replies split one block
a line, tool calls and results (2% large pastes), and the bookkeeping lines real files carry
(empty thinking lines, progress, file-history snapshots). The windows are then read back with
the transcript reader and written as JSON Lines, so both commands judge exactly the same
windows. Each command runs --runs times in a fresh process; the median wall time counts.

    python benchmarks/replay_speed.py                  # 10,000 windows, newest rules
    python benchmarks/replay_speed.py --rules rules/v2.2.yaml --windows 2000 --keep /tmp/archive
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import uuid as uuidlib

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
sys.path.insert(0, ROOT)

from corpus import corpus  # noqa: E402
from speed import gate_command, newest_rules  # noqa: E402

from gate.transcripts.usertext import split_person_text  # noqa: E402

PER_SESSION = 100  # exchanges in one session file
COMMANDS = ("pytest -q", "kubectl get pods -n {svc}", "git log --oneline -5", "rg -n TODO src", "make build",
            "docker compose ps", "npm run lint", "terraform plan")


def _text_of(turn) -> str:
    content = turn.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(b.get("text", "") for b in content if isinstance(b, dict) and isinstance(b.get("text"), str))
    return ""


def _exchange(window, rng) -> tuple[str, list[str], list[str]]:
    """(the prompt, assistant texts, tool outputs) made from one corpus window."""
    prompt, replies, outputs = None, [], []
    for turn in window:
        text = _text_of(turn)
        if not text.strip():
            continue
        if turn.get("role") == "user" and prompt is None:
            prompt = text
        elif turn.get("role") == "tool" or (turn.get("role") == "user" and rng.random() < 0.5):
            outputs.append(text)
        else:
            replies.append(text)
    if not replies:  # every exchange gets a reply, or the next prompt would join it (one window, not two)
        replies.append(rng.choice(("Done.", "Ran it; see the output above.", "Fixed, tests pass.", "On it.")))
    if prompt is not None and not split_person_text(prompt)[0]:  # editor-written text: no prompt
        prompt = None
    return prompt or rng.choice(("go on", "ok, continue", "run it", "what failed?")), replies, outputs


class _ClaudeWriter:
    def __init__(self, handle, rng, session_id) -> None:
        self.handle, self.rng, self.session = handle, rng, session_id
        self.parent, self.tick, self.n = None, 0, 0

    def _line(self, kind, **fields) -> None:
        self.tick += 1
        self.n += 1
        uid = str(uuidlib.UUID(int=self.rng.getrandbits(128)))
        line = {"parentUuid": self.parent, "isSidechain": False, "userType": "external", "cwd": "/home/dev/app",
                "sessionId": self.session, "version": "2.1.9", "gitBranch": "main", "type": kind, "uuid": uid,
                "timestamp": f"2026-03-02T{9 + self.tick // 3600 % 12:02d}:{self.tick // 60 % 60:02d}:"
                             f"{self.tick % 60:02d}.000Z", **fields}
        self.parent = uid
        self.handle.write(json.dumps(line) + "\n")

    def exchange(self, prompt, replies, outputs) -> None:
        self.handle.write(json.dumps({"type": "file-history-snapshot", "messageId": str(self.n),
                                      "snapshot": {"trackedFileBackups": {}}, "isSnapshotUpdate": False}) + "\n")
        self._line("user", message={"role": "user", "content": prompt})
        for i, output in enumerate(outputs or [None]):
            message = f"msg_{self.rng.getrandbits(64):016x}"
            blocks = [{"type": "thinking", "thinking": "", "signature": "Eq" + "x" * 60}]
            if i == 0 and replies:
                blocks.append({"type": "text", "text": replies[0]})
            tool_id = f"toolu_{self.rng.getrandbits(64):016x}"
            if output is not None:
                command = self.rng.choice(COMMANDS).format(svc="api")
                blocks.append({"type": "tool_use", "id": tool_id, "name": "Bash", "input": {"command": command}})
            for block in blocks:
                self._line("assistant", message={"model": "claude-sonnet-4-5", "id": message, "type": "message",
                                                 "role": "assistant", "content": [block]})
            if output is not None:
                self.handle.write(json.dumps({"type": "progress", "data": {"type": "hook_progress"},
                                              "toolUseID": tool_id, "sessionId": self.session}) + "\n")
                self._line("user", message={"role": "user", "content": [
                    {"tool_use_id": tool_id, "type": "tool_result", "content": output, "is_error": False}]},
                    toolUseResult={"stdout": output, "stderr": "", "interrupted": False})
        for reply in replies[1:]:
            self._line("assistant", message={"model": "claude-sonnet-4-5", "id": f"msg_{self.rng.getrandbits(64):x}",
                                             "role": "assistant", "content": [{"type": "text", "text": reply}]})


class _CodexWriter:
    def __init__(self, handle, rng, session_id) -> None:
        self.handle, self.rng = handle, rng
        self._add("session_meta", {"id": session_id, "cwd": "/home/dev/app", "cli_version": "0.58.0"})
        self._message("user", "<environment_context>\n  <cwd>/home/dev/app</cwd>\n</environment_context>")

    def _add(self, kind, payload) -> None:
        self.handle.write(json.dumps({"timestamp": "2026-03-02T09:00:00.000Z", "type": kind, "payload": payload}) + "\n")

    def _message(self, role, text) -> None:
        kind = "output_text" if role == "assistant" else "input_text"
        self._add("response_item", {"type": "message", "role": role, "content": [{"type": kind, "text": text}]})

    def exchange(self, prompt, replies, outputs) -> None:
        self._message("user", prompt)
        self._add("event_msg", {"type": "user_message", "message": prompt, "images": []})
        for output in outputs:
            call = f"call_{self.rng.getrandbits(48):x}"
            self._add("response_item", {"type": "function_call", "name": "exec_command", "call_id": call,
                                        "arguments": json.dumps({"cmd": self.rng.choice(COMMANDS).format(svc="api")})})
            self._add("response_item", {"type": "function_call_output", "call_id": call, "output": output})
        for reply in replies:
            self._message("assistant", reply)
        self._add("event_msg", {"type": "token_count", "info": None})


def write_archive(folder: str, windows: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    typical, large = corpus(windows - windows // 50, windows // 50, seed=seed)
    pool = typical + large
    rng.shuffle(pool)
    paths = []
    for start in range(0, len(pool), PER_SESSION):
        session = str(uuidlib.UUID(int=rng.getrandbits(128)))
        codex = (start // PER_SESSION) % 10 == 9
        name = f"rollout-2026-03-02T09-00-00-{session}.jsonl" if codex else f"{session}.jsonl"
        path = os.path.join(folder, "codex" if codex else "claude", name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8") as handle:
            writer = (_CodexWriter if codex else _ClaudeWriter)(handle, rng, session)
            for window in pool[start:start + PER_SESSION]:
                writer.exchange(*_exchange(window, rng))
        paths.append(path)
    return paths


def windows_as_jsonl(paths, target: str) -> tuple[int, float]:
    """The archive's windows as the reader builds them, one JSON line each; (count, CPU seconds to read)."""
    from gate.transcripts import exchanges, read_transcript

    count, started, found = 0, time.process_time(), []
    for path in paths:
        found.extend(e.window for e in exchanges(read_transcript(path, final=True).entries))
    elapsed = time.process_time() - started
    with open(target, "w", encoding="utf-8") as handle:
        for window in found:
            handle.write(json.dumps(window, ensure_ascii=False) + "\n")
            count += 1
    return count, elapsed


def timed(argv, stdin_path=None) -> tuple[float, float]:
    """(wall seconds, CPU seconds) of one run. CPU time is what a shared, busy machine
    does not inflate: the comparison is made on it, wall time is shown beside it."""
    stdin = open(stdin_path, "rb") if stdin_path else subprocess.DEVNULL
    try:
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        started = time.perf_counter()
        proc = subprocess.run(argv, stdin=stdin, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, cwd=ROOT)
        elapsed = time.perf_counter() - started
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
    finally:
        if stdin_path:
            stdin.close()
    if proc.returncode not in (0, 1):
        sys.exit(f"{' '.join(argv)} failed: {proc.stderr.decode('utf-8', 'replace')[-500:]}")
    return elapsed, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rules", default=None, help="rules file (default: newest in rules/)")
    parser.add_argument("--windows", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--seed", type=int, default=5)
    parser.add_argument("--keep", help="write the archive here and keep it")
    args = parser.parse_args(argv)
    rules = args.rules or newest_rules()
    folder = args.keep or tempfile.mkdtemp(prefix="gate-replay-bench-")
    try:
        archive = os.path.join(folder, "archive")
        paths = write_archive(archive, args.windows, args.seed)
        size = sum(os.path.getsize(p) for p in paths)
        jsonl = os.path.join(folder, "windows.jsonl")
        count, read_seconds = windows_as_jsonl(paths, jsonl)
        gate = gate_command()
        timed(gate + ["classify", "--rules", rules], stdin_path=os.devnull)  # warm the compiled-rules cache
        classify, replay = [], []
        for _ in range(args.runs):  # interleaved, so a busy moment of the machine hits both alike
            classify.append(timed(gate + ["classify", "--rules", rules, jsonl]))
            replay.append(timed(gate + ["replay", archive, "--rules", rules, "--recent-shapes", "0",
                                        "--no-progress", "--format", "json"]))
        print(f"archive: {len(paths)} session files, {size / 1e6:.1f} MB, {count:,} windows "
              f"(windows.jsonl {os.path.getsize(jsonl) / 1e6:.1f} MB); rules {os.path.relpath(rules, ROOT)}")
        print(f"reading and windowing the archive alone: {read_seconds:.2f} s CPU ({count / read_seconds:,.0f} windows/s)")
        print(f"{'command':<30} {'CPU s median':>12} {'min':>6} {'windows/s':>10} {'wall s':>7}   CPU s per run")
        ratios = {}
        for name, runs in (("gate classify windows.jsonl", classify), ("gate replay ARCHIVE", replay)):
            cpu = [x[1] for x in runs]
            median, least = statistics.median(cpu), min(cpu)
            ratios.setdefault("median", []).append(median)
            ratios.setdefault("min", []).append(least)
            print(f"{name:<30} {median:>12.2f} {least:>6.2f} {count / median:>10,.0f} "
                  f"{statistics.median(x[0] for x in runs):>7.2f}   " + " ".join(f"{x:.2f}" for x in cpu))
        print("replay / classify, CPU: " + ", ".join(f"{k} {v[1] / v[0]:.2f}" for k, v in ratios.items())
              + "  (target: at most 1.20; the least of several runs is the one other work disturbed least)")
        return 0
    finally:
        if not args.keep:
            shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())

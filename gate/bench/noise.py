"""Seeded, realistic noise turns interleaved between a conversation's real turns, tagged by kind.

What a coding assistant's sessions really send besides knowledge: training heartbeats in the formats
of common trainers, N-of-M progress counters, monitoring lines, tool output, and "still running"
acknowledgements. Numbers, tools, units and phrasing vary from frame to frame, and heartbeats,
counters and monitoring come in bursts of successive frames, as they do in a session. The same seed
and conversation always give the same noise in the same places.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

KINDS = ("training-heartbeat", "progress-counter", "monitoring", "tool-output", "still-running")
_BURSTY = {"training-heartbeat": 4, "progress-counter": 3, "monitoring": 3}  # most frames in a burst


@dataclass(frozen=True)
class NoiseItem:
    id: str  # noise:<sample_id>:<n>
    kind: str
    window: tuple  # ({role, content}, ...)


def interleave(conversation, rate: float, seed: int) -> list:
    """The conversation's turns with noise between them: a list of Turn and NoiseItem.

    `rate` is noise turns per real turn (0.3: 3 noise turns for every 10 real ones)."""
    turns = list(conversation.turns)
    if rate <= 0 or not turns:
        return turns
    rng = random.Random(f"{seed}:{conversation.sample_id}")
    wanted = round(rate * len(turns))
    bursts, made = [], 0
    while made < wanted:
        kind = rng.choice(KINDS)
        size = min(wanted - made, rng.randint(1, _BURSTY.get(kind, 1)))
        bursts.append(_burst(kind, size, rng))
        made += size
    slots = sorted(rng.randint(0, len(turns)) for _ in bursts)  # a burst goes before turn `slot`
    out, n, burst_at = [], 0, 0
    for index in range(len(turns) + 1):
        while burst_at < len(slots) and slots[burst_at] == index:
            for kind, window in bursts[burst_at]:
                out.append(NoiseItem(id=f"noise:{conversation.sample_id}:{n}", kind=kind, window=window))
                n += 1
            burst_at += 1
        if index < len(turns):
            out.append(turns[index])
    return out


def _burst(kind: str, size: int, rng: random.Random) -> list:
    make = _MAKERS[kind]
    state = make(None, rng)
    frames = [state]
    for _ in range(size - 1):
        state = make(state, rng)
        frames.append(state)
    return [(kind, frame.window) for frame in frames]


@dataclass(frozen=True)
class _Frame:
    window: tuple
    memo: dict  # what the next frame of the burst continues from


def _text(role: str, text: str) -> tuple:
    return ({"role": role, "content": text},)


def _tool_result(text: str) -> tuple:
    # How Claude Code sends tool output: a user-role turn holding a tool_result block.
    return ({"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_bench", "content": text}]},)


# -- training heartbeats ---------------------------------------------------------------------------

def _heartbeat(prev: _Frame | None, rng: random.Random) -> _Frame:
    if prev is None:
        memo = {"style": rng.randrange(6), "epochs": rng.choice([3, 5, 10, 20, 40, 100]),
                "steps": rng.choice([250, 782, 1563, 3125, 9000, 12000]), "loss": rng.uniform(0.6, 3.2),
                "lr": rng.choice([1e-3, 3e-4, 2e-5, 5e-5, 1e-4])}
        memo["epoch"] = rng.randint(1, memo["epochs"])
        memo["step"] = rng.randint(1, memo["steps"] - 1)
    else:
        memo = dict(prev.memo)
        memo["step"] = min(memo["steps"], memo["step"] + rng.randint(10, max(11, memo["steps"] // 20)))
        memo["loss"] *= rng.uniform(0.93, 1.01)
    m = memo
    pct = int(100 * m["step"] / m["steps"])
    rate = rng.uniform(1.2, 18.0)
    left = (m["steps"] - m["step"]) / rate
    bar = "█" * (pct // 10) + "▌" * (pct % 10 >= 5) + " " * (10 - pct // 10 - (pct % 10 >= 5))
    style = m["style"]
    if style == 0:  # tqdm / Lightning
        text = (f"Epoch {m['epoch']}: {pct:3d}%|{bar}| {m['step']}/{m['steps']} [{_clock(m['step'] / rate)}<"
                f"{_clock(left)}, {rate:.2f}it/s, loss={m['loss']:.3g}, v_num={rng.randint(0, 40)}]")
    elif style == 1:  # Hugging Face Trainer log dict
        text = (f"{{'loss': {m['loss']:.4f}, 'grad_norm': {rng.uniform(0.2, 9):.4f}, "
                f"'learning_rate': {m['lr'] * rng.uniform(0.3, 1):.3e}, 'epoch': {m['epoch'] - 1 + m['step'] / m['steps']:.2f}}}")
    elif style == 2:  # a hand-rolled training loop
        text = (f"step {m['step'] + (m['epoch'] - 1) * m['steps']} | loss {m['loss']:.4f} | lr {m['lr']:.1e} | "
                f"{rng.randint(9000, 160000):,} tok/s | mem {rng.uniform(9, 78):.1f}GB")
    elif style == 3:  # Keras
        done = int(30 * m["step"] / m["steps"])
        text = (f"{m['step']}/{m['steps']} [{'=' * done}>{'.' * (29 - done)}] - ETA: {_clock(left)} - "
                f"loss: {m['loss']:.4f} - accuracy: {rng.uniform(0.55, 0.97):.4f}")
    elif style == 4:  # xgboost / lightgbm
        text = (f"[{m['step']}]\tvalidation_0-logloss:{m['loss'] / 4:.5f}\t"
                f"validation_1-logloss:{m['loss'] / 4 + rng.uniform(0, 0.02):.5f}")
    else:  # several frames pasted at once
        lines = []
        step = m["step"]
        for _ in range(rng.randint(3, 6)):
            step = min(m["steps"], step + rng.randint(5, 50))
            lines.append(f"[train] epoch={m['epoch']} iter={step}/{m['steps']} loss={m['loss'] * rng.uniform(0.97, 1.03):.4f} "
                         f"eta={_clock((m['steps'] - step) / rate)}")
        memo["step"] = step
        text = "\n".join(lines)
    role = rng.choice(["user", "assistant", "tool"])
    return _Frame(_tool_result(text) if role == "tool" else _text(role, text), memo)


def _clock(seconds: float) -> str:
    seconds = int(max(0, seconds))
    h, rest = divmod(seconds, 3600)
    return f"{h}:{rest // 60:02d}:{rest % 60:02d}" if h else f"{rest // 60:02d}:{rest % 60:02d}"


# -- N-of-M counters -------------------------------------------------------------------------------

_COUNTERS = (
    ("Processed {i}/{n} files", "files"),
    ("[{i:>3}/{n}] Compiling {crate} v{v}", "crates"),
    ("Uploading shard {i} of {n} ({pct}%)", "shards"),
    ("Resolving deltas: {pct}% ({i}/{n})", "deltas"),
    ("Downloading chunk {i}/{n} — {mb} MB", "chunks"),
    ("Indexed {i} of {n} documents", "docs"),
    ("migrating rows: {i}/{n} ({pct}%)", "rows"),
    ("Test {i} of {n} passed", "tests"),
)
_CRATES = ("serde", "tokio", "syn", "regex", "hyper", "rand", "clap", "anyhow", "tracing", "reqwest")


def _counter(prev: _Frame | None, rng: random.Random) -> _Frame:
    if prev is None:
        memo = {"template": rng.randrange(len(_COUNTERS)), "n": rng.choice([12, 48, 120, 640, 2000, 15873])}
        memo["i"] = rng.randint(1, max(1, memo["n"] // 2))
    else:
        memo = dict(prev.memo)
        memo["i"] = min(memo["n"], memo["i"] + rng.randint(1, max(1, memo["n"] // 10)))
    template, _ = _COUNTERS[memo["template"]]
    text = template.format(i=memo["i"], n=memo["n"], pct=int(100 * memo["i"] / memo["n"]),
                           crate=rng.choice(_CRATES), v=f"{rng.randint(0, 2)}.{rng.randint(0, 40)}.{rng.randint(0, 12)}",
                           mb=f"{rng.uniform(1, 512):.1f}")
    if rng.random() < 0.3:
        text = f"{text}\n{template.format(i=min(memo['n'], memo['i'] + 1), n=memo['n'], pct=int(100 * (memo['i'] + 1) / memo['n']), crate=rng.choice(_CRATES), v='1.0.0', mb='4.0')}"
    role = rng.choice(["assistant", "tool", "user"])
    return _Frame(_tool_result(text) if role == "tool" else _text(role, text), memo)


# -- monitoring ------------------------------------------------------------------------------------

_SERVICES = ("api-gateway", "billing-worker", "search-svc", "auth", "ingest-queue", "web-frontend", "redis-cache")


def _monitoring(prev: _Frame | None, rng: random.Random) -> _Frame:
    memo = dict(prev.memo) if prev else {"style": rng.randrange(4), "host": f"node-{rng.randint(1, 24)}",
                                         "minute": rng.randint(0, 59), "hour": rng.randint(0, 23)}
    memo["minute"] = (memo["minute"] + rng.randint(1, 5)) % 60
    stamp = f"2026-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}T{memo['hour']:02d}:{memo['minute']:02d}:{rng.randint(0, 59):02d}Z"
    style = memo["style"]
    if style == 0:
        text = (f"{stamp} INFO {memo['host']} cpu={rng.uniform(3, 99):.1f}% mem={rng.uniform(0.4, 61):.1f}GiB "
                f"load={rng.uniform(0.1, 16):.2f} disk={rng.randint(20, 97)}%")
    elif style == 1:
        text = (f"[health] {rng.choice(_SERVICES)} {rng.choice(['200 OK', '200 OK', '503 Service Unavailable'])} "
                f"p50={rng.randint(8, 90)}ms p99={rng.randint(100, 2400)}ms rps={rng.randint(40, 9000)}")
    elif style == 2:
        lines = [f"| {g}  NVIDIA A100-SXM4-80GB  On | {rng.randint(30, 84)}C P0 {rng.randint(90, 400)}W / 400W | "
                 f"{rng.randint(1000, 80000)}MiB / 81920MiB | {rng.randint(0, 100)}% Default |" for g in range(rng.randint(2, 4))]
        text = "\n".join(lines)
    else:
        text = "\n".join(f"{stamp} {rng.choice(['WARN', 'INFO', 'INFO'])} {rng.choice(_SERVICES)}: "
                         f"queue_depth={rng.randint(0, 5000)} lag_ms={rng.randint(0, 90000)} consumers={rng.randint(1, 12)}"
                         for _ in range(rng.randint(2, 5)))
    role = rng.choice(["tool", "assistant"])
    return _Frame(_tool_result(text) if role == "tool" else _text(role, text), memo)


# -- tool output -----------------------------------------------------------------------------------

def _tool_output(prev: _Frame | None, rng: random.Random) -> _Frame:
    choice = rng.randrange(6)
    if choice == 0:
        passed, failed = rng.randint(12, 900), rng.choice([0, 0, 1, 3])
        text = ("".join(rng.choice("....F.s") for _ in range(rng.randint(20, 70))) +
                f"\n{'=' * 20} {passed} passed" + (f", {failed} failed" if failed else "") +
                f", {rng.randint(0, 9)} skipped in {rng.uniform(0.4, 180):.2f}s {'=' * 20}")
    elif choice == 1:
        files = rng.sample(["src/app.py", "src/db/models.py", "tests/test_api.py", "README.md", "package.json",
                            "web/src/App.tsx", "Cargo.toml", "cmd/server/main.go", "infra/main.tf"], rng.randint(1, 4))
        text = (f"On branch {rng.choice(['main', 'feat/search', 'fix/login-timeout', 'dev'])}\n"
                "Changes not staged for commit:\n" + "\n".join(f"\tmodified:   {f}" for f in files))
    elif choice == 2:
        text = (f"added {rng.randint(1, 900)} packages, and audited {rng.randint(900, 2400)} packages in {rng.randint(2, 90)}s\n\n"
                f"{rng.randint(50, 300)} packages are looking for funding\n  run `npm fund` for details\n\n"
                f"found {rng.choice([0, 0, 2, 5])} vulnerabilities")
    elif choice == 3:
        step = rng.randint(1, 9)
        text = "\n".join(f"#{step + k} [{rng.choice(['builder', 'runtime'])} {k + 1}/{rng.randint(6, 12)}] "
                         f"{rng.choice(['RUN pip install -r requirements.txt', 'COPY . /app', 'RUN npm ci', 'WORKDIR /srv'])}\n"
                         f"#{step + k} DONE {rng.uniform(0.1, 40):.1f}s" for k in range(rng.randint(2, 4)))
    elif choice == 4:
        text = "NAME                          READY   STATUS    RESTARTS   AGE\n" + "\n".join(
            f"{rng.choice(_SERVICES)}-{rng.randint(10000, 99999):x}-{rng.randint(1000, 9999)}   1/1     "
            f"{rng.choice(['Running', 'Running', 'Pending', 'CrashLoopBackOff'])}   {rng.randint(0, 7)}          {rng.randint(1, 59)}m"
            for _ in range(rng.randint(2, 6)))
    else:
        text = "\n".join(f"-rw-r--r--  1 dev  staff  {rng.randint(90, 90000):>6} Nov {rng.randint(1, 30):>2} "
                         f"{rng.randint(0, 23):02d}:{rng.randint(0, 59):02d} {name}"
                         for name in rng.sample(["setup.cfg", "main.py", "utils.py", "config.yaml", "Makefile",
                                                 "poetry.lock", "notes.txt", "schema.sql"], rng.randint(3, 7)))
    if rng.random() < 0.5:
        return _Frame(_tool_result(text), {})
    # pasted into the conversation instead, as text a person or the assistant relays
    return _Frame(_text(rng.choice(["assistant", "user"]), text), {})


# -- still running ---------------------------------------------------------------------------------

_ACKS = (
    "Still running — epoch {a} of {b}, about {m} min left.",
    "It's still going, {p}% done. I'll check again in {m} minutes.",
    "Build still in progress (step {a}/{b}).",
    "still waiting on the job, {a} of {b} shards finished",
    "The migration is still running; {p}% of rows copied so far.",
    "Tests are still running ({a}/{b}), nothing failed yet.",
    "ok still downloading, ~{m}min to go",
)


def _still_running(prev: _Frame | None, rng: random.Random) -> _Frame:
    b = rng.randint(4, 60)
    text = rng.choice(_ACKS).format(a=rng.randint(1, b - 1), b=b, m=rng.randint(2, 95), p=rng.randint(3, 97))
    return _Frame(_text(rng.choice(["assistant", "assistant", "user"]), text), {})


_MAKERS = {"training-heartbeat": _heartbeat, "progress-counter": _counter, "monitoring": _monitoring,
           "tool-output": _tool_output, "still-running": _still_running}

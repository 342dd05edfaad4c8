"""A seeded, realistic corpus of windows, generated from the fixtures.

Used by benchmarks/speed.py and by tests/test_optimizations_equivalence.py.
Windows are built from the fixtures' own turns with numbers, names and tools
varied, 1 to 4 turns each (typical windows stay under 2 KB), plus a tail of
large pastes (logs, code, configs, progress output, prose, minified JSON) up
to 50 KB. The same seed always gives the same corpus.
"""

from __future__ import annotations

import glob
import json
import os
import random
import re

import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TYPICAL_MAX = 2048  # bytes of text in a typical window
LARGE_MIN, LARGE_MAX = 4_096, 50_000

# Words swapped for others of their kind, so a generated window is not a fixture verbatim.
SWAPS = {
    "tool": ["kubectl", "docker", "helm", "terraform", "npm", "pnpm", "yarn", "pip", "uv", "poetry", "cargo",
             "make", "pytest", "psql", "redis-cli", "gh", "aws", "gcloud"],
    "service": ["api", "worker", "billing", "auth", "ingest", "orders", "search", "payments", "gateway",
                "scheduler", "notifier", "exporter", "reports", "checkout", "inventory"],
    "env": ["staging", "prod", "production", "dev", "qa", "sandbox", "preview"],
    "store": ["postgres", "redis", "mysql", "mongo", "kafka", "rabbitmq", "sqlite", "dynamo", "s3", "elasticsearch"],
    "name": ["alice", "bob", "priya", "chen", "maria", "omar", "lena", "sam", "yuki", "dmitri"],
}
_SWAP_RE = {kind: re.compile(r"\b(" + "|".join(map(re.escape, words)) + r")\b", re.IGNORECASE)
            for kind, words in SWAPS.items()}
_NUMBER = re.compile(r"\d+")


def fixture_windows(root: str = ROOT) -> list[list[dict]]:
    """Every fixture's window, in file order (turns as {role, content, ...})."""
    windows = []
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    for path in sorted(glob.glob(os.path.join(root, "fixtures", "*.yaml"))):
        with open(path, encoding="utf-8") as handle:
            for entry in yaml.load(handle, Loader=loader) or ():
                windows.append(entry["window"])
    return windows


def _number(digits: int, rng: random.Random) -> str:
    """A random number with as many digits (so widths and shapes stay the same)."""
    first = str(rng.randrange(1, 10)) if digits > 1 else str(rng.randrange(10))
    return first + "".join(rng.choice("0123456789") for _ in range(digits - 1))


def vary(text: str, rng: random.Random) -> str:
    """Numbers, names, tools and services changed; shape and wording kept."""
    text = _NUMBER.sub(lambda m: _number(len(m.group()), rng), text)
    for kind, pattern in _SWAP_RE.items():
        choice = rng.choice(SWAPS[kind])
        text = pattern.sub(lambda m, c=choice: c.capitalize() if m.group()[0].isupper() else c, text)
    return text


def _vary_turn(turn, rng):
    turn = dict(turn)
    content = turn.get("content")
    if isinstance(content, str):
        turn["content"] = vary(content, rng)
    elif isinstance(content, list):
        turn["content"] = [dict(b, text=vary(b["text"], rng)) if isinstance(b, dict) and isinstance(b.get("text"), str)
                           else b for b in content]
    return turn


def _size(window) -> int:
    return len(json.dumps(window, ensure_ascii=False))


def typical_window(pool, rng: random.Random) -> list[dict]:
    """1 to 4 turns: a fixture window, topped up with turns of others, under TYPICAL_MAX."""
    want = rng.choices((1, 2, 3, 4), weights=(35, 30, 20, 15))[0]
    base = [_vary_turn(t, rng) for t in rng.choice(pool)][:want]
    while len(base) < want:
        donor = rng.choice(pool)
        base.append(_vary_turn(rng.choice(donor), rng))
    while len(base) > 1 and _size(base) > TYPICAL_MAX:
        base.pop()
    if _size(base) > TYPICAL_MAX:  # one very long fixture turn: cut it to size
        turn = base[0]
        if isinstance(turn.get("content"), str):
            base = [dict(turn, content=turn["content"][:TYPICAL_MAX - 200])]
    return base


# -- the tail: large pastes ------------------------------------------------------

def _log_lines(rng, size):
    levels = ("INFO", "DEBUG", "WARN", "ERROR")
    lines, total = [], 0
    while total < size:
        line = (f"2026-11-{rng.randrange(1, 29):02d} {rng.randrange(24):02d}:{rng.randrange(60):02d}:"
                f"{rng.randrange(60):02d} {rng.choice(levels)} {rng.choice(SWAPS['service'])} "
                f"request_id={rng.getrandbits(64):016x} latency_ms={rng.randrange(1, 900)} status={rng.choice((200, 201, 404, 500))}")
        lines.append(line)
        total += len(line) + 1
    return "\n".join(lines)


def _heartbeats(rng, size):
    lines, total, step = [], 0, 0
    while total < size:
        step += rng.randrange(10, 200)
        line = (f"Epoch {rng.randrange(1, 20)}/20 step {step}/100000 loss {rng.random():.4f} "
                f"lr {rng.random() / 1000:.2e} {rng.uniform(1, 30):.2f} it/s ETA {rng.randrange(60)}:{rng.randrange(60):02d}")
        lines.append(line)
        total += len(line) + 1
    return "\n".join(lines)


def _code(rng, size):
    parts, total, n = [], 0, 0
    while total < size:
        n += 1
        name = f"{rng.choice(SWAPS['service'])}_{n}"
        block = (f"def {name}(config, retries={rng.randrange(1, 9)}):\n"
                 f"    \"\"\"Handle {name} for the {rng.choice(SWAPS['env'])} cluster.\"\"\"\n"
                 f"    for attempt in range(retries):\n"
                 f"        result = client.call('{name}', timeout={rng.randrange(1, 60)})\n"
                 f"        if result.ok:\n            return result.value\n"
                 f"    raise RuntimeError('{name} failed after %d attempts' % retries)\n\n")
        parts.append(block)
        total += len(block)
    return "```python\n" + "".join(parts) + "```"


def _config(rng, size):
    lines, total = [], 0
    while total < size:
        line = f"{rng.choice(SWAPS['service'])}_{rng.randrange(1000)}: {rng.choice(('true', 'false', rng.randrange(10000)))}"
        lines.append(str(line))
        total += len(lines[-1]) + 1
    return "\n".join(lines)


def _prose(rng, pool, size):
    texts, total = [], 0
    flat = [t for w in pool for t in w if isinstance(t.get("content"), str)]
    while total < size:
        text = vary(rng.choice(flat)["content"], rng)
        texts.append(text)
        total += len(text) + 2
    return "\n\n".join(texts)


def _minified_json(rng, size):
    items, total = [], 0
    while total < size:
        item = {"id": rng.getrandbits(48), "service": rng.choice(SWAPS["service"]), "ok": rng.random() > 0.1,
                "latency": round(rng.random() * 100, 3), "tags": [rng.choice(SWAPS["env"]) for _ in range(3)]}
        items.append(item)
        total += 120
    return json.dumps({"items": items}, separators=(",", ":"))


def _markdown_doc(rng, size):
    parts, total, n = ["# Project guide\n"], 0, 0
    while total < size:
        n += 1
        block = (f"\n## Section {n}: {rng.choice(SWAPS['service'])}\n\n"
                 f"- Use {rng.choice(SWAPS['tool'])} for builds\n- Never edit generated files\n"
                 f"- Run `make test` before pushing\n\n| key | value |\n|---|---|\n| owner | {rng.choice(SWAPS['name'])} |\n")
        parts.append(block)
        total += len(block)
    return "".join(parts)


LARGE_KINDS = ("log", "heartbeat", "code", "config", "prose", "json", "markdown")


def large_window(pool, rng: random.Random, kind: str | None = None) -> list[dict]:
    """A window with one large paste (4 KB to 50 KB) and, usually, a short turn beside it."""
    kind = kind or rng.choice(LARGE_KINDS)
    size = int(rng.uniform(LARGE_MIN, LARGE_MAX))
    paste = {"log": lambda: _log_lines(rng, size), "heartbeat": lambda: _heartbeats(rng, size),
             "code": lambda: _code(rng, size), "config": lambda: _config(rng, size),
             "prose": lambda: _prose(rng, pool, size), "json": lambda: _minified_json(rng, size),
             "markdown": lambda: _markdown_doc(rng, size)}[kind]()[:LARGE_MAX]
    role = rng.choice(("user", "assistant", "tool"))
    window = [{"role": role, "content": paste}]
    if rng.random() < 0.7:
        window.insert(rng.randrange(2), _vary_turn(rng.choice(rng.choice(pool)), rng))
    return window


def corpus(n_typical: int, n_large: int, seed: int = 5, root: str = ROOT):
    """(typical windows, large windows), both seeded."""
    rng = random.Random(seed)
    pool = fixture_windows(root)
    typical = [typical_window(pool, rng) for _ in range(n_typical)]
    large = [large_window(pool, rng, LARGE_KINDS[i % len(LARGE_KINDS)]) for i in range(n_large)]
    return typical, large


# -- text that is not plain ASCII ---------------------------------------------------------

# What windows carry beyond ASCII, in the shares a developer's sessions have it:
# accented words and names, a CJK or Cyrillic phrase, no-break spaces; and, rarer,
# the characters two regex engines read differently (fullwidth and Arabic-Indic
# digits, Unicode line breaks, letters that case-fold to ASCII).
_ACCENTED = {"e": "é", "a": "à", "o": "ö", "u": "ü", "c": "ç", "n": "ñ", "i": "ï", "E": "É", "A": "Å"}
_PHRASES = ("日志已轮换", "не трогать", "ビルド完了", "straße", "naïve", "Ünïcödé", "café", "Ελληνικά")
_ODD = (" ", "　", " ", "", "１２", "٣٤", "İ", "ı", "ſ", "K", "é", "")


def not_plain(text: str, rng: random.Random) -> str:
    """`text` with a few non-ASCII characters in it, the way real windows have them."""
    chars = list(text)
    for _ in range(rng.randrange(1, 4)):
        if not chars:
            break
        at = rng.randrange(len(chars))
        roll = rng.random()
        if roll < 0.5 and chars[at] in _ACCENTED:
            chars[at] = _ACCENTED[chars[at]]
        elif roll < 0.75:
            chars.insert(at, rng.choice(_PHRASES) + " ")
        elif chars[at] in " \n":
            chars[at] = rng.choice(_ODD[:4])
        else:
            chars.insert(at, rng.choice(_ODD))
    return "".join(chars)


def not_plain_window(window, rng: random.Random) -> list[dict]:
    """The window with its string contents made not plain (see not_plain)."""
    return [dict(t, content=not_plain(t["content"], rng)) if isinstance(t.get("content"), str) else t
            for t in window]


def scrambled(text: str, rng: random.Random) -> str:
    """`text` with up to a dozen edits drawn from every kind of character (any general
    category below U+3000, line and paragraph separators, control and format characters,
    astral symbols) and case flips: not realistic, but where two regex engines differ."""
    chars = list(text)
    for _ in range(rng.randrange(1, 12)):
        at = rng.randrange(len(chars) + 1)
        roll = rng.random()
        if roll < 0.4:
            chars.insert(at, _any_char(rng))
        elif roll < 0.8 and at < len(chars):
            chars[at] = _any_char(rng) if roll < 0.6 else chars[at].swapcase()
        else:
            chars.insert(at, "".join(_any_char(rng) for _ in range(rng.randrange(1, 8))))
    return "".join(chars)


_ENGINES_DIFFER = "\u0130\u0131\u017f\u212a\u00df\u0307\ufb01\u2028\u2029\u0085\x00\x1c\x1d\x1e\x0b\x0c\r" \
                  "\u00a0\u3000\uff10\uff19\u200b\u200d\ufeff\U0001f600\U0001d7ce"


def _any_char(rng: random.Random) -> str:
    if rng.random() < 0.25:
        return rng.choice(_ENGINES_DIFFER)
    code = rng.randrange(0x80, 0x3000)
    return chr(code) if not 0xD800 <= code < 0xE000 else "\ufffd"


def scrambled_window(window, rng: random.Random) -> list[dict]:
    """The window with most of its string contents scrambled (see scrambled)."""
    return [dict(t, content=scrambled(t["content"], rng)) if isinstance(t.get("content"), str)
            and rng.random() < 0.8 else t for t in window]


# -- hostile input, for the equivalence test ------------------------------------------

def hostile_windows(seed: int = 7) -> list:
    """Odd shapes, odd characters and pathological sizes a hook may hand over."""
    rng = random.Random(seed)
    specials = "\u0130\u0131\u017f\u212a\u00df\u0307\ufb01\u2028\u0085\x00\x1c\ud800"
    out = [None, 42, "I prefer tabs", [], [{"role": "user"}], {"messages": [{"role": "user", "content": "x"}]},
           [1, None, "x", [{"a": 1}]], [{"role": "tool", "content": [{"type": "tool_use"}]}],
           [{"role": "user", "content": "epoch " * 20_000}],
           [{"role": "user", "content": "a" * 50_000 + "!"}],
           [{"role": "user", "content": "1/2 " * 10_000}],
           [{"role": "user", "content": "[" * 5000 + "]" * 5000}],
           [{"role": "user", "content": "\n" * 20_000}],
           [{"role": "assistant", "content": "# h\n- a\n" * 3000}],
           [{"role": "user", "content": "I ſtill prefer rebaſe; we DECIDED on \u212aafka. ſk-" + "A" * 30}],
           [{"role": "user", "content": "PASSWORD=\u0130nternal-\u017fecret-12345 and tokeN: abcdefghijkl"}]]
    words = "we decided always never because epoch loss step prefer kubectl deploy secret token the so is".split()
    for _ in range(60):
        chars = [rng.choice(words) if rng.random() < 0.6 else rng.choice(specials + "0123456789 \n\t|%[]:=-/.")
                 for _ in range(rng.randrange(1, 400))]
        text = " ".join(chars) if rng.random() < 0.5 else "".join(chars)
        out.append([{"role": rng.choice(("user", "assistant", "tool", "system", "narrator")), "content": text}])
    return out

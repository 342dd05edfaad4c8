"""A tiny rules file (with comments) and a tiny labeled corpus for the `gate fit` tests:
small enough that a nested cross-validated fit takes a second or two."""

from __future__ import annotations

from pathlib import Path

import yaml

from enginekit import drop_rule, dump, match, revision_doc, signal

SCHEMA_LINE = "# yaml-language-server: $schema=../schemas/rules.schema.json\n"
HEADER = "# a test revision for gate fit\n# this comment must survive the fit\n\n"


def rules_text(*, fixed_signal: bool = True, negative_because: bool = True) -> str:
    signals = [
        signal("prefer", match(r"\bprefer\b"), {"preference": 3}, role="user", match=("I prefer tabs",)),
        signal("switched", match(r"\b(?:switched|moved)\b"), {"decision": 3}, role="user",
               match=("we switched to uv",)),
        signal("lives-under", match(r"\b(?:lives|live|goes|go) under\b"), {"convention": 3}, role="user",
               match=("tests live under tests/",)),
        signal("because", match(r"\bbecause\b"), {"all_types": -1}, role="user", match=("because of it",)),
        signal("question", match(r"\?"), {"all_types": -3}, role="user", match=("why?",)),
        signal("long-statement", {"prose_words": {"min": 8}}, {"all_types": 1}, role="user",
               match=("one two three four five six seven eight",), no_match=("short",)),
    ]
    if negative_because:
        signals[3]["fit"] = {"sign": "negative"}
    if fixed_signal:
        signals[5]["fit"] = {"fixed": True}
    doc = revision_doc(
        drop_rules=[drop_rule("heartbeat", match(r"\bepoch\s+\d+/\d+"), scope="turn", match=("epoch 3/10",),
                              no_match=("an epoch",))],
        signals=signals)
    text = dump(doc)
    # an inline comment, a description and the examples must all come through
    text = text.replace("default_level: balanced\n", "default_level: balanced  # the level hooks use\n")
    return SCHEMA_LINE + HEADER + text


_PEOPLE = ["the api", "billing", "the cli", "search", "the worker", "payments", "the docs site", "auth"]
_TOOLS = ["uv", "ruff", "postgres", "redis", "pnpm", "vite", "terraform", "docker"]
_WHY = ["the old setup kept breaking on my laptop", "nightly jobs timed out twice a week",
        "reviewers could not reproduce failures", "cold starts took most of a minute",
        "the lockfile drifted between machines", "memory spiked during every deploy",
        "half the team uses windows", "our auditors asked for one place"]


def corpus() -> list[list[dict]]:
    """Labeled windows in a few shapes, in groups of one of each shape (one per area)."""
    out = []
    for i, (area, tool) in enumerate(zip(_PEOPLE, _TOOLS)):
        out += [[
            _fx(f"pref-{i}", f"I prefer {tool} for {area} because {_WHY[i]}",
                "extract", "preference"),
            _fx(f"dec-{i}", f"we switched {area} to {tool} last sprint because {_WHY[(i + 3) % 8]}",
                "extract", "decision"),
            _fx(f"conv-{i}", f"every config file for {area} lives under config/{tool}, since {_WHY[(i + 5) % 8]}",
                "extract", "convention"),
            _fx(f"ask-{i}", f"can you run the {tool} checks on {area} now and tell me what fails?", "exclude", None),
            _fx(f"do-{i}", f"please open the {tool} file for {area} and fix the typo on line {i + 3}", "exclude", None),
            _fx(f"hb-{i}", f"{tool} epoch {i + 1}/20 loss 0.{40 - i} eta {i + 2}m", "drop", None),
        ]]
    return out


def _fx(id, text, label, type_):
    return {"id": id, "window": [{"role": "user", "content": text}], "label": label, "expect_type": type_,
            "note": f"fit test: {label} in a plain shape"}


def write_corpus(directory: Path, parts: int = 4) -> list[Path]:
    """The corpus split over `parts` files, every shape in each (a fixture file is a
    source, so grouped folds need several)."""
    areas = corpus()
    paths = []
    Path(directory).mkdir(parents=True, exist_ok=True)
    for part in range(parts):
        path = Path(directory) / f"fit_part{part}.yaml"
        items = [item for group in areas[part::parts] for item in group]
        path.write_text(yaml.safe_dump(items, sort_keys=False), encoding="utf-8")
        paths.append(path)
    return paths

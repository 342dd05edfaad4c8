"""The new repository's first revision: the newest shipped one under its own name.

Edited as text, not dumped from the parsed data, so every rule's comments and
layout survive: only the leading comment block, the `revision:` line and the
top-level `description` change. The result is loaded back and must behave
exactly like its source (same canonical content but for the name).
"""

from __future__ import annotations

import re
import textwrap

from gate.language.errors import GateError, Problem
from gate.language.loader import load_revision

SCHEMA_LINE = "# yaml-language-server: $schema=../schemas/rules.schema.json"

_HEADER = """\
{schema_line}
# {name}: this repository's first revision of its gate rules, written by
# `gate init` from gate's shipped revision {source} (policy {source_policy}).
#
# Both halves of the gate live here: drop_rules strip or drop mechanical noise
# before anything leaves the machine; signals score durable knowledge toward a
# memory type; instructions are what the platform's extractor follows. Edit it
# as data in a pull request: `gate lint`, `gate eval --check`, and
# `gate diff HEAD~1:rules/{name}.yaml rules/{name}.yaml`. The why of each rule
# lives in its description.
"""

_TOP_KEY = re.compile(r"^(?P<key>[A-Za-z_][\w-]*)\s*:")


def first_revision(source_text: str, source_path: str, *, name: str, day: str) -> tuple[str, str, str]:
    """(the new revision's YAML text, its policy id, the source's revision name).
    Raises GateError when the source does not load or the copy would not behave
    like it (a bug here)."""
    source = load_revision(source_path, text=source_text)
    lines = source_text.splitlines()
    body_start = next((i for i, line in enumerate(lines) if line.strip() and not line.startswith("#")), len(lines))
    body = lines[body_start:]
    body = _replace_key(body, "revision", [f"revision: {name}"], source_path)
    history = (f"{name}: this repository's first revision, gate's shipped {source.revision} (policy "
               f"{source.policy}) as it was, copied by gate init on {day}. History of {source.revision}: "
               f"{_description_of(source_text, source_path)}")
    wrapped = textwrap.wrap(" ".join(history.split()), width=76, break_long_words=False, break_on_hyphens=False)
    body = _replace_key(body, "description", ["description: >-"] + ["  " + line for line in wrapped], source_path)
    header = _HEADER.format(schema_line=SCHEMA_LINE, name=name, source=source.revision, source_policy=source.policy)
    text = header + "\n" + "\n".join(body) + "\n"

    copy = load_revision(f"rules/{name}.yaml", text=text)
    if _without_name(copy.canonical) != _without_name(source.canonical) or copy.revision != name:
        raise GateError(Problem(source_path, f"the copy named {name} would not behave like {source.revision}; "
                                             "please report this as a bug in gate init"))
    return text, copy.policy, source.revision


def _description_of(text: str, path: str) -> str:
    import yaml

    value = yaml.safe_load(text).get("description")
    if not isinstance(value, str):
        raise GateError(Problem(path, "the shipped revision has no description to carry over"))
    return value.strip()


def _replace_key(lines: list[str], key: str, replacement: list[str], path: str) -> list[str]:
    """Replace a top-level key and its value (the lines indented under it) with `replacement`."""
    starts = [i for i, line in enumerate(lines) if (m := _TOP_KEY.match(line)) and m["key"] == key]
    if len(starts) != 1:
        raise GateError(Problem(path, f"expected one top-level '{key}:' line, found {len(starts)}"))
    start = starts[0]
    end = start + 1
    while end < len(lines) and (not lines[end].strip() or lines[end][0] in " \t"):
        end += 1
    while end > start + 1 and not lines[end - 1].strip():  # blank lines after the value stay
        end -= 1
    return lines[:start] + replacement + lines[end:]


def _without_name(canonical: dict) -> dict:
    return {k: v for k, v in canonical.items() if k != "revision"}

"""Candidate fixtures from a replay: a sample of real windows, ready to be labeled.

The sample is stratified so that rare outcomes are seen: flips between the two revisions come
first, then an even share of every (decision, deciding rule) of revision A. Each stratum keeps a
seeded reservoir of (file, exchange key) only; the chosen windows are read back from their files
at the end, so a large archive costs no memory. Exported entries validate against the fixtures
schema: the label is provisional (A's decision), `todo: "label me"` marks them as not yet
judged, the note says what each revision decided, and secrets are redacted.
"""

from __future__ import annotations

import os
import random
import re
from typing import NamedTuple

from gate.transcripts.reader import read_transcript
from gate.transcripts.replay import FLIPS
from gate.transcripts.windows import exchanges

TODO = "label me"
_LABEL = {"drop": "drop", "skip": "exclude", "flag": "extract"}
_SLUG = re.compile(r"[^a-z0-9]+")


class Candidate(NamedTuple):
    path: str
    key: str
    session_id: str
    decisions: list  # (action, type, rule) per revision
    flip: str | None


class CandidateSampler:
    def __init__(self, size: int, seed: int) -> None:
        self.size = size
        self.rng = random.Random(seed)
        self.strata: dict = {}  # stratum -> [windows seen, reservoir of items]

    def offer(self, path, exchange, decisions, flip) -> None:
        a = decisions[0]
        if flip:
            stratum = (0, FLIPS.index(flip), a.action, decisions[1].action)
        else:
            stratum = (1, a.action, a.rule or "")
        slot = self.strata.get(stratum)
        if slot is None:
            slot = self.strata[stratum] = [0, []]
        slot[0] += 1
        reservoir = slot[1]
        if len(reservoir) < self.size:
            reservoir.append(_candidate(path, exchange, decisions, flip))
        else:
            j = self.rng.randrange(slot[0])
            if j < self.size:
                reservoir[j] = _candidate(path, exchange, decisions, flip)

    def chosen(self) -> list:
        """Up to `size` items: flips first, then the other strata, one from each in turn."""
        picked = []
        for group in (0, 1):
            queues = []
            for stratum in sorted(s for s in self.strata if s[0] == group):
                items = list(self.strata[stratum][1])
                self.rng.shuffle(items)
                queues.append(items)
            while len(picked) < self.size and any(queues):
                for queue in queues:
                    if queue and len(picked) < self.size:
                        picked.append(queue.pop())
        return picked


def _candidate(path, exchange, decisions, flip) -> Candidate:
    return Candidate(path, exchange.key, exchange.session_id, [(d.action, d.type, d.rule) for d in decisions], flip)


def candidate_fixtures(picked, sides, redactor) -> list[dict]:
    """The chosen windows, read back from their files, as fixture entries."""
    by_file: dict = {}
    for item in picked:
        by_file.setdefault(item.path, []).append(item)
    windows = {}
    for path, items in by_file.items():
        wanted = {(item.session_id, item.key) for item in items}
        for exchange in exchanges(read_transcript(path, final=True).entries):
            ident = (exchange.session_id, exchange.key)
            if ident in wanted:
                windows.setdefault((path,) + ident, exchange)
    out, ids = [], set()
    for item in picked:
        exchange = windows.get((item.path, item.session_id, item.key))
        if exchange is None:  # the file changed since it was replayed
            continue
        action, type_, _ = item.decisions[0]
        out.append({
            "id": _unique_id(item.path, exchange.line or exchange.offset, ids),
            "window": [_redacted_turn(t, redactor) for t in exchange.window],
            "label": _LABEL[action],
            "expect_type": type_ if action == "flag" else None,
            "note": _note(item.path, exchange, item.decisions, sides, item.flip),
            "tags": ["replay", "flip"] if item.flip else ["replay"],
            "todo": TODO,
        })
    return out


def _unique_id(path, where, ids) -> str:
    stem = _SLUG.sub("-", os.path.splitext(os.path.basename(path))[0].lower()).strip("-")[:48] or "session"
    base = f"replay-{stem}-{where}"
    ident, n = base, 2
    while ident in ids:
        ident, n = f"{base}-{n}", n + 1
    ids.add(ident)
    return ident


def _cell(summary) -> str:
    action, type_, rule = summary
    return action + (f" {type_}" if type_ else "") + (f" ({rule})" if rule else "")


def _note(path, exchange, summary, sides, flip) -> str:
    where = f"{os.path.basename(path)}:{exchange.line}" if exchange.line else os.path.basename(path)
    said = "; ".join(f"{side.revision.revision} {_cell(s)}" for side, s in zip(sides, summary))
    flipped = f" [{flip}]" if flip else ""
    return (f"replay candidate from {where}: {said}{flipped}. The label is that first decision, "
            f"unchecked: correct it and say which failure this window guards.")


def _redacted_turn(turn: dict, redactor) -> dict:
    out = dict(turn)
    out["content"] = _utf8(redactor.value(turn["content"]) if redactor else turn["content"])
    return out


def _utf8(value):
    """Every string writable as UTF-8: a lone surrogate (JSON may escape one) becomes '?',
    as the classifier reads it; YAML would write it as an escape no YAML reader accepts."""
    if isinstance(value, str):
        return value if value.isascii() else value.encode("utf-8", "replace").decode("utf-8")
    if isinstance(value, list):
        return [_utf8(v) for v in value]
    if isinstance(value, dict):
        return {k: _utf8(v) for k, v in value.items()}
    return value


def write_candidates(path, fixtures) -> None:
    """The fixtures as YAML, multi-line text as literal blocks so a labeler can read it."""
    import yaml

    class _Dumper(yaml.SafeDumper):
        pass

    def _str(dumper, value):
        style = "|" if "\n" in value else None
        return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)

    _Dumper.add_representer(str, _str)
    header = ("# Candidate fixtures exported by `gate replay --export-candidates`: real windows with a\n"
              "# provisional label (the first revision's decision). Label each, fix its note, remove `todo`.\n")
    body = yaml.dump(fixtures, Dumper=_Dumper, sort_keys=False, allow_unicode=True, width=110) if fixtures else "[]\n"
    folder = os.path.dirname(os.path.abspath(path))
    os.makedirs(folder, exist_ok=True)
    tmp = f"{path}.tmp"
    with open(tmp, "w", encoding="utf-8") as handle:
        handle.write(header + body)
    os.replace(tmp, path)

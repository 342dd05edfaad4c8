"""The emulator's deterministic stand-in for the platform's LLM extractor.

It is not a model of quality; it exists so the live path can be exercised end to end:
- each sentence of a user turn (three words or more) becomes a candidate memory;
- once a project has custom instructions, sentences of the noise classes those instructions
  exclude (heartbeats, progress counters, clock-time status, one-off directives) are suppressed,
  which stands in for "the instructions work";
- `leak=True` breaks that on purpose for heartbeats: heartbeat sentences from any turn are
  stored, so a run has something for `noise_leak_count` to find.
"""

from __future__ import annotations

import re

_SENTENCE_SPLIT = re.compile(r"(?<=[.!?])\s+|\n+")

HEARTBEAT = re.compile(
    r"(?i)\bepoch\s*\d|\bETA\b|\b\d+(?:\.\d+)?\s*%|\bit/s\b|\bpid\s*\d+|\bchunks?\b[^.]*\bprocessed\b"
    r"|\bstep\s+\d+\s*/\s*\d+|\bloss\s*[=:]\s*\d|\belapsed\b\s*[=:]?\s*\d")
SESSION_ONLY = re.compile(
    r"(?i)\b\d{1,2}:\d{2}(?::\d{2})?\b|\bthis (?:time|once)\b|\bfor now\b|\bright now\b"
    r"|\b(?:modified|created|deleted):\s|\bstill running\b")

# "moved off X", "no longer use X", "instead of X"...: the new fact supersedes an older one about X
CONTRAST = re.compile(
    r"(?i)\b(?:moved off|moved away from|migrated off|migrated away from|switched from|switched away from"
    r"|no longer use|no longer on|replaced|instead of|stopped using)\s+([\w.\-/]+)")


def sentences(text: str) -> list[str]:
    out = []
    for part in _SENTENCE_SPLIT.split(text or ""):
        s = part.strip(" \t-*•")
        if len(s.split()) >= 3:
            out.append(s)
    return out


def normalise(fact: str) -> str:
    """The dedupe key: case, spacing and trailing punctuation do not make a new fact."""
    return " ".join(fact.lower().split()).rstrip(".!?;: ")


def extract(messages: list, *, instructions_active: bool, leak: bool) -> list[str]:
    facts: list[str] = []
    seen: set[str] = set()

    def keep(s: str) -> None:
        key = normalise(s)
        if key and key not in seen:
            seen.add(key)
            facts.append(s)

    for m in messages:
        role = m.get("role")
        for s in sentences(m.get("content") or ""):
            heartbeat = bool(HEARTBEAT.search(s))
            if leak and heartbeat:
                keep(s)
                continue
            if role != "user":
                continue
            if instructions_active and (heartbeat or SESSION_ONLY.search(s)):
                continue
            keep(s)
    return facts


def superseded_subject(fact: str) -> str | None:
    """The thing a contrasting fact moves away from, lower-cased, if it names one."""
    m = CONTRAST.search(fact)
    if not m:
        return None
    subject = m.group(1).strip(".,;:").lower()
    return subject if len(subject) >= 2 else None

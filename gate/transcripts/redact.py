"""Secrets out of exported text, found by the revision's own secret rule.

An exported candidate becomes a fixture file people read and commit. The secret rule already
says what a credential looks like; its patterns, applied as it applies them, replace each match
with a marker. The rule is the one with `secret` in its id (`secret` in the shipped revisions).
"""

from __future__ import annotations

import regex

from gate.language.patterns import expand

MARK = "[REDACTED]"
WITHHELD = "[REDACTED: text withheld; the secret patterns timed out on it]"
_TIMEOUT = 2.0  # seconds per text: a pathological paste is withheld, not exported unchecked
_PATTERN_KINDS = ("match", "count", "tool_io", "line_share")


class Redactor:
    def __init__(self, patterns) -> None:
        self.patterns = tuple(patterns)

    def __bool__(self) -> bool:
        return bool(self.patterns)

    def text(self, text: str) -> str:
        for pattern in self.patterns:
            try:
                text = pattern.sub(MARK, text, timeout=_TIMEOUT)
            except TimeoutError:
                return WITHHELD
        return text

    def value(self, value):
        """Every string inside `value` (tool inputs are JSON objects) redacted; keys kept."""
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, list):
            return [self.value(v) for v in value]
        if isinstance(value, dict):
            return {k: self.value(v) for k, v in value.items()}
        return value


def secret_redactor(revisions) -> Redactor:
    """A redactor from the secret rules of every revision given (a replay may compare two)."""
    seen, compiled = set(), []
    for revision in revisions:
        for rule in revision.drop_rules:
            if "secret" not in rule.id:
                continue
            for text, case_sensitive in _patterns(rule.when):
                expanded = expand(text, revision.vocabularies, revision.fragments)
                flags = regex.MULTILINE | (0 if case_sensitive else regex.IGNORECASE)
                if (expanded, flags) not in seen:
                    seen.add((expanded, flags))
                    compiled.append(regex.compile(expanded, flags))
    return Redactor(compiled)


def _patterns(condition):
    """(pattern text, case sensitive) of every pattern leaf in a condition tree."""
    if isinstance(condition, list):
        for part in condition:
            yield from _patterns(part)
        return
    if not isinstance(condition, dict):
        return
    for kind, spec in condition.items():
        if kind in ("all", "any", "not"):
            yield from _patterns(spec)
        elif kind in _PATTERN_KINDS and isinstance(spec, dict) and "pattern" in spec:
            texts = spec["pattern"] if isinstance(spec["pattern"], list) else [spec["pattern"]]
            for text in texts:
                yield text, bool(spec.get("case_sensitive", False))

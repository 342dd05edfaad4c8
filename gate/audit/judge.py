"""What a rules revision says about one stored memory's text: its noise markers, its drop rules.

- Noise markers are the revision's patterns that must never appear in a stored memory (the same
  ones a live run counts as leaks), applied case-insensitively, as the live check does.
- The drop verdict runs the revision's drop rules alone (signals are left out: they decide what
  to flag, not what is noise) on the memory's text as one turn of `role`, at `level`: the
  rule that would have kept this text from ever leaving the machine, or None.

A classifier call costs 50-300 µs whatever the text, so two things spare it. Texts that differ
only in their digits (the frames of one heartbeat: `Epoch 3/10 loss=0.41` and `Epoch 7/10
loss=0.18`) share one verdict: the first such text is judged, the others take its answer.
Digits are folded one for one, so lengths, punctuation, case and every letter still count.
And most stored memories are facts no drop rule can fire on: the engine's drop screen
(gate/engine/screen.py) proves that in about a tenth of a classifier call, from the rules'
pattern-set bits and line counts, and only the texts it cannot clear are classified. Noise
markers are searched only in texts holding one of the literals each marker cannot match without.
"""

from __future__ import annotations

import dataclasses
import re

import regex

MARKER_TIMEOUT = 0.05  # seconds per marker and memory; a timed-out marker counts as no hit
_CACHE_LIMIT = 50_000  # verdicts per generation; two generations are kept
_DIGITS = re.compile(r"[0-9]")


class Judge:
    def __init__(self, revision, *, level: str | None = None, role: str = "user", drop_rules: bool = True):
        from gate.engine.compiler import compile_revision
        from gate.engine.screen import DropScreen

        self.level = level or revision.default_level
        self.role = role
        self.marker_ids = tuple(m.id for m in revision.noise_markers)
        self._markers = tuple(_marker_pattern(m.pattern) for m in revision.noise_markers)
        self._literals = _Literals([m.pattern for m in revision.noise_markers])
        self.judges_drops = drop_rules
        self._drops = compile_revision(dataclasses.replace(revision, signals=())) if drop_rules else None
        self._screen = DropScreen(revision, self._drops, self.level) if drop_rules else None
        self._verdicts: dict = {}
        self._older: dict = {}

    def markers(self, text: str) -> int:
        """A bit per noise marker that matches `text` (bit i: self.marker_ids[i])."""
        bits = 0
        for i in _set_bits(self._literals.candidates(text)):
            try:
                if self._markers[i].search(text, timeout=MARKER_TIMEOUT):
                    bits |= 1 << i
            except TimeoutError:
                pass
        return bits

    def drop_rule(self, text: str) -> str | None:
        """The drop rule that would have dropped `text`, or None (always None when not judged)."""
        if self._drops is None:
            return None
        key = _DIGITS.sub("0", text)
        verdict = self._verdicts.get(key, False)
        if verdict is False:
            verdict = self._older.get(key, False)
            if verdict is False:
                verdict = self.judge_drop(text)
            if len(self._verdicts) >= _CACHE_LIMIT:
                self._older, self._verdicts = self._verdicts, {}
            self._verdicts[key] = verdict
        return verdict

    def judge_drop(self, text: str) -> str | None:
        """drop_rule without the shared verdicts: the screen, then the classifier if need be."""
        if not self._screen.might_drop(text, self.role):
            return None
        decision = self._drops.classify([{"role": self.role, "content": text}], self.level)
        return (decision.rule or "(empty)") if decision.action == "drop" else None


def _marker_pattern(pattern: str):
    """A marker's regex as the classifier runs its own (gate/engine/conditions/context.py): on
    a short text, and when it cannot backtrack badly, searched without reading the clock."""
    from gate.engine.conditions.context import UNTIMED_MAX, Pattern
    from gate.engine.literals import nested_repeats

    flags = int(regex.IGNORECASE | regex.MULTILINE)
    return Pattern(pattern, flags, -1 if nested_repeats(pattern, flags) else UNTIMED_MAX,
                   regex.compile(pattern, flags))


class _Literals:
    """Which markers can match a text: the literals each one needs, found in one pass."""

    def __init__(self, patterns: list):
        from gate.engine.literals import DIGIT, required

        self._always = 0  # markers with no known literal: their regex always runs
        self._digit = 0  # markers that need any digit
        by_literal: dict = {}
        for i, pattern in enumerate(patterns):
            needed = required(pattern, re.IGNORECASE | re.MULTILINE)
            if not needed:
                self._always |= 1 << i
                continue
            for literal in needed:
                if literal == DIGIT:
                    self._digit |= 1 << i
                else:
                    by_literal[literal] = by_literal.get(literal, 0) | 1 << i
        self._automaton = None
        self._by_literal = by_literal
        try:
            import ahocorasick
        except ImportError:  # plain substring tests: slower, the same answer
            return
        if by_literal:
            automaton = ahocorasick.Automaton()
            for literal, mask in by_literal.items():
                automaton.add_word(literal, mask)
            automaton.make_automaton()
            self._automaton = automaton

    def candidates(self, text: str) -> int:
        from gate.engine.literals import digit_bit_set, fold

        folded = fold(text)
        mask = self._always
        if self._digit and digit_bit_set(folded):
            mask |= self._digit
        if self._automaton is not None:
            for _, found in self._automaton.iter(folded):
                mask |= found
        else:
            for literal, found in self._by_literal.items():
                if literal in folded:
                    mask |= found
        return mask


def _set_bits(mask: int):
    i = 0
    while mask:
        if mask & 1:
            yield i
        mask >>= 1
        i += 1

"""What a rules revision says about one stored memory's text: its noise markers, its drop rules.

- Noise markers are the revision's patterns that must never appear in a stored memory (the same
  ones a live run counts as leaks), applied case-insensitively, as the live check does.
- The drop verdict runs the revision's drop rules alone (signals are left out: they decide what
  to flag, not what is noise) on the memory's text as one turn of `role`, at `level`: the
  rule that would have kept this text from ever leaving the machine, or None.
"""

from __future__ import annotations

import dataclasses

import regex

MARKER_TIMEOUT = 0.05  # seconds per marker and memory; a timed-out marker counts as no hit
_CACHE_LIMIT = 50_000


class Judge:
    def __init__(self, revision, *, level: str | None = None, role: str = "user"):
        from gate.engine.compiler import compile_revision

        self.level = level or revision.default_level
        self.role = role
        self.marker_ids = tuple(m.id for m in revision.noise_markers)
        self._markers = tuple(regex.compile(m.pattern, regex.IGNORECASE | regex.MULTILINE)
                              for m in revision.noise_markers)
        drop_only = dataclasses.replace(revision, signals=())
        self.drop_rule_ids = tuple(r.id for r in revision.drop_rules)
        self._drops = compile_revision(drop_only)
        self._verdicts: dict = {}

    def markers(self, text: str) -> int:
        """A bit per noise marker that matches `text` (bit i: self.marker_ids[i])."""
        bits = 0
        for i, pattern in enumerate(self._markers):
            try:
                if pattern.search(text, timeout=MARKER_TIMEOUT):
                    bits |= 1 << i
            except TimeoutError:
                pass
        return bits

    def drop_rule(self, text: str) -> str | None:
        """The drop rule that would have dropped `text`, or None. Exact repeats are judged once."""
        verdict = self._verdicts.get(text, False)
        if verdict is not False:
            return verdict
        decision = self._drops.classify([{"role": self.role, "content": text}], self.level)
        verdict = decision.rule or "(empty)" if decision.action == "drop" else None
        if len(self._verdicts) >= _CACHE_LIMIT:
            self._verdicts.clear()
        self._verdicts[text] = verdict
        return verdict

"""The keyword prefilter: every rule's literals found in one pass over each turn.

Each literal a rule needs (its `keywords`, and those derived from its patterns by
gate/literals.py) gets one bit. A turn is scanned once (Aho-Corasick when the
`ahocorasick` package is there, plain substring tests otherwise: same bits,
only slower), and a subject's mask is the OR of its turns' masks: literals
never contain a newline, so none can straddle the join between two turns.
A condition or rule whose bits are all absent cannot match and is skipped.
"""

from __future__ import annotations

import re

from gate.engine.literals import DIGIT, digit_bit_set, fold

try:
    import ahocorasick as _ahocorasick
except ImportError:  # pragma: no cover - the package is a dependency; this keeps a broken install working
    _ahocorasick = None


# Where str.splitlines breaks a line.
_LINE_BREAKS = frozenset("\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029")


class LiteralTable:
    """Literal -> bit, filled while a revision compiles; `scanner()` once it is done."""

    def __init__(self):
        self.bits: dict[str, int] = {}

    def mask(self, literals) -> int:
        """The bits of a set of literals (one of which must be present); 0 for none."""
        if not literals:
            return 0
        out = 0
        for literal in literals:
            bit = self.bits.get(literal)
            if bit is None:
                if not literal or not _LINE_BREAKS.isdisjoint(literal):
                    return 0  # could span two joined turns or two lines: no prefilter rather than a wrong one
                bit = self.bits[literal] = 1 << len(self.bits)
            out |= bit
        return out

    def scanner(self) -> "Scanner":
        return Scanner(self.bits)


class Scanner:
    """fold(text) -> the OR of the bits of every literal in it."""

    __slots__ = ("chars", "any_char", "words", "digit", "automaton", "__weakref__")

    def __init__(self, bits: dict):
        self.digit = bits.get(DIGIT, 0)
        self.chars = {ch: bit for ch, bit in bits.items() if len(ch) == 1}
        # one C-speed pass finds which of the one-character literals occur
        self.any_char = re.compile("[" + "".join(map(re.escape, sorted(self.chars))) + "]") if self.chars else None
        self.words = tuple((word, bit) for word, bit in bits.items() if len(word) > 1 and word != DIGIT)
        self.automaton = None
        if _ahocorasick is not None and self.words:
            automaton = _ahocorasick.Automaton()
            for word, bit in self.words:
                automaton.add_word(word, bit)
            automaton.make_automaton()
            self.automaton = automaton

    def scan(self, text: str) -> int:
        folded = fold(text)
        found = self.digit if self.digit and digit_bit_set(folded) else 0
        if self.any_char is not None:
            chars = self.chars
            for ch in set(self.any_char.findall(folded)):
                found |= chars[ch]
        if self.automaton is not None:
            for _, bit in self.automaton.iter(folded):
                found |= bit
        else:
            for word, bit in self.words:
                if word in folded:
                    found |= bit
        return found

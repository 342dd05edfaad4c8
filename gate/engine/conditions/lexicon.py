"""lexicon: learned word evidence, a table of lowercased words and two-word phrases
with per-type weights (fitted by `gate fit --lexicon N`, reviewed like any rule).

The condition is true when one of its terms is in the subject's text; the signal
that holds it then scores the sum of the found terms' weights (each term counts
once per window), and its trace names the terms that weighed most. A term matches
whole words: every character that is not a word character (a letter, digit or '_')
separates words, so 'switch' is not found in 'switched' nor 'user' in 'user_id', and
a two-word term's words sit one separator apart ('instead of', 'read-only').

Every term is found in one pass over the separated text (an Aho-Corasick automaton,
built on first use so a revision that never reaches its lexicon pays nothing at
start-up); without the `ahocorasick` package, a substring test per term, same result.
"""

from __future__ import annotations

import re
from operator import add

from gate.language.model import ALL_TYPES_KEY, DURABLE_TYPES

try:
    import ahocorasick as _ahocorasick
except ImportError:  # pragma: no cover - the package is a dependency; this keeps gate working without it
    _ahocorasick = None

KIND = "lexicon"
# one or two lowercase words, one space between; a letter alone only as "i" (gate fit's pronouns)
TERM_SHAPE = re.compile(r"(?:[a-z]{2,}|i)(?: (?:[a-z]{2,}|i))?")
TRACE_TERMS = 3  # terms the trace names for the type that gained most


_NON_ASCII = re.compile(r"[^\x00-\x7f]")
_ASCII_SEPARATORS = bytes(c if chr(c).isalnum() or c == ord("_") else ord(" ") for c in range(128)) + bytes(128)


def is_word_char(ch: str) -> bool:
    return ch.isalnum() or ch == "_"


def separated(lower: str) -> str:
    """The text with every non-word character a space (and a word character beyond ASCII
    '_'), and a space at each end: a term is found as ' term ', so only whole words match,
    and a two-word term's words sit one separator apart (a space, a hyphen, a line break...)."""
    if not lower.isascii():
        # every term is ASCII: a non-ASCII character only has to stay a word character ('_')
        # or become a separator, and then the text is read as ASCII like any other
        lower = _NON_ASCII.sub(_ascii_stand_in, lower)
    return " " + lower.encode("ascii").translate(_ASCII_SEPARATORS).decode("ascii") + " "


def _ascii_stand_in(match) -> str:
    return "_" if is_word_char(match.group()) else " "


def term_problems(terms: dict) -> list[tuple[str, str]]:
    """(term, what is wrong) for terms the matcher can never find or that weigh nothing;
    `gate lint` reports them at the term."""
    out = []
    for term, weights in terms.items():
        if not isinstance(term, str) or not TERM_SHAPE.fullmatch(term):
            out.append((term, "a term is one or two lowercase words of letters (a-z), one space between"))
        elif not any(weights.values()):
            out.append((term, "every weight is 0: the term changes no score"))
    return out


class Lexicon:
    __slots__ = ("terms", "weights", "required_keywords", "_automaton")

    def __init__(self, terms: dict):
        self.terms = tuple(terms)  # in file order: ties in the trace follow it
        self.weights = tuple(dict(w) for w in terms.values())
        # None: its own one-pass search is the prefilter (its terms in the keyword scanner
        # would make every turn's scan longer for one rule)
        self.required_keywords = None
        self._automaton = None

    def __getstate__(self):  # the automaton is rebuilt on first use, not pickled
        return self.terms, self.weights

    def __setstate__(self, state):
        self.terms, self.weights = state
        self.required_keywords = None
        self._automaton = None

    def __call__(self, subject) -> bool:
        return bool(self.found(subject))

    def found(self, subject) -> tuple:
        """Indices of the terms in the subject's text, each once, in table order; computed
        once per subject (the condition and the signal's weights both ask)."""
        memo = subject.memo if subject.memo is not None else subject.set_memo()
        key = ("lexicon", id(self))
        hits = memo.get(key)
        if hits is None:
            hits = memo[key] = self.find(subject.lower)
        return hits

    def find(self, lower: str) -> tuple:
        """Indices of the terms found in `lower` (lowercased text), in table order."""
        if not self.terms or not lower:
            return ()
        text = separated(lower)
        if _ahocorasick is None:
            return tuple(i for i, term in enumerate(self.terms) if f" {term} " in text)
        automaton = self._automaton or self._build()
        return tuple(sorted({index for _, index in automaton.iter(text)}))

    def _build(self):
        automaton = _ahocorasick.Automaton()
        for index, term in enumerate(self.terms):
            automaton.add_word(f" {term} ", index)  # spaces on both sides: whole words only
        automaton.make_automaton()
        self._automaton = automaton
        return automaton

    def weigher(self, signal_id: str, base: dict):
        """(subject) -> (weights, trace line) for the signal that holds this lexicon:
        its own weights plus those of the terms found."""
        prefix = f"signal {signal_id} lexicon "
        # Each term's weights as a row over one key order, summed with map(add): a window
        # finds a few terms, and a dict update per term and type cost more than the rest
        # of the lexicon's work.
        keys = tuple(dict.fromkeys([*base, *(k for w in self.weights for k in w)]))
        rows = tuple(tuple(w.get(k, 0.0) for k in keys) for w in self.weights)
        start = tuple(float(base.get(k, 0.0)) for k in keys)
        spread_at = keys.index(ALL_TYPES_KEY) if ALL_TYPES_KEY in keys else None
        typed = tuple((keys.index(t), t) for t in DURABLE_TYPES if t in keys)

        def weigh(subject):
            hits = self.found(subject)
            sums = start
            for index in hits:
                sums = tuple(map(add, sums, rows[index]))
            return dict(zip(keys, sums)), prefix + self._explain(hits, sums, spread_at, typed)

        return weigh

    def _explain(self, hits, sums, spread_at, typed) -> str:
        """'decision+1.4 insight-0.2: switched, instead': each type's total (all_types
        spread over the types), largest first, and the terms that weighed most toward the first."""
        spread = sums[spread_at] if spread_at is not None else 0.0
        shown = []
        for at, name in typed:
            value = round(sums[at] + spread, 2)
            if value:
                shown.append((-value, name))
        if not shown:
            return "+0"
        shown.sort()
        lead = shown[0][1]
        ranked = sorted((-self.weights[i].get(lead, 0.0), i) for i in hits)
        words = [self.terms[i] for weight, i in ranked[:TRACE_TERMS] if weight < 0]
        text = " ".join(["%s%+g" % (name, -value) for value, name in shown])
        return f"{text}: {', '.join(words)}" if words else text


def compile(spec, ctx, path):
    return Lexicon({str(term): {k: float(v) for k, v in (weights or {}).items()}
                    for term, weights in spec["terms"].items()})

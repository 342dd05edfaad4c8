"""Validated Revision -> Classifier: every condition compiled once, up front."""

from __future__ import annotations

from dataclasses import dataclass

import regex

from gate.engine.conditions import CompileContext, compile_condition
from gate.engine.conditions.combinators import All, Any, Not
from gate.engine.conditions.context import DEFAULT_TIMEOUT, Pattern
from gate.engine.conditions.count import Count
from gate.engine.conditions.lexicon import Lexicon
from gate.engine.conditions.line_share import LineShare
from gate.engine.conditions.match import Match
from gate.engine.literals import required
from gate.engine.patternset import window_group
from gate.language.model import Signal
from gate.language.patterns import ReferenceError_, expand


@dataclass(frozen=True)
class CompiledRule:
    id: str
    kind: str  # 'drop' | 'signal'
    scope: str  # 'turn' | 'window' | 'payload'
    role: str  # 'user' | 'assistant' | 'any'
    min_index: int  # position of min_level in the revision's levels
    mandatory: bool
    when: object
    unless: tuple
    weights: dict  # signals only
    required_keywords: tuple | None  # one of these must be in the text, or the rule cannot fire
    # Prefilter bits (gate/engine/prefilter.py), 0 when not optimizing: one of `mask` must be in the
    # subject or `when` is false; `keyword_mask` is required_keywords as bits.
    mask: int = 0
    keyword_mask: int = 0
    # Pattern-set bits (gate/engine/patternset.py), 0 when unknown: one of them must match the
    # subject's text or `when` is false. Where the set can say, it replaces the prefilter.
    set_mask: int = 0
    set_group: str = "window"  # the scan group its set bits belong to
    # What a turn must have for a turn rule to fire (flags one of which it carries,
    # least characters, least turns in its window), checked before anything else; None if nothing.
    turn_needs: tuple | None = None
    trace_line: str = ""  # signals: what the trace says when it fires (its weights are constants)
    # A signal whose `when` is a lexicon: (subject) -> (weights, trace line) of the terms found;
    # None for every other rule (their weights are constants).
    weigh: object = None
    strip: str = "others"  # payload rules: which non-person turns go when the person is spared
    # payload rules: the regex of a person's line kept when the evidence is theirs (see
    # classify.Classifier._spare_lines); None drops their window whole
    spare: object = None
    # payload rules with spare: the action for spared lines the signals do not flag ("drop" or
    # "skip": judged as the person's words alone, as if nothing had been pasted beside them)
    spare_unflagged: str = "drop"
    # payload rules with spare: the regex of a line kept outside the code fences of a turn that
    # fenced its paste (the paste is inside); None keeps only what spare matches
    spare_outside_fence: object = None
    # payload rules with spare: a line that continues the one above it in one of these ways
    # ("mid_sentence", "wrapped": classify._continues) is kept exactly when that line is
    spare_continuations: frozenset = frozenset()
    # payload rules with spare: (opens, keeps) regexes: a person's line above the line a pasted
    # file opens with, among their first lines, is kept when keeps matches; None keeps none
    spare_above_file: tuple | None = None
    span: object = None  # span rules: the regex whose matches are cut out of a turn's text
    # span rules, when optimizing: literals one of which every match holds (in literals.fold(text)),
    # so a turn without any is not searched; None when none is known
    span_literals: frozenset | None = None
    # the first characters of span_literals when each is ASCII punctuation, which lowercasing
    # leaves alone: a turn without any of them holds none of the literals, found without folding
    span_marks: frozenset | None = None
    # turn rules whose `when` is a line_share or repeated_shape with `spare`: that condition, whose
    # `spared` keeps only the person's lines of a turn it took, instead of dropping the whole turn
    cut_lines: object = None

    def fires(self, subject) -> bool:
        if self.set_mask:
            hits = subject.set_hits(self.set_group)
            if hits is not None:
                return bool(hits & self.set_mask) and self._holds(subject)
        if self.mask and not subject.found & self.mask:
            return False
        if self.keyword_mask:
            if not subject.found & self.keyword_mask:
                return False
        elif self.required_keywords is not None:
            lower = subject.lower
            if not any(k in lower for k in self.required_keywords):
                return False
        return self._holds(subject)

    def _holds(self, subject) -> bool:
        if not self.when(subject):
            return False
        for condition in self.unless:
            if condition(subject):
                return False
        return True

    def active_at(self, level_index: int) -> bool:
        return self.mandatory or level_index >= self.min_index


def compile_rule(rule, revision, *, prefilter: bool = True, timeout: float = DEFAULT_TIMEOUT,
                 literals=None, lazy: bool = False, sets=None) -> CompiledRule:
    ctx = CompileContext(revision.vocabularies, revision.fragments, revision.source,
                         rule_id=rule.id, rule_kind="signal" if isinstance(rule, Signal) else "rule",
                         prefilter=prefilter, timeout=timeout, literals=literals, lazy=lazy, sets=sets,
                         set_group="turn" if rule.scope == "turn" and not isinstance(rule, Signal)
                         else window_group(rule.role))
    when = compile_condition(rule.when, ctx, rule.path + ("when",))
    unless = tuple(compile_condition(c, ctx, rule.path + ("unless", i)) for i, c in enumerate(rule.unless))
    is_signal = isinstance(rule, Signal)
    cut_lines = _cut_lines(rule, when, is_signal, ctx)
    required_keywords = when.required_keywords if prefilter else None
    span = _span_regex(rule, revision, ctx) if rule.scope == "span" and not is_signal else None
    span_literals = required(span.pattern, span.flags) if span is not None and literals is not None else None
    return CompiledRule(
        id=rule.id, kind="signal" if is_signal else "drop", scope=rule.scope, role=rule.role,
        min_index=revision.levels.index(rule.min_level), mandatory=rule.mandatory, when=when,
        unless=unless, weights=dict(rule.weights) if is_signal else {},
        required_keywords=required_keywords, mask=_required_mask(when) if literals is not None else 0,
        keyword_mask=ctx.keyword_mask(required_keywords),
        set_mask=_required_mask(when, _set_bits) if sets is not None else 0, set_group=ctx.set_group,
        turn_needs=_turn_needs(when) if literals is not None and rule.scope == "turn" and not is_signal else None,
        trace_line=f"signal {rule.id} " + " ".join(f"{k}{v:+g}" for k, v in rule.weights.items()) if is_signal else "",
        weigh=when.weigher(rule.id, dict(rule.weights)) if is_signal and isinstance(when, Lexicon) else None,
        strip=getattr(rule, "strip", "others"),
        spare=_spare_regex(rule, revision, ctx, "spare") if getattr(rule, "spare", None) and rule.scope == "payload" else None,
        spare_unflagged=getattr(rule, "spare_unflagged", "drop"),
        spare_outside_fence=(_spare_regex(rule, revision, ctx, "spare_outside_fence")
                             if getattr(rule, "spare_outside_fence", None) and rule.scope == "payload" else None),
        spare_continuations=(_CONTINUATIONS[getattr(rule, "spare_continuations", False)]
                             if rule.scope == "payload" else frozenset()),
        spare_above_file=(tuple(_spare_regex(rule, revision, ctx, ("spare_above_file", part), pattern)
                                for part, pattern in zip(("opens", "keeps"), rule.spare_above_file))
                          if getattr(rule, "spare_above_file", None) and rule.scope == "payload" else None),
        span=span,
        span_literals=span_literals,
        span_marks=_first_marks(span_literals),
        cut_lines=cut_lines,
    )


_LINE_CUTTERS = ("line_share", "repeated_shape")  # the kinds that can say which lines counted


def _cut_lines(rule, when, is_signal, ctx):
    """The condition that cuts lines instead of the turn (its `spared`), when the rule has one.
    `spare` means something only where a firing rule takes a turn: a turn rule's whole `when`."""
    kind = next(iter(rule.when)) if isinstance(rule.when, dict) and len(rule.when) == 1 else None
    if kind in _LINE_CUTTERS and isinstance(rule.when[kind], dict) and "spare" in rule.when[kind]:
        if is_signal or rule.scope != "turn":
            raise ctx.fail(rule.path + ("when", kind, "spare"),
                           "spare cuts lines out of a turn a drop rule takes; only a turn-scope drop rule has one")
        return when
    for path in _spare_paths(rule.when, ("when",)):
        raise ctx.fail(rule.path + path, f"spare belongs to a {path[-2]} that is a turn rule's whole when, "
                                         "not one inside all/any/not")
    return None


def _spare_paths(spec, path):
    """Where `spare` sits in a condition tree (under a kind that cuts lines)."""
    if isinstance(spec, dict):
        for key, value in spec.items():
            if key == "spare" and path and path[-1] in _LINE_CUTTERS:
                yield path + (key,)
            else:
                yield from _spare_paths(value, path + (key,))
    elif isinstance(spec, list):
        for i, value in enumerate(spec):
            yield from _spare_paths(value, path + (i,))


def _first_marks(literals) -> frozenset | None:
    """The literals' first characters, when each is ASCII punctuation (`<`, `[`); else None."""
    if not literals:
        return None
    marks = frozenset(literal[0] for literal in literals)
    return marks if all(m.isascii() and not m.isalnum() and not m.isspace() for m in marks) else None


def _span_regex(rule, revision, ctx):
    """A span rule's `when` is one match: its pattern(s) as a plain regex, for cutting out."""
    spec = rule.when.get("match") if isinstance(rule.when, dict) and len(rule.when) == 1 else None
    if not isinstance(spec, dict):
        raise ctx.fail(rule.path + ("when",), "a span rule's when is one match (the text to cut out of a turn)")
    patterns = spec["pattern"] if isinstance(spec["pattern"], list) else [spec["pattern"]]
    flags = regex.MULTILINE | (0 if spec.get("case_sensitive", False) else regex.IGNORECASE)
    return regex.compile("|".join(f"(?:{expand(p, revision.vocabularies, revision.fragments)})" for p in patterns),
                         flags)


# spare_continuations as written -> the ways of continuing a line it follows: true (v2.83 on) a
# sentence that runs on; "wrapped" (v2.87 on) also a paragraph wrapped at its column.
_CONTINUATIONS = {False: frozenset(), True: frozenset({"mid_sentence"}),
                  "wrapped": frozenset({"mid_sentence", "wrapped"})}


def _spare_regex(rule, revision, ctx, key, pattern: str | None = None):
    """A payload rule's `spare` (or `spare_outside_fence`, or a part of `spare_above_file`, whose
    key is a path and whose `pattern` is given): the line of the person's own that it keeps,
    searched per line. Compiled on first use when the revision comes from the cache (a hook
    rarely needs it)."""
    flags = regex.MULTILINE | regex.IGNORECASE
    path = rule.path + (key if isinstance(key, tuple) else (key,))
    try:
        expanded = expand(getattr(rule, key) if pattern is None else pattern, revision.vocabularies, revision.fragments)
        return Pattern(expanded, flags, -1, None if ctx.lazy else regex.compile(expanded, flags))
    except ReferenceError_ as exc:
        raise ctx.fail(path, str(exc)) from None
    except regex.error as exc:
        raise ctx.fail(path, f"pattern does not compile: {exc}") from None


_NOTHING = (None, 0, 0)


def _turn_needs(condition) -> tuple | None:
    """(flags one of which the turn carries, least characters, least window turns) that
    `condition` needs to be true of one turn; None when it needs none of them."""
    needs = _needs(condition)
    return None if needs == _NOTHING else needs


def _needs(condition) -> tuple:
    if isinstance(condition, All):  # every part must hold: the strictest of each
        parts = [_needs(p) for p in condition.parts]
        flags = next((f for f, _, _ in parts if f is not None), None)
        return flags, max((c for _, c, _ in parts), default=0), max((t for _, _, t in parts), default=0)
    if isinstance(condition, Any):  # one part must hold: the loosest of each
        parts = [_needs(p) for p in condition.parts]
        if not parts:
            return _NOTHING
        flags = None if any(f is None for f, _, _ in parts) else frozenset().union(*(f for f, _, _ in parts))
        return flags, min(c for _, c, _ in parts), min(t for _, _, t in parts)
    return getattr(condition, "needs", _NOTHING)


def _prefilter_bits(leaf) -> int:
    return leaf.mask or leaf.keyword_mask


def _set_bits(leaf) -> int:
    return leaf.gate.bit if leaf.gate is not None else 0


def _required_mask(condition, leaf_bits=_prefilter_bits) -> int:
    """Bits one of which must be present for `condition` to be true; 0 if unknown.
    `leaf_bits` reads a pattern leaf's bits (prefilter literals, or pattern-set matches)."""
    if isinstance(condition, All):  # every part must hold: any part's bits will do; take the fewest
        masks = [m for m in (_required_mask(p, leaf_bits) for p in condition.parts) if m]
        return min(masks, key=int.bit_count) if masks else 0
    if isinstance(condition, Any):  # one part must hold: the union, if every part has bits
        out = 0
        for part in condition.parts:
            m = _required_mask(part, leaf_bits)
            if not m:
                return 0
            out |= m
        return out
    if isinstance(condition, Not):
        return 0
    if isinstance(condition, (Match, Count, LineShare)):
        needed = (isinstance(condition, Match) or (isinstance(condition, Count) and condition.bounds.get("min", 0) >= 1)
                  or (isinstance(condition, LineShare) and condition.low > 0))
        return leaf_bits(condition) if needed else 0
    return 0


def compile_revision(revision, *, prefilter: bool = True, timeout: float = DEFAULT_TIMEOUT, optimize: bool = True,
                     lazy: bool = False):
    """Compile every rule; raises GateError (located) for a pattern that does not compile.

    `optimize=False` (with `prefilter=False`, the keywords' own prefilter) turns off every
    speed-up: derived keywords and the one-pass scan (gate/engine/prefilter.py), the feature
    shortcuts (gate/engine/features.py); decisions must be the same either way.
    `lazy=True` compiles each pattern on first use, for a revision validated before (the cache).
    """
    from gate.engine.classify import Classifier

    literals = sets = None
    if optimize:
        from gate.engine.patternset import SetBuilder
        from gate.engine.prefilter import LiteralTable

        literals, sets = LiteralTable(), SetBuilder()
    rules = tuple(compile_rule(r, revision, prefilter=prefilter, timeout=timeout, literals=literals, lazy=lazy,
                               sets=sets)
                  for r in revision.rules)
    return Classifier(revision, rules, scanner=literals.scanner() if literals is not None else None,
                      sets=sets.scanner() if sets is not None else None, optimize=optimize)

"""Which drop rules could fire on a window of one turn: a sound screen, read off the rules.

Judging many short texts for a drop verdict alone (gate audit judges every stored memory as
one turn) spends most of its time proving that no rule fires. Each rule's `when` says what a
turn must have for it to be true, in terms that cost almost nothing to check: pattern-set hits
(gate/engine/patternset.py: a leaf's pattern can match only where its set gate is present), least
non-blank lines (a line_share needs its min_lines, a structure count or a repeated line shape
needs as many lines as it counts), least characters and turns, turn flags and roles, tool text,
recent shapes. A rule's needs are a few alternatives (one per way its `all` / `any` tree can be
true), each weaker than the condition it stands for.

The screen is sound, never exact: when it says no rule can fire, the classifier would drop
nothing; when it says one might, the classifier decides. It knows no rule by name: any revision,
any condition kind (a kind it does not know needs nothing, so it never stops a rule).
"""

from __future__ import annotations

from typing import NamedTuple

from gate.engine.window import turn_facts

# structure counts, each a number of non-blank lines (gate/engine/features.py: Subject._compute_structure)
_LINE_COUNTS = frozenset({"headings", "bullets", "numbered", "code_fences", "fenced_lines", "table_rows",
                          "config_lines", "lines"})
_CROSS_LIMIT = 16  # alternatives an `all` may multiply into before each part is summed up as one


class Need(NamedTuple):
    """What a turn must have for a condition to be true (one alternative of several)."""
    bits: int = 0  # pattern-set bits of the rule's scan group, one of which must hit (0: none known)
    gates: frozenset = frozenset()  # set gates of pattern leaves (conditions/context.py: SetGate), each present
    lines: int = 0  # least non-blank lines
    chars: int = 0  # least characters
    turns: int = 0  # least turns in the window
    flags: frozenset = frozenset()  # turn flags it must carry, every one
    roles: frozenset | None = None  # roles one of which it must have (None: any)
    tool: bool = False  # the window must have tool calls or results
    recent: bool = False  # the caller must have passed recent shapes


FREE = Need()
_FREE = (FREE,)


def needs_of(spec: dict, condition, group: str) -> tuple:
    """The alternatives one of which holds wherever `condition` (compiled from `spec`, a rule's
    `when` or part of it) is true; `group` is the rule's pattern-set scan group."""
    kind, body = next(iter(spec.items()))
    if kind == "all":
        return _all([needs_of(s, c, group) for s, c in zip(body, condition.parts)])
    if kind == "any":
        out = []
        for s, c in zip(body, condition.parts):
            part = needs_of(s, c, group)
            if FREE in part:
                return _FREE
            out.extend(part)
        return tuple(dict.fromkeys(out)) or _FREE
    if kind in ("match", "count", "line_share"):
        # each is false where its set gate is not present (see the kinds' __call__)
        gate = getattr(condition, "gate", None)
        gates = frozenset((gate,)) if gate is not None and hasattr(gate, "present") else frozenset()
        if kind == "count" and body.get("min", 0) < 1:
            gates = frozenset()  # a count of zero may hold
        if kind == "line_share":  # no line_share holds on fewer kept lines than min_lines, nor on none
            return (Need(gates=gates if body.get("min_share", 0.0) > 0 else frozenset(),
                         lines=max(1, body.get("min_lines", 1))),)
        return (Need(gates=gates),)
    if kind == "structure":
        least = max((b.get("min", 0) for name, b in body.items() if name in _LINE_COUNTS), default=0)
        return (Need(lines=least),)
    if kind == "repeated_shape":
        least = body.get("min", 0)
        return (Need(lines=least),) if body.get("unit") == "line" else (Need(turns=least),)
    if kind == "turns":
        return (Need(turns=body.get("min", 0)),)
    if kind == "chars":
        return (Need(chars=body.get("min", 0)),)
    if kind == "turn_flag":
        return (Need(flags=frozenset((body,))),)
    if kind == "role":
        return (Need(roles=frozenset([body] if isinstance(body, str) else body)),)
    if kind == "tool_io":
        return (Need(tool=True),)
    if kind == "recent_shape":
        return (Need(recent=True),) if body else _FREE
    return _FREE  # not, prose_words, lexicon, and any kind added later: no need known


def _all(parts: list) -> tuple:
    parts = [p for p in parts if p != _FREE]
    if not parts:
        return _FREE
    size = 1
    for p in parts:
        size *= len(p)
    if size > _CROSS_LIMIT:
        parts = [(_summary(p),) for p in parts]
    out = [FREE]
    for p in parts:
        out = [_both(a, b) for a in out for b in p]
    return tuple(dict.fromkeys(out))


def _summary(alternatives: tuple) -> Need:
    """One need weaker than each of the alternatives."""
    bits = 0
    for need in alternatives:
        if not need.bits:
            bits = 0
            break
        bits |= need.bits
    roles = None
    if all(need.roles is not None for need in alternatives):
        roles = frozenset().union(*(need.roles for need in alternatives))
    return Need(bits=bits, gates=frozenset.intersection(*(n.gates for n in alternatives)),
                lines=min(n.lines for n in alternatives), chars=min(n.chars for n in alternatives),
                turns=min(n.turns for n in alternatives),
                flags=frozenset.intersection(*(n.flags for n in alternatives)), roles=roles,
                tool=all(n.tool for n in alternatives), recent=all(n.recent for n in alternatives))


def _both(a: Need, b: Need) -> Need:
    """A need for both to hold (bits: either's will do; the one with fewer bits says more)."""
    if a.bits and b.bits:
        bits = a.bits if a.bits.bit_count() <= b.bits.bit_count() else b.bits
    else:
        bits = a.bits or b.bits
    roles = a.roles if b.roles is None else (b.roles if a.roles is None else a.roles & b.roles)
    return Need(bits=bits, gates=a.gates | b.gates, lines=max(a.lines, b.lines), chars=max(a.chars, b.chars),
                turns=max(a.turns, b.turns),
                flags=a.flags | b.flags, roles=roles, tool=a.tool or b.tool, recent=a.recent or b.recent)


class DropScreen:
    """For a compiled classifier, its revision and a level: could a drop rule fire on one turn?"""

    def __init__(self, revision, classifier, level: str):
        index = classifier.levels.index(level)
        specs = {rule.id: rule for rule in revision.drop_rules}
        self._rules = []  # (rule id, role, needs) of each drop rule active at the level
        # span rules cut their matches out of a turn before anything judges it (a turn left
        # blank goes): where one finds anything, even an empty match, the screen says nothing
        self._spans = []  # (role, the set gate of its pattern or None, the regex it cuts)
        for rule in classifier.rules:
            if rule.kind != "drop" or not rule.active_at(index):
                continue
            if rule.scope == "span":
                gate = getattr(rule.when, "gate", None)
                self._spans.append((rule.role, gate if hasattr(gate, "alternatives") else None, rule.span))
                continue
            needs = needs_of(specs[rule.id].when, rule.when, rule.set_group)
            if rule.set_mask:  # the compiler's own proof (see CompiledRule.fires), in the rule's scan group
                needs = _all([needs, (Need(bits=rule.set_mask),)])
            self._rules.append((rule.id, rule.role, rule.set_group, needs))
        self._checks = {}  # role -> the needs of the rules that judge a turn of that role
        self._sets = _one_set(classifier.sets, self._bits_read())

    def _bits_read(self) -> int:
        """Every pattern-set bit a need or a span gate reads."""
        out = 0
        gates = [gate for _, gate, _ in self._spans if gate is not None]
        for _, _, _, needs in self._rules:
            for need in needs:
                out |= need.bits
                gates.extend(need.gates)
        for gate in gates:
            out |= gate.keywords | gate.bit
            for mask, _, _, _ in gate.alternatives:
                out |= mask
        return out

    def _checks_for(self, role: str) -> tuple:
        """For a turn of `role`: (scan group, all their bits, ((bits, need), ...)) of every
        alternative that one turn can meet (a need of two turns or more cannot), by the scan
        group of their bits: one of the bits must hit, a first test that costs one AND (0: no
        such test); when none of the group's bits hits, its needs are passed over at once."""
        checks = self._checks.get(role)
        if checks is None:
            by_group: dict = {}
            for _, rule_role, group, needs in self._rules:
                if rule_role != "any" and rule_role != role:
                    continue  # a rule of another role judges no turn of this window
                for need in needs:
                    if need.turns > 1 or (need.roles is not None and role not in need.roles):
                        continue
                    if need.bits:
                        by_group.setdefault(group, []).append((need.bits, need))
                    elif need.gates:
                        gate = next(iter(need.gates))
                        by_group.setdefault(gate.group, []).append((gate.bit, need))
                    else:
                        by_group.setdefault(None, []).append((0, need))
            checks = self._checks[role] = tuple(
                (group, _union(entries), tuple(entries)) for group, entries in by_group.items())
        return checks

    def might_drop(self, text: str, role: str = "user", recent_shapes=()) -> bool:
        """False only when no drop rule can fire on a window of one turn, `text` said by
        `role`: then classify([{"role": role, "content": text}], level, recent_shapes) drops
        nothing."""
        role, text, flags, tool_text = turn_facts({"role": role, "content": text})  # as the window's one Turn
        recent, lines = bool(recent_shapes), -1
        scans = _Scans(self._sets, text)
        if self._spans and self._spans_cut(role, text, scans):
            return True
        for group, every_bit, entries in self._checks_for(role):
            found = scans[group] if group is not None else None
            if found is not None and not found & every_bit:
                continue  # each need of the group wants one of its bits
            for bits, need in entries:
                if bits and found is not None and not found & bits:
                    continue
                # the need itself: the cheap facts first, then its gates, then the lines
                if (len(text) < need.chars or (need.flags and not need.flags <= flags)
                        or (need.tool and not tool_text) or (need.recent and not recent)):
                    continue
                if need.bits and found is not None and not found & need.bits:
                    continue
                if need.gates and not all(scans[gate.group] is None or gate.present(scans[gate.group])
                                          for gate in need.gates):
                    continue
                if need.lines:
                    if lines < 0:
                        lines = sum(1 for line in text.splitlines() if line and not line.isspace())
                    if lines < need.lines:
                        continue
                return True
        return False

    def _spans_cut(self, role: str, text: str, scans) -> bool:
        """Whether a span rule may cut anything out of the turn. Its pattern set gate, read
        without the keywords a span does not use, proves a miss; else its regex is searched."""
        for span_role, gate, span in self._spans:
            if span_role != "any" and span_role != role:
                continue
            if gate is not None:
                hits = scans[gate.group]
                if hits is not None and not any(hits & mask == mask for mask, _, _, _ in gate.alternatives):
                    continue
            try:
                if span.search(text, timeout=SPAN_SEARCH_TIMEOUT) is not None:
                    return True
            except TimeoutError:
                return True  # the classifier would time out too: let it say so
        return False


SPAN_SEARCH_TIMEOUT = 0.05


def _union(entries) -> int:
    """The OR of the entries' bits; -1 (every bit) when one of them has none to test."""
    out = 0
    for bits, _ in entries:
        if not bits:
            return -1
        out |= bits
    return out


def _one_set(sets, bits: int):
    """The pattern pieces of the classifier's sets whose `bits` the screen reads, as one set:
    a bit is one piece whichever scan group asks for it, so one scan answers every group."""
    if sets is None or not bits >> 1:
        return None
    from gate.engine.patternset import SetScanner

    members = tuple(i for i in range(1, bits.bit_length()) if bits >> i & 1)  # bit 0 is WIDE, no piece
    return SetScanner(sets.patterns, {_EVERY_GROUP: members}, sets.wide)


_EVERY_GROUP = "every"


class _Scans:
    """A text's pattern-set hits for any scan group (None: the set cannot say), from one
    scan of every group at once, on first need."""

    __slots__ = ("sets", "text", "_hits")

    def __init__(self, sets, text: str):
        self.sets, self.text, self._hits = sets, text, False

    def __getitem__(self, group: str):
        if self._hits is False:
            self._hits = self.sets.hits(self.text, _EVERY_GROUP) if self.sets is not None else None
        return self._hits

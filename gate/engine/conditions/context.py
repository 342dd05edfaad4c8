"""What compiling a condition needs: named patterns, switches, error places."""

from __future__ import annotations

from dataclasses import dataclass

import regex

from gate.language.errors import GateError
from gate.language.patterns import ReferenceError_, expand, expand_keywords
from gate.engine.patternset import WIDE

DEFAULT_TIMEOUT = 0.05  # seconds per regex call: a catastrophic pattern cannot hang a hook
# Flags as plain ints: regex's parser tests a pattern's flags hundreds of times while
# it compiles, and arithmetic on the RegexFlag enum is slow (a compile costs ~25% more).
_IGNORECASE, _MULTILINE = int(regex.IGNORECASE), int(regex.MULTILINE)
_FLAGS_THAT_SHAPE_A_MATCH = int(regex.IGNORECASE | regex.MULTILINE | regex.DOTALL | regex.VERBOSE)


# Below this many characters a search whose pattern cannot backtrack worse than
# polynomially (no repetition inside a repetition: gate/engine/literals.py) runs without
# a timeout: `regex` reads the process clock to honour one, which costs more than
# searching a short line. Longer text, and every pattern that nests repetitions,
# keeps the timeout.
UNTIMED_MAX = 1024


class Pattern:
    """A regex as the optimized classifier uses it: compiled on first use (a cached
    revision was validated when stored, so a hook compiles only what its window
    reaches), and searched without the timeout's cost where that cannot hang."""

    __slots__ = ("pattern", "flags", "untimed_max", "_regex")

    def __init__(self, pattern: str, flags: int, untimed_max: int = -1, compiled=None):
        self.pattern, self.flags, self.untimed_max, self._regex = pattern, flags, untimed_max, compiled

    def _compile(self):
        self._regex = regex.compile(self.pattern, self.flags)
        return self._regex

    def search(self, string, timeout=None):
        compiled = self._regex or self._compile()
        if len(string) <= self.untimed_max:
            return compiled.search(string)
        return compiled.search(string, timeout=timeout)

    def finditer(self, string, timeout=None):
        compiled = self._regex or self._compile()
        if len(string) <= self.untimed_max:
            return compiled.finditer(string)
        return compiled.finditer(string, timeout=timeout)

    def __reduce__(self):
        return Pattern, (self.pattern, self.flags, self.untimed_max)


@dataclass
class CompileContext:
    vocabularies: dict
    fragments: dict
    located: object  # gate.language.yamlsource.Located, for error places
    rule_id: str = ""
    rule_kind: str = "rule"  # 'rule' or 'signal', as the loader names them in errors
    prefilter: bool = True
    timeout: float = DEFAULT_TIMEOUT
    literals: object = None  # gate.engine.prefilter.LiteralTable when optimizing: derived keywords get bits
    lazy: bool = False  # a cached, already validated revision: compile each pattern on first use
    sets: object = None  # gate.engine.patternset.SetBuilder when optimizing: patterns searched in one pass
    set_group: str = "window"  # the scan group of the rule being compiled (gate/engine/patternset.py: window_group)

    def fail(self, path, message: str) -> GateError:
        return GateError(self.located.problem(path, f"{self.rule_kind} '{self.rule_id}': {message}"))

    def regex(self, spec: dict, path: tuple):
        """The leaf's pattern(s) as one compiled regex (alternatives OR-ed)."""
        patterns = spec["pattern"] if isinstance(spec["pattern"], list) else [spec["pattern"]]
        flags = _MULTILINE  # ^ and $ are line anchors: most noise is line-shaped
        if not spec.get("case_sensitive", False):
            flags |= _IGNORECASE
        if self.lazy:
            expanded = [expand(text, self.vocabularies, self.fragments) for text in patterns]
            combined = expanded[0] if len(expanded) == 1 else "|".join(f"(?:{p})" for p in expanded)
            return self._pattern(combined, flags, None)
        parts = []
        for i, text in enumerate(patterns):
            where = path + ("pattern",) + ((i,) if isinstance(spec["pattern"], list) else ())
            try:
                expanded = expand(text, self.vocabularies, self.fragments)
                regex.compile(expanded, flags)
            except ReferenceError_ as exc:
                raise self.fail(where, str(exc)) from None
            except regex.error as exc:
                raise self.fail(where, f"pattern does not compile: {exc}") from None
            parts.append(expanded)
        combined = parts[0] if len(parts) == 1 else "|".join(f"(?:{p})" for p in parts)
        compiled = regex.compile(combined, flags)
        return self._pattern(combined, flags, compiled) if self.literals is not None else compiled

    def _pattern(self, text: str, flags: int, compiled):
        """A Pattern when optimizing (lazy, short searches untimed where safe)."""
        if self.literals is None:
            return Pattern(text, flags, -1, compiled)  # lazy only: every search keeps its timeout
        from gate.engine.literals import nested_repeats

        untimed = -1 if nested_repeats(text, flags & _FLAGS_THAT_SHAPE_A_MATCH) else UNTIMED_MAX
        return Pattern(text, flags, untimed, compiled)

    def derived_mask(self, pattern) -> int:
        """Prefilter bits of the literals every match of `pattern` contains (gate/engine/literals.py);
        0 when none are known or the classifier is compiled without optimizations."""
        if self.literals is None:
            return 0
        from gate.engine.literals import may_explode, required

        flags = pattern.flags & _FLAGS_THAT_SHAPE_A_MATCH
        if may_explode(pattern.pattern, flags):
            return 0  # it runs, and times out, as it would without the prefilter
        return self.literals.mask(required(pattern.pattern, flags))

    def branches(self, pattern) -> tuple:
        """(prefilter bits, regex) for each top-level alternative of `pattern`, for a yes/no
        search that may try them one by one (gate/engine/literals.py: alternatives); the bits are
        a tuple, one of each must be present. () when not optimizing."""
        if self.literals is None:
            return ()
        from gate.engine.literals import alternatives

        flags = pattern.flags & _FLAGS_THAT_SHAPE_A_MATCH
        pieces = alternatives(pattern.pattern, flags)
        if pieces is None or len(pieces) < 2:
            return ((self._all_of(pattern.pattern, flags), pattern),)
        out = []
        for piece in pieces:
            try:
                compiled = self._pattern(piece, flags, None if self.lazy else regex.compile(piece, flags))
            except regex.error:  # a piece that does not stand alone: search the whole pattern
                return ((self._all_of(pattern.pattern, flags), pattern),)
            out.append((self._all_of(piece, flags), compiled))
        return tuple(out)

    def _all_of(self, text: str, flags: int) -> tuple:
        from gate.engine.literals import may_explode, requirements

        if may_explode(text, flags):
            return ()  # it runs, and times out, as it would without the prefilter
        return tuple(m for m in (self.literals.mask(s) for s in requirements(text, flags)) if m)

    def set_gate(self, pattern, keywords, *, lines: bool = False, branches=None, group=None) -> "SetGate | None":
        """What the revision's pattern set (gate/engine/patternset.py) can tell about a leaf that
        needs its pattern and one of its keywords; None when it cannot tell (not in the
        set, or the classifier is not optimized). `branches`: self.branches(pattern), if known;
        `group`: the scan group, if not the rule's (tool_io reads the tool text)."""
        if self.sets is None:
            return None
        from gate.engine.patternset import verifier

        group = group or self.set_group
        flags = pattern.flags & _FLAGS_THAT_SHAPE_A_MATCH
        keyword_bit = self._keyword_set_bit(keywords, group)
        if keywords is not None and not keyword_bit:
            return None
        whole = self.sets.translation(pattern.pattern, flags, lines=lines)
        if whole is not None and whole[1]:  # exact: a hit is a match
            mask, _ = self.sets.add(pattern.pattern, flags, lines=lines, group=group)
            return SetGate(((mask, True, pattern, pattern),), keyword_bit, mask, group)
        # Relaxed: each top-level alternative separately, so a hit is confirmed by
        # searching only the alternatives whose pieces all hit.
        alternatives = []
        if branches is None:
            branches = self.branches(pattern)
        for _, branch in branches or ((None, pattern),):
            if self.sets.translation(branch.pattern, flags, lines=lines) is None:
                alternatives = None
                break
            mask, exact = self.sets.add(branch.pattern, flags, lines=lines, group=group)
            alternatives.append((mask, exact, (not lines and verifier(branch.pattern, flags)) or branch, branch))
        if alternatives is None:
            if whole is None:
                return None
            mask, _ = self.sets.add(pattern.pattern, flags, lines=lines, group=group)
            alternatives = [(mask, False, (not lines and verifier(pattern.pattern, flags)) or pattern, pattern)]
        key = 0
        for mask, _, _, _ in alternatives:
            key |= self.sets.key_bit(mask)
        return SetGate(tuple(alternatives), keyword_bit, key, group)

    def _keyword_set_bit(self, keywords, group: str) -> int:
        """The set bit of "one of these keywords is in the text"; 0 when not in the set.

        A keyword is looked for in the lowercased text; on plain text that is a
        case-insensitive search for the (lowercase) keyword."""
        if not keywords or any(k != k.lower() for k in keywords):
            return 0
        bit, exact = self.sets.add("|".join(regex.escape(k) for k in keywords), _IGNORECASE, group=group)
        return bit if exact else 0

    def keyword_mask(self, keywords) -> int:
        """Prefilter bits of a leaf's own keywords; 0 to keep checking them one by one."""
        if self.literals is None or not keywords:
            return 0
        return self.literals.mask(keywords)

    def keywords(self, spec: dict, path: tuple):
        """Prefilter literals, or None when the leaf has none (or prefiltering is off)."""
        if not self.prefilter or "keywords" not in spec:
            return None
        try:
            return expand_keywords(spec["keywords"], self.vocabularies)
        except ReferenceError_ as exc:
            raise self.fail(path + ("keywords",), str(exc)) from None


class SetGate:
    """What the pattern set knows of one leaf, read from a subject's set hits.

    `alternatives` is ((mask, exact, confirm, regex), ...): the leaf's pattern can
    match only where, for one alternative, every bit of its mask hits. On plain
    text an exact alternative whose bits all hit is a match, another is confirmed
    with `confirm` (its RE2 form when it has an exact one, else `regex`). On other
    text (hits carry WIDE) only `regex` can confirm."""

    __slots__ = ("alternatives", "keywords", "bit", "group")

    def __init__(self, alternatives: tuple, keywords: int, bit: int, group: str):
        self.alternatives, self.keywords = alternatives, keywords
        self.bit = bit  # one of these hits wherever the pattern matches (for rule-level skipping)
        self.group = group  # the scan group whose hits to read

    def present(self, hits: int) -> bool:
        """False proves the leaf's pattern (or all its keywords) absent; True may be wrong."""
        if self.keywords and not hits & self.keywords:
            return False
        for mask, _, _, _ in self.alternatives:
            if hits & mask == mask:
                return True
        return False

    def matches(self, hits: int, text: str, timeout) -> bool:
        """Whether the pattern, and one of the keywords, are in `text`, whose set hits are `hits`."""
        if self.keywords and not hits & self.keywords:
            return False
        return self.pattern_matches(hits, text, timeout)

    def pattern_matches(self, hits: int, text: str, timeout) -> bool:
        """Whether the pattern is in `text` (keywords aside: line_share asks it line by line)."""
        if hits & WIDE:
            for mask, _, _, regex_ in self.alternatives:
                if hits & mask == mask and regex_.search(text, timeout=timeout) is not None:
                    return True
            return False
        for mask, exact, confirm, _ in self.alternatives:
            if hits & mask == mask and (exact or confirm.search(text, timeout=timeout) is not None):
                return True
        return False


def search_branches(branches, found: int, text: str, timeout) -> bool:
    """Search an alternation branch by branch, each only when its literals were found.

    `branches` is ((literal masks, compiled branch), ...): a branch runs only when,
    for each of its masks, some literal of that mask is in the text (`found`).
    """
    for masks, branch in branches:
        for mask in masks:
            if not found & mask:
                break
        else:
            if branch.search(text, timeout=timeout) is not None:
                return True
    return False


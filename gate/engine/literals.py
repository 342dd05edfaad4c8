"""Literals a regex cannot match without: the prefilter's keywords, derived.

`required(pattern, flags)` returns a set of lowercase strings such that every
match of the pattern, in any text, leaves one of them in `fold(text)`; or None
when no such set is known. The classifier finds every literal of every rule in
one pass over each turn (see gate/engine/prefilter.py) and runs a rule's regex only
when one of its literals is there. Soundness is all that matters here: a
literal that is not truly required would hide a match, so anything this module
does not fully understand yields None (no prefilter, the regex always runs).

The walk is RE2's prefilter idea: each node has an exact set (the strings it
can match, when few) and a required set (strings one of which any match
contains); a sequence concatenates exact sets and keeps its most selective
requirement; an alternation unions its branches' requirements.
"""

from __future__ import annotations

import re
import warnings

try:
    from re import _constants as _c, _parser as _sre_parse
except ImportError:  # pragma: no cover - Python < 3.11 (not supported)
    import sre_constants as _c
    import sre_parse as _sre_parse

# Characters that case-insensitively match an ASCII letter without lowering to
# it (checked over all of Unicode for both `re` and `regex`): fold them first.
_FOLD = str.maketrans({"\u0130": "i", "\u0131": "i", "\u017f": "s", "\u212a": "k"})

# Syntax only the `regex` package reads (or reads differently from `re`): a
# pattern using any of it gets no derived literals rather than wrong ones.
_REGEX_ONLY = ("\\p", "\\P", "\\X", "\\m", "\\M", "\\G", "\\L<", "\\N{", "(?|", "(?V", "(?r", "(?f",
               "(?w", "(?b", "(?e", "(?p", "(?(", "{e", "{i", "{d", "{s", "(*", "\\K")
_POSIX_CLASS = re.compile(r"\[:\^?[A-Za-z]+:\]")  # [[:alpha:]] in `regex`, a plain set in `re`

# Stands for "a digit": \d and [0-9] need one. It is not a string of the text: the
# scanner sets its bit for any ASCII digit, and always for non-ASCII text (whose
# digits `regex` knows better than we do). It never joins a longer literal.
DIGIT = "\x00digit"
# Words in nearly every sentence: a requirement made of them filters nothing, so a
# sequence prefers any other (a choice of speed only: both are sound).
_COMMON = frozenset("a an and are as at be but by do for from has have i if in is it no not of on or so "
                    "that the this to was we were with you".split())
_LINE_BREAKS = frozenset("\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029")  # where str.splitlines() splits
_EXACT_LIMIT = 64  # most strings an exact set may hold before it is given up
_CLASS_LIMIT = 16  # most characters a [class] may expand to


_MEMO: dict = {}  # (function, pattern, flags) -> result: the parse is the slow part


def _memoized(function):
    name = function.__name__

    def memoized(pattern: str, flags: int = 0):
        key = (name, pattern, flags)
        try:
            return _MEMO[key]
        except KeyError:
            result = _MEMO[key] = function(pattern, flags)
            return result

    memoized.__name__, memoized.__doc__ = name, function.__doc__
    return memoized


def known() -> dict:
    """Every result computed so far, for the compiled-revision cache to keep."""
    return dict(_MEMO)


def remember(results: dict) -> None:
    """Results read back from the cache: a hook does not parse its patterns again."""
    _MEMO.update(results)


def fold(text: str) -> str:
    """The text as literals are looked for in it: lowercase, special folds applied."""
    if text.isascii() or not ("\u0130" in text or "\u0131" in text or "\u017f" in text or "\u212a" in text):
        return text.lower()
    return text.translate(_FOLD).lower()


@_memoized
def required(pattern: str, flags: int = 0) -> frozenset | None:
    """A set of literals one of which every match contains (in `fold(text)`), or None."""
    if any(marker in pattern for marker in _REGEX_ONLY) or _POSIX_CLASS.search(pattern):
        return None
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            parsed = _sre_parse.parse(pattern, flags)
        _, req, _, _ = _sequence(list(parsed))
    except Exception:  # anything unexpected: no prefilter, never a wrong one
        return None
    if not req or any(len(s) == 1 and (s.isalnum() or s.isspace()) for s in req):
        return None  # a lone letter, digit or space is in every text: no use as a filter
    return frozenset(req)


@_memoized
def requirements(pattern: str, flags: int = 0) -> tuple:
    """Up to three sets of literals, each of which every match needs one of (a conjunction:
    `\\bwe\\s+decided\\b` needs "we" and "decided"); () when none is known."""
    if any(marker in pattern for marker in _REGEX_ONLY) or _POSIX_CLASS.search(pattern):
        return ()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            items = list(_sre_parse.parse(pattern, flags))
        while len(items) == 1 and items[0][0] is _c.SUBPATTERN:
            items = list(items[0][1][-1])
        candidates = []
        _, req, _, _ = _sequence(items, candidates)
    except Exception:  # anything unexpected: no prefilter, never a wrong one
        return ()
    if req is not None:
        candidates.append(req)
    useful, seen = [], set()
    for strings in sorted(candidates, key=lambda s: (min(_selectivity(x) for x in s), -len(s)), reverse=True):
        key = frozenset(strings)
        if key in seen or any(len(x) == 1 and (x.isalnum() or x.isspace()) for x in key):
            continue
        seen.add(key)
        useful.append(key)
    return tuple(useful[:3])


def digit_bit_set(folded: str) -> bool:
    """Whether DIGIT is present: any ASCII digit, or any non-ASCII text at all."""
    if not folded.isascii():
        return True
    return _ASCII_DIGIT.search(folded) is not None


_ASCII_DIGIT = re.compile("[0-9]")


def _char(code: int) -> str | None:
    """The folded literal for a character, or None when it cannot anchor a literal."""
    ch = chr(code)
    if ch in _LINE_BREAKS:
        return None  # turns are joined with newlines and split into lines: a literal never spans one
    if ch.isascii():
        return ch.lower()
    if ch.lower() == ch and ch.upper() == ch and ch.casefold() == ch and ch.translate(_FOLD) == ch:
        return ch  # uncased: it matches only itself, in any case mode
    return None


def _node(op, av):
    """(exact, required, prefixes, suffixes) for one parsed node.

    exact: every string the node can match, when few; required: strings one of
    which every match contains; prefixes / suffixes: strings one of which every
    match starts / ends with. Any of them may be None (unknown).
    """
    if op is _c.LITERAL:
        ch = _char(av)
        return ({ch}, {ch}, {ch}, {ch}) if ch is not None else _NOTHING
    if op is _c.AT or op is _c.ASSERT or op is _c.ASSERT_NOT:
        return {""}, None, None, None  # zero width: consumes nothing
    if op is _c.SUBPATTERN:
        return _sequence(list(av[-1]))
    if op is _c.ATOMIC_GROUP:
        return _sequence(list(av))
    if op is _c.BRANCH:
        return _alternation([_sequence(list(branch)) for branch in av[1]])
    if op is _c.IN:
        chars = _class(av)
        if chars and DIGIT in chars:  # a class with digits: a requirement, never part of a string
            return None, chars, None, None
        return (chars, _as_req(chars), _as_req(chars), _as_req(chars)) if chars else _NOTHING
    if op is _c.CATEGORY and av in (_c.CATEGORY_DIGIT, _c.CATEGORY_UNI_DIGIT):
        return None, {DIGIT}, None, None
    if op in (_c.MAX_REPEAT, _c.MIN_REPEAT, _c.POSSESSIVE_REPEAT):
        low, high, body = av
        exact, req, pre, suf = _sequence(list(body))
        if low == 0:
            if high == 1 and exact is not None and len(exact) < _EXACT_LIMIT:
                return exact | {""}, None, None, None
            return _NOTHING
        if exact is not None and low == high and len(exact) ** low <= _EXACT_LIMIT:
            out = {""}
            for _ in range(low):
                out = {a + b for a in out for b in exact}
            return out, _as_req(out), _as_req(out), _as_req(out)
        return None, req if req is not None else _as_req(exact), pre, suf
    return _NOTHING  # ANY, NOT_LITERAL, CATEGORY, GROUPREF...: no literal


_NOTHING = (None, None, None, None)


def _class(items):
    """The folded characters of a small, positive [class], or None."""
    chars = set()
    for op, av in items:
        if op is _c.NEGATE:
            return None
        if op is _c.LITERAL:
            codes = [av]
        elif op is _c.RANGE:
            if ord("0") <= av[0] and av[1] <= ord("9"):
                chars.add(DIGIT)
                continue
            if av[1] - av[0] >= _CLASS_LIMIT:
                return None
            codes = range(av[0], av[1] + 1)
        elif op is _c.CATEGORY and av in (_c.CATEGORY_DIGIT, _c.CATEGORY_UNI_DIGIT):
            chars.add(DIGIT)
            continue
        else:
            return None  # \w, \s inside a class
        for code in codes:
            ch = _char(code)
            if ch is None:
                return None
            chars.add(ch)
        if len(chars) > _CLASS_LIMIT:
            return None
    return chars or None


def _as_req(strings):
    if not strings or "" in strings:
        return None
    return set(strings)


def _product(left, right):
    """left x right, or None when either is unknown or the product is too big."""
    if left is None or right is None or len(left) * len(right) > _EXACT_LIMIT:
        return None
    return {a + b for a in left for b in right}


def _union(sets):
    if not sets or any(s is None for s in sets):
        return None
    out = set().union(*sets)
    return out if len(out) <= _EXACT_LIMIT * 4 else None


def _alternation(infos):
    exact = _union([e for e, _, _, _ in infos])
    if exact is not None and len(exact) > _EXACT_LIMIT:
        exact = None
    req = _union([r if r is not None else _as_req(e) for e, r, _, _ in infos])
    pre = _union([_as_req(p) for _, _, p, _ in infos])
    suf = _union([_as_req(x) for _, _, _, x in infos])
    return exact, req, pre, suf


def _sequence(items, collect=None):
    """Concatenation: runs of exact nodes are multiplied out; a run also joins the
    suffixes of the node before it and the prefixes of the node after it. Every
    requirement found is added to `collect` when given (all of them hold at once)."""
    infos = [_node(op, av) for op, av in items]
    if all(e is not None for e, _, _, _ in infos):
        exact = {""}
        for e, _, _, _ in infos:
            exact = _product(exact, e)
            if exact is None:
                break
        if exact is not None:
            return exact, _as_req(exact), _as_req(exact), _as_req(exact)
    candidates = []
    run = {""}  # strings every match has here: suffix of the last inexact node + exact nodes since
    starts = {""}  # the same from the start of the sequence, while nothing inexact came before
    first_inexact = True
    prefix = None
    for exact, req, pre, suf in infos:
        if exact is not None:
            grown = _product(run, exact)
            if grown is None:  # too many: keep what we had as a candidate, start again from here
                _add(candidates, run)
                grown = set(exact)
            run = grown
            if first_inexact and starts is not None:
                starts = _product(starts, exact)
            continue
        joined = _product(run, pre) if pre else None
        _add(candidates, joined if _as_req(joined) else run)
        if req is not None:
            candidates.append(req)
        if first_inexact:
            prefix = _product(starts, pre) if pre and starts is not None else starts
            first_inexact = False
        run = set(suf) if suf else {""}
    _add(candidates, run)
    suffix = run if _as_req(run) else None
    if collect is not None:
        collect.extend(candidates)
    return None, _best(candidates), _as_req(prefix), suffix


def _add(candidates, strings):
    req = _as_req(strings)
    if req is not None:
        candidates.append(req)


def _best(candidates):
    """The most selective requirement: long shortest literal, then few literals."""
    if not candidates:
        return None
    return max(candidates, key=lambda s: (min(_selectivity(x) for x in s), -len(s)))


def _selectivity(literal: str) -> int:
    if literal == DIGIT:
        return 3  # rarer in prose than a common word, commoner than a long one
    if literal.strip(" \t") in _COMMON:
        return 1
    return min(len(literal), 6)


# -- top-level alternatives ------------------------------------------------------------
#
# `regex` tries every branch of an alternation at every position, so one search
# for A|B|C costs more than three searches, each of which can skip ahead to where
# its own branch may start. A text matches A|B|C when it matches A, B or C, so a
# yes/no search may run the branches one by one, each behind its own literals.

_GROUP_REFERENCE = re.compile(r"\\[1-9]|\\g<|\(\?P=|\(\?&|\(\?R\)|\(\?[+-]?[0-9]+\)")
_GLOBAL_FLAGS = re.compile(r"\(\?[aiLmsuxV01-]+\)")  # (?i) applies to the whole pattern, not one branch


@_memoized
def alternatives(pattern: str, flags: int = 0) -> tuple | None:
    """The pattern's top-level alternatives, flattened through a group that is a whole
    alternative; None when the pattern cannot be split safely (group references,
    global inline flags, verbose mode, syntax of `regex` alone)."""
    if (flags & re.VERBOSE or "(?#" in pattern or _GROUP_REFERENCE.search(pattern) or _GLOBAL_FLAGS.search(pattern)
            or any(marker in pattern for marker in _REGEX_ONLY) or _POSIX_CLASS.search(pattern)):
        return None
    out = []
    pieces = _split_top(pattern)
    if pieces is None:
        return None
    for piece in pieces:
        inner = _whole_group(piece)
        deeper = _split_top(inner) if inner is not None else None
        if deeper is not None and len(deeper) > 1:
            more = alternatives(inner, flags)
            if more is None:
                return None
            out.extend(more)
        else:
            out.append(piece)
    return tuple(out)


def _brackets(pattern: str) -> list[tuple[int, str]] | None:
    """(index, char) of every `(`, `)` and `|` outside escapes and [classes]; None if a class
    does not close. The one scanner both splitters below read."""
    out, i, n = [], 0, len(pattern)
    while i < n:
        ch = pattern[i]
        if ch == "\\":
            i += 2
            continue
        if ch == "[":
            i = _class_end(pattern, i)
            if i < 0:
                return None
            continue
        if ch in "()|":
            out.append((i, ch))
        i += 1
    return out


def _split_top(pattern: str) -> list[str] | None:
    """Split at every `|` outside groups and classes; None if the pattern does not scan."""
    marks = _brackets(pattern)
    if marks is None:
        return None
    pieces, depth, start = [], 0, 0
    for i, ch in marks:
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
            if depth < 0:
                return None
        elif depth == 0:
            pieces.append(pattern[start:i])
            start = i + 1
    if depth != 0:
        return None
    pieces.append(pattern[start:])
    return pieces


def _class_end(pattern: str, i: int) -> int:
    """The index just past the [class] that starts at i, or -1."""
    j = i + 1
    if j < len(pattern) and pattern[j] == "^":
        j += 1
    if j < len(pattern) and pattern[j] == "]":  # a leading ] is a literal
        j += 1
    while j < len(pattern):
        ch = pattern[j]
        if ch == "\\":
            j += 2
            continue
        if ch == "[":  # nested sets are `regex` V1 only; V0 reads a literal [, but do not guess
            return -1
        if ch == "]":
            return j + 1
        j += 1
    return -1


def _whole_group(piece: str) -> str | None:
    """The inside of `(?:...)` when that group is the whole piece (no quantifier after it)."""
    if not piece.startswith("(?:") or not piece.endswith(")"):
        return None
    marks = _brackets(piece)
    if marks is None:
        return None
    depth = 0
    for i, ch in marks:
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
            if depth == 0:
                return piece[3:-1] if i == len(piece) - 1 else None
    return None


# -- backtracking ----------------------------------------------------------------------

_REPEATS = (_c.MAX_REPEAT, _c.MIN_REPEAT, _c.POSSESSIVE_REPEAT)


def _parsed(pattern: str, flags: int):
    """The pattern's parse tree as the stdlib reads it, or None when that reading could be
    wrong (syntax only the regex package knows) or fails."""
    if any(marker in pattern for marker in _REGEX_ONLY) or _POSIX_CLASS.search(pattern) \
            or _GROUP_REFERENCE.search(pattern):
        return None
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            return list(_sre_parse.parse(pattern, flags))
    except Exception:
        return None


@_memoized
def nested_repeats(pattern: str, flags: int = 0) -> bool:
    """Whether a repetition holds another repetition or an alternation (`(a+)+`,
    `(a|aa)*`, `(\\w+\\s){0,3}`): the shapes that can backtrack worse than
    polynomially. Also True for anything not understood."""
    items = _parsed(pattern, flags)
    return True if items is None else _nested(items, False)


def _nested(items, inside: bool) -> bool:
    for op, av in items:
        if op in _REPEATS:
            low, high, body = av
            if high > 1 and inside:  # a repetition inside a repetition
                return True
            if _nested(list(body), inside or high > 1):
                return True
        elif op is _c.SUBPATTERN:
            if _nested(list(av[-1]), inside):
                return True
        elif op is _c.ATOMIC_GROUP or op is _c.ASSERT or op is _c.ASSERT_NOT:
            if _nested(list(av if op is _c.ATOMIC_GROUP else av[1]), inside):
                return True
        elif op is _c.BRANCH:
            if inside:
                return True
            if any(_nested(list(branch), inside) for branch in av[1]):
                return True
        elif op in (_c.GROUPREF, _c.GROUPREF_EXISTS):
            return True
    return False



@_memoized
def may_explode(pattern: str, flags: int = 0) -> bool:
    """Whether an unbounded repetition holds another repetition or an alternation
    (`(x+x+)+y`, `^(a|aa)+$`): the patterns that can run for ever. They get no derived
    literals, so they run (and time out, and are reported) exactly as without the
    prefilter. Also True for anything not understood."""
    items = _parsed(pattern, flags)
    return True if items is None else _explodes(items, False)


def _explodes(items, inside: bool) -> bool:
    for op, av in items:
        if op in _REPEATS:
            low, high, body = av
            if inside and high > 1:
                return True
            body = list(body)
            # `(?:[A-Z]+ )*` cannot backtrack much: every round ends at a space the
            # inner repetition cannot take, so rounds cannot trade characters.
            if _explodes(body, inside or (high == _c.MAXREPEAT and not _delimited(body))):
                return True
        elif op is _c.SUBPATTERN:
            if _explodes(list(av[-1]), inside):
                return True
        elif op is _c.ATOMIC_GROUP:
            if _explodes(list(av), inside):
                return True
        elif op is _c.ASSERT or op is _c.ASSERT_NOT:
            if _explodes(list(av[1]), inside):
                return True
        elif op is _c.BRANCH:
            if inside:
                return True
            if any(_explodes(list(branch), inside) for branch in av[1]):
                return True
        elif op in (_c.GROUPREF, _c.GROUPREF_EXISTS):
            return True
    return False


def _delimited(items) -> bool:
    """Whether a sequence has a literal character, outside any repetition or
    alternation, that nothing repeated inside it can match."""
    for op, av in _flat(items):
        if op is _c.LITERAL:
            codes = [av]
        elif op is _c.IN and all(o is _c.LITERAL or (o is _c.RANGE and a[1] - a[0] < 16) for o, a in av):
            codes = [c for o, a in av for c in ([a] if o is _c.LITERAL else range(a[0], a[1] + 1))]
        else:
            continue
        if not any(_may_match(items, code) for code in codes):
            return True
    return False


def _flat(items):
    for op, av in items:
        if op is _c.SUBPATTERN:
            yield from _flat(list(av[-1]))
        else:
            yield op, av


def _may_match(items, code: int) -> bool:
    """Whether a repetition or alternation in `items` may consume chr(code) (True when unsure)."""
    for op, av in items:
        if op in _REPEATS:
            if _consumes(list(av[2]), code):
                return True
        elif op is _c.BRANCH:
            if any(_consumes(list(branch), code) for branch in av[1]):
                return True
        elif op is _c.SUBPATTERN:
            if _may_match(list(av[-1]), code):
                return True
        elif op is _c.ATOMIC_GROUP:
            if _consumes(list(av), code):
                return True
    return False


def _consumes(items, code: int) -> bool:
    """Whether anything in `items` may match chr(code), case-insensitively (True when unsure)."""
    variants = {chr(code), chr(code).lower(), chr(code).upper()}
    for op, av in items:
        if op is _c.LITERAL:
            if chr(av) in variants or chr(av).lower() in variants or chr(av).upper() in variants:
                return True
        elif op is _c.IN:
            try:
                pattern = re.compile(_sre_class(av), re.IGNORECASE)
            except Exception:
                return True
            if any(pattern.fullmatch(v) for v in variants):
                return True
        elif op in _REPEATS:
            if _consumes(list(av[2]), code):
                return True
        elif op is _c.SUBPATTERN:
            if _consumes(list(av[-1]), code):
                return True
        elif op is _c.BRANCH:
            if any(_consumes(list(branch), code) for branch in av[1]):
                return True
        elif op in (_c.AT, _c.ASSERT, _c.ASSERT_NOT):
            continue
        else:
            return True  # ANY, CATEGORY outside a class, NOT_LITERAL, ...: assume it may
    return False


def _sre_class(items) -> str:
    """A parsed [class] back as regex text (only what _consumes needs)."""
    out = []
    for op, av in items:
        if op is _c.NEGATE:
            out.append("^")
        elif op is _c.LITERAL:
            out.append(re.escape(chr(av)))
        elif op is _c.RANGE:
            out.append(f"{re.escape(chr(av[0]))}-{re.escape(chr(av[1]))}")
        elif op is _c.CATEGORY:
            out.append({_c.CATEGORY_DIGIT: r"\d", _c.CATEGORY_NOT_DIGIT: r"\D", _c.CATEGORY_SPACE: r"\s",
                        _c.CATEGORY_NOT_SPACE: r"\S", _c.CATEGORY_WORD: r"\w", _c.CATEGORY_NOT_WORD: r"\W",
                        _c.CATEGORY_UNI_DIGIT: r"\d", _c.CATEGORY_UNI_NOT_DIGIT: r"\D",
                        _c.CATEGORY_UNI_SPACE: r"\s", _c.CATEGORY_UNI_NOT_SPACE: r"\S",
                        _c.CATEGORY_UNI_WORD: r"\w", _c.CATEGORY_UNI_NOT_WORD: r"\W"}[av])
        else:
            raise ValueError("unexpected class item")
    return "[" + "".join(out) + "]"

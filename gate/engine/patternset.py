"""Every pattern of a revision searched in one pass (RE2::Set), where RE2 and `regex` agree.

The keyword prefilter (gate/engine/prefilter.py) proves most patterns cannot match, but
common words ("the", "so", "we") let many through, and each then costs a
`regex` search. An RE2 set answers "which of these patterns match this text?"
for all of them in one linear pass, so a subject costs one scan instead of
twenty searches.

Two engines agree only where their semantics do, so the set answers exactly only
for *plain* text: ASCII printable characters, tab, newline and carriage return,
and non-ASCII punctuation and symbols that are not word, digit or space
characters and have no case ("’", "—", "→", "✓"). There `\\w`, `\\b`, `\\s`, `\\d`
and case folding mean the same in both. Other text (accented letters, CJK,
control characters) is read with an ASCII stand-in for each such character, one
of its kind (a word character reads '_', a space ' '...), and scanned with each
pattern's *wide* form, which matches there wherever the pattern matches the
original: its hits carry the WIDE bit and are only maybes, confirmed by `regex`;
a miss still proves absence. Text longer than SET_MAX gets None and takes the
prefilter path.

Patterns are translated from the standard library's parse tree (the one
gate/literals.py reads), so what RE2 sees is what `regex` would run:
- exact: the translation matches exactly where the pattern does; a hit is a match;
- relaxed: lookarounds dropped, possessive and atomic groups made plain, long
  bounded repeats opened, the top-level sequence cut at its gaps into pieces
  that must each match: it matches wherever the pattern does, and maybe
  elsewhere; a miss proves no match, a hit is confirmed by searching the pattern
  alone (with RE2 when it translates exactly whole, else with `regex`);
- absent (None): syntax not understood (group references, `regex`-only syntax):
  the pattern is searched as before.
A pattern that judges lines one by one (line_share) searches each line stripped
of its surrounding whitespace, where `^` and `\\A` hold at the line's first
non-blank character. Its line form reads every such anchor as "a line edge,
past the blanks that begin or end the line", so wherever the pattern matches a
stripped line, the line form matches the whole text: a miss proves no line
matches. On one stripped line alone the line form is the pattern itself, so its
`exact` says whether a hit on that line is a match there.
"""

from __future__ import annotations

import re
import unicodedata
import warnings

from gate.engine.literals import _GROUP_REFERENCE, _POSIX_CLASS, _REGEX_ONLY, _c, _memoized, _sre_parse

_UNLOADED = object()
_re2 = _UNLOADED  # the google-re2 module, imported on first need: a one-window hook never needs it


def _engine():
    """The re2 module, or None when it is not installed (then every search takes the
    prefilter path: same decisions, only slower)."""
    global _re2
    if _re2 is _UNLOADED:
        try:
            import re2 as module
        except ImportError:  # pragma: no cover - a dependency; this keeps a broken install working
            module = None
        _re2 = module
    return _re2


SET_MAX = 65_536  # characters: longer text takes the prefilter path (the oversized-paste rule strips turns over 60,000)
_RE2_REPEAT_MAX = 1000  # RE2 refuses bounded repeats above this
# A bounded repeat such as [^.\n]{0,80} multiplies the set's DFA states (and its
# memory and time) by its bound; opened to {0,} it costs nothing, and the
# pattern becomes relaxed (a hit is confirmed by `regex`).
OPEN_REPEATS_ABOVE = 8
# Bytes for a set's RE2 program and DFA. A full DFA is reset, and the scans right after it
# build their states again (a 50 KB paste then took 85 ms at 32 MB); one that fills too fast
# fails, and the scan answers None.
_SET_MEMORY = 64 << 20
# Pieces per RE2 set: a group's pieces are scanned as several sets of this many. A set's
# DFA state is a combination of its pieces' states, so on text it has not seen its new
# states multiply with its size; on fresh windows of benchmarks/corpus.py, sets of 32
# cost v2.30 less than half the time one set per group did, and v2.3 two thirds.
SET_CHUNK = 32
# Scan groups: what turn rules ask of each turn, what window rules and signals ask
# of the kept turns (one group per role scope: a rule about the person's words reads
# only their text), what tool_io asks of the tool calls and results. Each is a set
# of its own: a text is scanned only for what the rules that read it need, and a
# smaller set's DFA stays in the CPU's caches (a set's scan slows faster than it grows).


def window_group(role: str) -> str:
    """The scan group of a window rule or signal that reads the turns of `role`."""
    return "window" if role == "any" else f"window:{role}"


_FLAG_LETTERS = ((re.IGNORECASE, "i"), (re.MULTILINE, "m"), (re.DOTALL, "s"))

# Plain text, for `regex` and RE2 alike: anything else makes the set answer None.
_NOT_PRINTABLE_ASCII = re.compile(r"[^\t\n\r\x20-\x7e]")
_STANDS_IN = re.compile(r"[^\x00-\x0a\x0c-\x7f]")  # read with a stand-in in text that is not plain
_PLAIN_CHAR: dict = {}  # non-ASCII character -> whether plain text may hold it


def is_plain(text: str) -> bool:
    if text.isascii():
        return _NOT_PRINTABLE_ASCII.search(text) is None
    for ch in set(_NOT_PRINTABLE_ASCII.findall(text)):
        verdict = _PLAIN_CHAR.get(ch)
        if verdict is None:
            verdict = _PLAIN_CHAR[ch] = _plain_char(ch)
        if not verdict:
            return False
    return True


def _plain_char(ch: str) -> bool:
    """A non-ASCII punctuation or symbol character that no engine reads as a word, digit
    or space character, and that has no case."""
    import regex

    return (ch >= "\x80" and unicodedata.category(ch)[0] in "PS"
            and regex.match(r"[\w\s\d\p{Cased}\p{Changes_When_Casefolded}\p{Changes_When_Casemapped}]", ch) is None
            and re.match(r"[\w\s\d]", ch) is None)


class Translation(tuple):
    """(pieces, exact): a pattern in RE2 syntax, as one or more pieces that must all
    match, and whether a match of the pieces is a match of the original. A plain tuple
    underneath, so the cache stores it without this class."""

    __slots__ = ()

    def __new__(cls, pieces: tuple, exact: bool):
        return tuple.__new__(cls, (pieces, exact))

    pieces = property(lambda self: self[0])
    exact = property(lambda self: self[1])


def translate(pattern: str, flags: int, *, lines: bool = False, whole: bool = False,
              wide: bool = False) -> Translation | None:
    """The RE2 form of a `regex` pattern, or None when it is not understood.

    For the set, the pattern's top-level sequence is cut at each gap (a run of
    "anything but a few characters", such as `[^.\\n]{0,80}` or `.*`): the pieces
    between gaps are required one by one. A set holding whole gapped patterns needs
    a DFA state for every combination of gaps open at once, which costs hundreds of
    MB and µs. `whole=True` keeps the pattern whole and its repeats bounded, for
    searching it alone. `wide=True` writes the form for text that is not plain
    (see _Writer): never exact."""
    if (any(marker in pattern for marker in _REGEX_ONLY) or _POSIX_CLASS.search(pattern)
            or _GROUP_REFERENCE.search(pattern)):
        return None
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            parsed = _sre_parse.parse(pattern, flags & (re.IGNORECASE | re.MULTILINE | re.DOTALL | re.VERBOSE))
        global_flags = parsed.state.flags
        if global_flags & (re.LOCALE | re.ASCII):  # ASCII would do on plain text, but keep it simple
            return None
        writer = _Writer(lines, open_above=_RE2_REPEAT_MAX if whole else OPEN_REPEATS_ABOVE, wide=wide,
                         multiline=bool(global_flags & re.MULTILINE))
        pieces = [writer.sequence(list(parsed))] if whole else writer.pieces(list(parsed))
    except Exception:  # _Untranslatable, or anything the parser or the walk does not expect: not in the set
        return None
    if not pieces:
        return None
    prefix = "".join(letter for flag, letter in _FLAG_LETTERS if global_flags & flag)
    prefix = f"(?{prefix})" if prefix else ""
    return Translation(tuple(prefix + piece for piece in pieces), writer.exact and len(pieces) == 1 and not wide)


_CONSUMING = (_c.LITERAL, _c.NOT_LITERAL, _c.ANY, _c.IN, _c.BRANCH, _c.SUBPATTERN, _c.MAX_REPEAT, _c.MIN_REPEAT,
              _c.POSSESSIVE_REPEAT, _c.ATOMIC_GROUP)


def _is_gap(op, av) -> bool:
    """A long repeat of a broad character set: `.*`, `[^.\\n]{0,80}`, `[^:]+`."""
    if op not in (_c.MAX_REPEAT, _c.MIN_REPEAT, _c.POSSESSIVE_REPEAT):
        return False
    _, high, inner = av
    if high is not _c.MAXREPEAT and high <= OPEN_REPEATS_ABOVE:
        return False
    inner = list(inner)
    if len(inner) != 1:
        return False
    kind, value = inner[0]
    return kind in (_c.ANY, _c.NOT_LITERAL) or (kind is _c.IN and any(op is _c.NEGATE for op, _ in value))


def _without_optional_edges(items: list) -> list:
    """`items` less the leading and trailing nodes that match the empty string wherever
    they stand: an unanchored search finds the rest wherever it found the whole."""
    start, end = 0, len(items)
    while start < end and _empty_anywhere(*items[start]):
        start += 1
    while end > start and _empty_anywhere(*items[end - 1]):
        end -= 1
    return items[start:end]


def _empty_anywhere(op, av) -> bool:
    """Whether the node matches the empty string at every position (no anchor, no lookaround)."""
    if op in (_c.MAX_REPEAT, _c.MIN_REPEAT):  # not possessive: `a*+a` matches nowhere
        return av[0] == 0
    if op is _c.SUBPATTERN:
        return all(_empty_anywhere(*item) for item in av[3])
    if op is _c.BRANCH:
        return any(all(_empty_anywhere(*item) for item in branch) for branch in av[1])
    return False


class _Untranslatable(Exception):
    pass


class _Writer:
    """The parse tree written back in RE2 syntax; `exact` turns False on any relaxation.

    `wide`: for text that is not plain, which is scanned with every non-ASCII
    character replaced by an ASCII stand-in of the same kind (see stand_in): the
    form matches the stand-in text wherever the pattern matches the original. A
    non-ASCII literal or range becomes the stand-ins of its characters; a negated
    class or character that excludes a stand-in by name (not by a category, which
    holds the whole kind) takes it back in, since the stand-in may be another
    character of its kind."""

    def __init__(self, lines: bool, open_above: int = OPEN_REPEATS_ABOVE, wide: bool = False,
                 multiline: bool = True):
        self.lines, self.exact, self.open_above, self.wide = lines, True, open_above, wide
        self.multiline = multiline  # in the scope being written (`$` depends on it)

    def sequence(self, items) -> str:
        return "".join(self.node(op, av) for op, av in items)

    def pieces(self, items) -> list[str]:
        """The top-level sequence cut at its gaps; pieces that consume nothing are left out.

        A piece's optional edges are left out too: `(?:\\w+\\s+){0,3}eta` is somewhere in a
        text exactly where `eta` is, and the set only asks whether a piece is there,
        while a counted run at its edge multiplies the set's DFA states."""
        out, current = [], []
        for op, av in items + [(None, None)]:
            if op is None or _is_gap(op, av):
                current = _without_optional_edges(current)
                if any(op in _CONSUMING for op, _ in current):
                    out.append(self.sequence(current))
                elif current:
                    self.exact = False  # only anchors: nothing to require on their own
                if op is not None:
                    self.exact = False
                current = []
                continue
            current.append((op, av))
        return out

    def node(self, op, av) -> str:
        if op is _c.LITERAL:
            return _wide_literal(av) if self.wide else _literal(av)
        if op is _c.NOT_LITERAL:
            if self.wide and (av >= 0x80 or chr(av) in _STAND_INS_FOLDED):
                return "(?s:.)"  # any other character of its kind may stand where it is
            return "[^" + _class_char(av) + "]"
        if op is _c.ANY:
            return "."
        if op is _c.IN:
            return _wide_class(av) if self.wide else _class(av)
        if op is _c.BRANCH:
            return "(?:" + "|".join(self.sequence(list(branch)) for branch in av[1]) + ")"
        if op is _c.SUBPATTERN:
            _, add, remove, inner = av
            on = "".join(letter for flag, letter in _FLAG_LETTERS if add & flag)
            off = "".join(letter for flag, letter in _FLAG_LETTERS if remove & flag)
            if (add | remove) & ~(re.IGNORECASE | re.MULTILINE | re.DOTALL | re.VERBOSE | re.UNICODE):
                raise _Untranslatable
            outer = self.multiline
            self.multiline = bool(add & re.MULTILINE) or (outer and not remove & re.MULTILINE)
            try:
                return "(?" + on + ("-" + off if off else "") + ":" + self.sequence(list(inner)) + ")"
            finally:
                self.multiline = outer
        if op in (_c.MAX_REPEAT, _c.MIN_REPEAT, _c.POSSESSIVE_REPEAT):
            low, high, inner = av
            if op is _c.POSSESSIVE_REPEAT:
                self.exact = False  # a possessive repeat can fail where a greedy one matches
            # lazy or greedy, a match exists in the same places: greedy is written
            return "(?:" + self.sequence(list(inner)) + ")" + self.repeat(low, high)
        if op is _c.ATOMIC_GROUP:
            self.exact = False
            return "(?:" + self.sequence(list(av)) + ")"
        if op in (_c.ASSERT, _c.ASSERT_NOT):
            self.exact = False  # dropped: the pattern without it matches wherever it did
            return ""
        if op is _c.AT:
            return self.anchor(av)
        raise _Untranslatable  # group references, conditionals, anything new

    def repeat(self, low: int, high) -> str:
        if low > _RE2_REPEAT_MAX:
            raise _Untranslatable
        if high is _c.MAXREPEAT or high > self.open_above:
            if high is not _c.MAXREPEAT:
                self.exact = False
            return "*" if low == 0 else "+" if low == 1 else "{%d,}" % low
        if (low, high) == (0, 1):
            return "?"
        return "{%d}" % low if low == high else "{%d,%d}" % (low, high)

    def anchor(self, code) -> str:
        if code is _c.AT_BOUNDARY:
            return r"\b"
        if code is _c.AT_NON_BOUNDARY:
            return r"\B"
        # Wide: where str.splitlines ends a line, and the blanks str.strip removes (stand-ins included).
        if self.lines and self.wide and code in (_c.AT_BEGINNING, _c.AT_BEGINNING_STRING):
            return r"(?:(?m:^)|[\r\x0b\x0c\x1c-\x1e])[\t-\r\x1c-\x20]*"
        if self.lines and self.wide and code in (_c.AT_END, _c.AT_END_STRING):
            return r"[\t-\r\x1c-\x20]*(?:(?m:$)|[\r\x0b\x0c\x1c-\x1e])"
        # A stripped line starts after the blanks that began it; in plain text lines
        # end at \n or \r, so those blanks are spaces and tabs. On one stripped line
        # alone this is the anchor itself, so a line form's `exact` is about one line.
        if self.lines and code in (_c.AT_BEGINNING, _c.AT_BEGINNING_STRING):
            return r"(?:(?m:^)|\r)[ \t]*"
        if self.lines and code in (_c.AT_END, _c.AT_END_STRING):
            return r"[ \t]*(?:(?m:$)|\r)"
        if code is _c.AT_BEGINNING:
            return "^"
        if code is _c.AT_END:
            if self.multiline:
                return "$"
            # Outside multiline, `regex` also matches `$` before a final newline, RE2 does
            # not; RE2's line end matches there and before any other newline too.
            self.exact = False
            return "(?m:$)"
        if code is _c.AT_BEGINNING_STRING:
            return r"\A"
        if code is _c.AT_END_STRING:
            return r"\z"
        raise _Untranslatable


_CATEGORIES = {
    _c.CATEGORY_DIGIT: r"\d", _c.CATEGORY_NOT_DIGIT: r"\D", _c.CATEGORY_SPACE: r"\s",
    _c.CATEGORY_NOT_SPACE: r"\S", _c.CATEGORY_WORD: r"\w", _c.CATEGORY_NOT_WORD: r"\W",
}


# For text that is not plain (see _Writer): each non-ASCII character is read as an
# ASCII stand-in of its kind, so \w, \d, \s and \b hold where they held for `regex`
# (and so RE2's ASCII classes are exact on the stand-in text): a word character
# reads '_', a digit '0', a space ' ', a line break (as str.splitlines sees it)
# '\f', anything else '\x7f'; İ, ı, ſ and K, which `regex` matches with i, I, s
# and k case-insensitively, read as those letters. The vertical tab, a space to
# `regex` but not to RE2, reads '\f' too.
_FOLDED = {"\u0130": "i", "\u0131": "i", "\u017f": "s", "\u212a": "k"}
_STAND_INS = "_0 \x0c\x7fisk"
_STAND_INS_FOLDED = _STAND_INS + "ISK"
_STAND_IN: dict = {}  # non-ASCII character -> its stand-in
# Which categories hold each stand-in's whole kind: a class that excludes one of them
# excludes the stand-in rightly; one that excludes it only by name must take it back.
_KIND_IN = {
    "_": (_c.CATEGORY_WORD, _c.CATEGORY_NOT_SPACE, _c.CATEGORY_NOT_DIGIT),
    "0": (_c.CATEGORY_WORD, _c.CATEGORY_DIGIT, _c.CATEGORY_NOT_SPACE),
    " ": (_c.CATEGORY_SPACE, _c.CATEGORY_NOT_WORD, _c.CATEGORY_NOT_DIGIT),
    "\x0c": (_c.CATEGORY_SPACE, _c.CATEGORY_NOT_WORD, _c.CATEGORY_NOT_DIGIT),
    "\x7f": (_c.CATEGORY_NOT_WORD, _c.CATEGORY_NOT_SPACE, _c.CATEGORY_NOT_DIGIT),
}
for _letter in "isk":  # the fold letters stand for themselves too: only \w and co. hold them whole
    _KIND_IN[_letter] = (_c.CATEGORY_WORD, _c.CATEGORY_NOT_SPACE, _c.CATEGORY_NOT_DIGIT)
_RANGE_SCAN_MAX = 0x3000  # a longer non-ASCII range may hold any kind


def stand_in(ch: str) -> str:
    found = _STAND_IN.get(ch)
    if found is None:
        import regex

        if ch in _FOLDED:
            found = _FOLDED[ch]
        elif regex.match(r"\d", ch):
            found = "0"
        elif regex.match(r"\w", ch):
            found = "_"
        elif ch in "\x0b\x85\u2028\u2029":
            found = "\x0c"
        elif regex.match(r"\s", ch):
            found = " "
        else:
            found = "\x7f"
        _STAND_IN[ch] = found
    return found


def _stand_ins(low: int, high: int) -> set:
    """The stand-ins of the non-ASCII characters in [low, high] and of their case variants."""
    low = max(low, 0x80)
    if high < low:
        return set()
    if high - low > _RANGE_SCAN_MAX:
        return set(_STAND_INS)
    found = set()
    for code in range(low, high + 1):
        if not 0xD800 <= code <= 0xDFFF:
            ch = chr(code)
            found.update(stand_in(v) for v in {ch, ch.lower(), ch.upper()} if len(v) == 1 and v >= "\x80")
    return found


def _chars(chars) -> str:
    return "".join(_class_char(ord(ch)) for ch in sorted(chars))


def _wide_literal(code: int) -> str:
    if code < 0x80:
        return _literal(code)
    found = _stand_ins(code, code)
    return _literal(ord(next(iter(found)))) if len(found) == 1 else "[" + _chars(found) + "]"


def _wide_class(items) -> str:
    negate = any(op is _c.NEGATE for op, _ in items)
    out, extra, named, categories = [], set(), set(), set()  # named: stand-ins the class names
    for op, av in items:
        if op is _c.LITERAL:
            if av < 0x80:
                out.append(_class_char(av))
                named.add(chr(av))
            else:
                extra |= _stand_ins(av, av)
        elif op is _c.RANGE:
            low, high = av
            if low < 0x80:
                out.append(_class_char(low) + "-" + _class_char(min(high, 0x7f)))
                named.update(ch for ch in _STAND_INS_FOLDED if low <= ord(ch) <= min(high, 0x7f))
            extra |= _stand_ins(low, high)
        elif op is _c.CATEGORY and av in _CATEGORIES:
            out.append(_CATEGORIES[av])
            categories.add(av)
        elif op is not _c.NEGATE:
            raise _Untranslatable
    if not negate:
        return "[" + "".join(out) + _chars(extra - named) + "]"
    # Excluded by name only (either case: the class may be case-insensitive): the stand-in
    # may be another character, which the class accepts.
    back = {ch for ch in map(str.lower, named) if ch in _KIND_IN and not categories.intersection(_KIND_IN[ch])}
    if not out:
        return "(?s:.)"  # [^é]: any character
    body = "[^" + "".join(out) + "]"
    return "(?:" + body + "|[" + _chars(back) + "])" if back else body


def _literal(code: int) -> str:
    ch = chr(code)
    if ch.isascii() and (ch.isalnum() or ch in " _"):
        return ch
    return r"\x{%x}" % code


def _class_char(code: int) -> str:
    ch = chr(code)
    return ch if ch.isascii() and ch.isalnum() else r"\x{%x}" % code


def _class(items) -> str:
    out, negate = [], False
    for op, av in items:
        if op is _c.NEGATE:
            negate = True
        elif op is _c.LITERAL:
            out.append(_class_char(av))
        elif op is _c.RANGE:
            out.append(_class_char(av[0]) + "-" + _class_char(av[1]))
        elif op is _c.CATEGORY and av in _CATEGORIES:
            out.append(_CATEGORIES[av])
        else:
            raise _Untranslatable
    return "[" + ("^" if negate else "") + "".join(out) + "]"


class SetBuilder:
    """Patterns in, bits out, while a revision compiles; `scanner()` once it is done.

    Each distinct RE2 piece gets one bit. `add` returns (mask, exact): the pattern
    can match only where every bit of `mask` hits; (0, False) when the pattern
    stays out of the set. A piece also joins a scan group (see window_group): each group is
    scanned as a set of its own, so a turn is scanned only for what turn rules ask,
    and a smaller set's DFA is faster."""

    def __init__(self):
        self.bits: dict[str, int] = {}  # RE2 piece -> its bit
        self.patterns: list[str] = [""]  # RE2 pieces, in bit order; bit 0 is WIDE, no piece's
        self.wide: list = [None]  # each piece's form for text that is not plain, or None
        self.groups: dict[str, set] = {}  # scan group -> piece indexes

    def translation(self, pattern: str, flags: int, *, lines: bool = False) -> tuple | None:
        return (_set_line_form if lines else _set_form)(pattern, flags)

    def add(self, pattern: str, flags: int, *, lines: bool = False, group: str = "window") -> tuple[int, bool]:
        translation = self.translation(pattern, flags, lines=lines)
        if translation is None:
            return 0, False
        pieces, exact = translation
        wide = (_set_wide_line_form if lines else _set_wide_form)(pattern, flags)
        wide = wide[0] if wide is not None and len(wide[0]) == len(pieces) else (None,) * len(pieces)
        mask, members = 0, self.groups.setdefault(group, set())
        for piece, wide_piece in zip(pieces, wide):
            bit = self.bits.get(piece)
            if bit is None:
                bit = self.bits[piece] = 1 << len(self.patterns)
                self.patterns.append(piece)
                self.wide.append(wide_piece)
            index = bit.bit_length() - 1
            if self.wide[index] is None:  # a piece met first in a line form may have one now
                self.wide[index] = wide_piece
            members.add(index)
            mask |= bit
        return mask, exact

    def key_bit(self, mask: int) -> int:
        """The bit of the longest piece in `mask`: one bit that must hit, likely the rarest."""
        pieces = []
        while mask:
            low = mask & -mask
            pieces.append((len(self.patterns[low.bit_length() - 1]), low))
            mask ^= low
        return max(pieces)[1] if pieces else 0

    def scanner(self) -> "SetScanner | None":
        if len(self.patterns) == 1:
            return None
        groups = {group: tuple(sorted(members)) for group, members in self.groups.items()}
        return SetScanner(tuple(self.patterns), groups, tuple(self.wide))


# Memoized with gate/engine/literals.py's results, so the compiled-revision cache keeps them
# and a hook does not parse its patterns again.
@_memoized
def _set_form(pattern: str, flags: int = 0) -> tuple | None:
    return _checked(translate(pattern, flags))


@_memoized
def _set_line_form(pattern: str, flags: int = 0) -> tuple | None:
    return _checked(translate(pattern, flags, lines=True))


@_memoized
def _set_wide_form(pattern: str, flags: int = 0) -> tuple | None:
    return _checked(translate(pattern, flags, wide=True))


@_memoized
def _set_wide_line_form(pattern: str, flags: int = 0) -> tuple | None:
    return _checked(translate(pattern, flags, lines=True, wide=True))


def _checked(translation) -> tuple | None:
    """The translation as a plain tuple, if RE2 compiles every piece of it."""
    if translation is None or not all(map(_compiles, translation.pieces)):
        return None
    return tuple(translation)


@_memoized
def _whole_form(pattern: str, flags: int = 0) -> str | None:
    """The pattern whole in RE2 syntax, when that matches exactly where it does."""
    translation = translate(pattern, flags, whole=True)
    if translation is None or not translation.exact or not _compiles(translation.pieces[0]):
        return None
    return translation.pieces[0]


def verifier(pattern: str, flags: int):
    """A linear-time stand-in for `regex` search on plain text, or None: confirming a
    set hit with a backtracking search through a large alternation costs 50 µs."""
    text = _whole_form(pattern, flags)
    return Verifier(text) if text is not None else None


class Verifier:
    """One pattern searched with RE2 (compiled on first use); only for plain text."""

    __slots__ = ("text", "_compiled")

    def __init__(self, text: str):
        self.text, self._compiled = text, None

    def __reduce__(self):
        return Verifier, (self.text,)

    def search(self, string: str, timeout=None):
        if self._compiled is None:
            self._compiled = _engine().compile(self.text, _options())
        return self._compiled.search(string)


def _compiles(text: str) -> bool:
    engine = _engine()
    if engine is None:
        return False
    try:
        engine.compile(text, _options())
        return True
    except Exception:
        return False


def _options():
    options = _engine().Options()
    options.max_mem = _SET_MEMORY
    options.log_errors = False
    return options


WIDE = 1  # in a scan's hits: the text is not plain, so a hit is never more than a maybe


class SetScanner:
    """(text, group) -> the bits of every pattern of the group that matches the text,
    or None when the set cannot say.

    Plain text is scanned with the pieces themselves. Other text is read with ASCII
    stand-ins (see stand_in) and scanned with the pieces' wide forms, which match
    it wherever the patterns might match the original: the hits carry the WIDE bit,
    a hit is only a maybe and a miss still proves absence. Most wide forms are the
    pieces themselves, so that scan is the plain set's (its DFA already warm) plus
    a small set of the forms that differ; a piece without a wide form counts as hit.

    Built from the pieces' RE2 texts, so it pickles small and rebuilds on load.
    Each group's set carries a pattern that matches every text: a scan that
    reports nothing at all failed (RE2 gives up when its DFA memory runs out) and
    answers None rather than "no pattern matches"."""

    __slots__ = ("patterns", "groups", "wide", "_built", "_wide")

    def __init__(self, patterns: tuple, groups: dict, wide: tuple = ()):
        self.patterns, self.groups, self.wide = patterns, groups, wide or (None,) * len(patterns)
        self._built = {}  # group -> (match, wants bytes, sentinel, bits), or False when re2 is missing
        # group -> (the plain bits that hold for the wide form, the set of the other wide forms
        # or None, the bits that count as hit), built when text that is not plain first comes
        self._wide = {}

    def __reduce__(self):
        return SetScanner, (self.patterns, self.groups, self.wide)

    @property
    def built(self) -> bool:
        return any(self._built.values())

    def hits(self, text: str, group: str = "window", plain: bool = False) -> int | None:
        """`plain`: the caller knows the text is plain (a line of a plain text)."""
        if len(text) > SET_MAX:
            return None
        if plain or is_plain(text):
            return self._scan(text, group)
        return self._wide_hits(text, group)

    def _scan(self, text: str, group: str) -> int | None:
        built = self._built.get(group)
        if built is None:
            members = self.groups.get(group, ())
            built = self._built[group] = _build(tuple(self.patterns[i] for i in members),
                                                tuple(1 << i for i in members)) if _engine() is not None else False
        return _scan(built, text) if built else None

    def _wide_hits(self, text: str, group: str) -> int | None:
        wide = self._wide.get(group)
        if wide is None:
            same, other, always = 0, [], WIDE
            for i in self.groups.get(group, ()):
                form = self.wide[i]
                if form is None:
                    always |= 1 << i
                elif form == self.patterns[i]:
                    same |= 1 << i
                else:
                    other.append(i)
            extra = _build(tuple(self.wide[i] for i in other), tuple(1 << i for i in other)) \
                if other and _engine() is not None else None
            wide = self._wide[group] = (same, extra, always)
        same, extra, always = wide
        stood_in = with_stand_ins(text)
        hits = self._scan(stood_in, group)
        if hits is None:
            return None
        hits = (hits & same) | always
        if extra is not None:
            more = _scan(extra, stood_in)
            if more is None:
                return None
            hits |= more
        return hits


def with_stand_ins(text: str) -> str:
    """`text` with each character that makes it not plain read as its stand-in. Where
    such characters are few, only they are visited; where they are many (a paste in
    Chinese), every character is mapped in one pass (5x faster there, slower elsewhere)."""
    if len(text.encode("utf-8", "surrogatepass")) - len(text) > len(text) >> 4:
        return text.translate(_STAND_IN_TABLE)
    return _STANDS_IN.sub(_stand_in_of, text)


def _stand_in_of(match) -> str:
    return stand_in(match.group())


class _StandInTable(dict):
    """Code point -> the character str.translate puts there, filled on first sight."""

    def __missing__(self, code: int) -> str:
        ch = chr(code)
        found = self[code] = ch if code < 0x80 and ch != "\x0b" else stand_in(ch)
        return found


_STAND_IN_TABLE = _StandInTable()


def _build(patterns: tuple, bits: tuple) -> tuple:
    """The pieces as RE2 sets of at most SET_CHUNK pieces each: ((match, wants bytes, sentinel, bits), ...)."""
    return tuple(_build_one(patterns[i:i + SET_CHUNK], bits[i:i + SET_CHUNK])
                 for i in range(0, len(patterns), SET_CHUNK)) or (_build_one((), ()),)


def _build_one(patterns: tuple, bits: tuple):
    engine = _engine().Set.SearchSet(_options())
    for text in patterns:
        engine.Add(text)
    engine.Add("")  # the sentinel: matches every text, so an empty report means a failed scan
    engine.Compile()
    # The wrapper's Match encodes str and calls its compiled set; call that directly
    # when this version of the binding has it (it is most of the cost of a short line).
    inner = getattr(engine, "_set", None)
    match = inner.Match if inner is not None and hasattr(inner, "Match") else None
    return (match or engine.Match), match is not None, len(patterns), bits


def _scan(built: tuple, text: str) -> int | None:
    hits, encoded = 0, None
    for match, wants_bytes, sentinel, bits in built:
        if wants_bytes and encoded is None:
            encoded = text.encode("utf-8")
        found = match(encoded if wants_bytes else text)
        if not found:
            return None
        for index in found:
            if index != sentinel:
                hits |= bits[index]
    return hits

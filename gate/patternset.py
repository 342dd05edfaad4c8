"""Every pattern of a revision searched in one pass (RE2::Set), where RE2 and `regex` agree.

The keyword prefilter (gate/prefilter.py) proves most patterns cannot match, but
common words ("the", "so", "we") let many through, and each then costs a
`regex` search. An RE2 set answers "which of these patterns match this text?"
for all of them in one linear pass, so a subject costs one scan instead of
twenty searches.

Two engines agree only where their semantics do, so the set answers exactly only
for *plain* text: ASCII printable characters, tab, newline and carriage return,
and non-ASCII punctuation and symbols that are not word, digit or space
characters and have no case ("’", "—", "→", "✓"). There `\\w`, `\\b`, `\\s`, `\\d`
and case folding mean the same in both. Other text (accented letters, CJK,
control characters) is scanned with each pattern's *wide* form, on the text with
every non-ASCII character read as one placeholder byte: its hits carry the WIDE
bit and are only maybes, confirmed by `regex`; a miss still proves absence. Text
longer than SET_MAX gets None and takes the prefilter path.

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

from gate.literals import _GROUP_REFERENCE, _POSIX_CLASS, _REGEX_ONLY, _c, _memoized, _sre_parse

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
_SET_MEMORY = 32 << 20  # bytes for a set's DFA; if it is ever exhausted the scan answers None
# Scan groups: what turn rules ask of each turn, what window rules and signals ask
# of the kept turns, what tool_io asks of the tool calls and results. Each is a set
# of its own: a turn is scanned only for what turn rules need, and a smaller set's
# DFA stays in the CPU's caches.
GROUPS = ("turn", "window", "tool")
_FLAG_LETTERS = ((re.IGNORECASE, "i"), (re.MULTILINE, "m"), (re.DOTALL, "s"))

# Plain text, for `regex` and RE2 alike: anything else makes the set answer None.
_NOT_PRINTABLE_ASCII = re.compile(r"[^\t\n\r\x20-\x7e]")
_NOT_ASCII = re.compile(r"[^\x00-\x7f]")
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


class _Untranslatable(Exception):
    pass


class _Writer:
    """The parse tree written back in RE2 syntax; `exact` turns False on any relaxation.

    `wide`: for text that is not plain, where RE2 (ASCII \\w, \\b, \\s, \\d) and `regex`
    (Unicode) disagree. That text is scanned with every non-ASCII character replaced
    by one byte, PLACEHOLDER (Latin-1, so a character is still one position), and
    the wide form matches wherever the pattern could match the original: any
    character the pattern could accept beyond ASCII becomes PLACEHOLDER (so does a
    category `regex` may widen beyond ASCII, such as \\w), a negated class keeps only
    its ASCII part (its complement then takes in PLACEHOLDER), `\\b` and `\\B` are
    dropped, and i, s and k also take PLACEHOLDER, for the İ, ı, ſ and K that
    `regex` matches with them case-insensitively."""

    def __init__(self, lines: bool, open_above: int = OPEN_REPEATS_ABOVE, wide: bool = False,
                 multiline: bool = True):
        self.lines, self.exact, self.open_above, self.wide = lines, True, open_above, wide
        self.multiline = multiline  # in the scope being written (`$` depends on it)

    def sequence(self, items) -> str:
        return "".join(self.node(op, av) for op, av in items)

    def pieces(self, items) -> list[str]:
        """The top-level sequence cut at its gaps; pieces that consume nothing are left out."""
        out, current, consumes = [], [], False
        for op, av in items + [(None, None)]:
            if op is None or _is_gap(op, av):
                if consumes:
                    out.append("".join(current))
                elif current:
                    self.exact = False  # only anchors: nothing to require on their own
                if op is not None:
                    self.exact = False
                current, consumes = [], False
                continue
            current.append(self.node(op, av))
            consumes = consumes or op in _CONSUMING
        return out

    def node(self, op, av) -> str:
        if op is _c.LITERAL:
            return _wide_literal(av) if self.wide else _literal(av)
        if op is _c.NOT_LITERAL:
            if self.wide and av >= 0x80:
                return "(?s:.)"  # any other character: PLACEHOLDER may stand for one
            return "[^" + _class_char(av) + "]"
        if op is _c.ANY:
            return "."
        if op is _c.IN:
            return _wide_class(av) if self.wide else _class(av)
        if op is _c.CATEGORY and self.wide:
            return "[" + _WIDE_CATEGORIES[av] + "]"
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
        if self.wide and code in (_c.AT_BOUNDARY, _c.AT_NON_BOUNDARY):
            return ""  # dropped (the form is never exact in wide mode)
        if code is _c.AT_BOUNDARY:
            return r"\b"
        if code is _c.AT_NON_BOUNDARY:
            return r"\B"
        # A stripped line starts after the blanks that began it; in plain text lines
        # end at \n or \r, so those blanks are spaces and tabs. On one stripped line
        # alone this is the anchor itself, so a line form's `exact` is about one line.
        if self.lines and self.wide and code in (_c.AT_BEGINNING, _c.AT_BEGINNING_STRING):
            return r"(?:(?m:^)|" + _LINE_BREAKS + ")[" + _WIDE_CATEGORIES[_c.CATEGORY_SPACE] + "]*"
        if self.lines and self.wide and code in (_c.AT_END, _c.AT_END_STRING):
            return "[" + _WIDE_CATEGORIES[_c.CATEGORY_SPACE] + "]*(?:(?m:$)|" + _LINE_BREAKS + ")"
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


# For text that is not plain (see _Writer): every non-ASCII character is read as
# PLACEHOLDER. Inside a positive class, what each category may match under `regex`:
# its ASCII part and PLACEHOLDER. Inside a negated class, only what it surely matches
# (its ASCII part, blanks that every engine calls space), so the complement keeps
# every character the pattern might accept.
PLACEHOLDER = "\x80"
_P = r"\x80"
_WIDE_CATEGORIES = {
    _c.CATEGORY_DIGIT: "0-9" + _P, _c.CATEGORY_NOT_DIGIT: r"\x00-\x2f\x3a-\x7f" + _P,
    _c.CATEGORY_SPACE: r"\t-\r\x1c-\x20" + _P, _c.CATEGORY_NOT_SPACE: r"\x00-\x08\x0e-\x1f\x21-\x7f" + _P,
    _c.CATEGORY_WORD: "0-9A-Za-z_" + _P, _c.CATEGORY_NOT_WORD: r"\x00-\x2f\x3a-\x40\x5b-\x5e\x60\x7b-\x7f" + _P,
}
_SURE_CATEGORIES = {
    _c.CATEGORY_DIGIT: "0-9", _c.CATEGORY_NOT_DIGIT: r"\x00-\x2f\x3a-\x7f",
    _c.CATEGORY_SPACE: r"\t-\r\x20", _c.CATEGORY_NOT_SPACE: r"\x00-\x08\x0e-\x1b\x21-\x7f",
    _c.CATEGORY_WORD: "0-9A-Za-z_", _c.CATEGORY_NOT_WORD: r"\x00-\x2f\x3a-\x40\x5b-\x5e\x60\x7b-\x7f",
}
# Where str.splitlines ends a line, besides \n (a line form's edges in wide mode).
_LINE_BREAKS = r"[\r\x0b\x0c\x1c-\x1e" + _P + "]"
_FOLDING = "iskISK"  # letters `regex` matches case-insensitively with characters RE2 does not


def _folds(low: int, high: int) -> bool:
    return any(low <= ord(letter) <= high for letter in _FOLDING)


def _wide_literal(code: int) -> str:
    if code >= 0x80:
        return _P
    return "[" + _class_char(code) + _P + "]" if _folds(code, code) else _literal(code)


def _wide_class(items) -> str:
    negate = any(op is _c.NEGATE for op, _ in items)
    out = []
    for op, av in items:
        if op is _c.LITERAL:
            if av < 0x80:
                out.append(_class_char(av) + (_P if not negate and _folds(av, av) else ""))
            elif not negate:
                out.append(_P)
        elif op is _c.RANGE:
            low, high = av
            if low < 0x80:
                out.append(_class_char(low) + "-" + _class_char(min(high, 0x7f)))
            if not negate and (high >= 0x80 or _folds(low, high)):
                out.append(_P)
        elif op is _c.CATEGORY and av in _CATEGORIES:
            out.append((_SURE_CATEGORIES if negate else _WIDE_CATEGORIES)[av])
        elif op is not _c.NEGATE:
            raise _Untranslatable
    if not out:
        return "(?s:.)" if negate else _P  # [^é] may be any character; [é] only PLACEHOLDER
    return "[" + ("^" if negate else "") + "".join(out) + "]"


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
    stays out of the set. A piece also joins a scan group (GROUPS): each group is
    scanned as a set of its own, so a turn is scanned only for what turn rules ask,
    and a smaller set's DFA is faster."""

    def __init__(self):
        self.bits: dict[str, int] = {}  # RE2 piece -> its bit
        self.patterns: list[str] = [""]  # RE2 pieces, in bit order; bit 0 is WIDE, no piece's
        self.wide: list = [None]  # each piece's form for text that is not plain, or None
        self.groups: dict[str, set] = {group: set() for group in GROUPS}  # group -> piece indexes

    def translation(self, pattern: str, flags: int, *, lines: bool = False) -> tuple | None:
        return (_set_line_form if lines else _set_form)(pattern, flags)

    def add(self, pattern: str, flags: int, *, lines: bool = False, group: str = "window") -> tuple[int, bool]:
        translation = self.translation(pattern, flags, lines=lines)
        if translation is None:
            return 0, False
        pieces, exact = translation
        wide = (_set_wide_line_form if lines else _set_wide_form)(pattern, flags)
        wide = wide[0] if wide is not None and len(wide[0]) == len(pieces) else (None,) * len(pieces)
        mask, members = 0, self.groups[group]
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
        pieces = [(len(self.patterns[i]), 1 << i) for i in range(mask.bit_length()) if mask >> i & 1]
        return max(pieces)[1] if pieces else 0

    def scanner(self) -> "SetScanner | None":
        if len(self.patterns) == 1:
            return None
        groups = {group: tuple(sorted(members)) for group, members in self.groups.items()}
        return SetScanner(tuple(self.patterns), groups, tuple(self.wide))


# Memoized with gate/literals.py's results, so the compiled-revision cache keeps them
# and a hook does not parse its patterns again.
@_memoized
def _set_form(pattern: str, flags: int = 0) -> tuple | None:
    return _checked(translate(pattern, flags))


@_memoized
def _set_line_form(pattern: str, flags: int = 0) -> tuple | None:
    return _checked(translate(pattern, flags, lines=True))


@_memoized
def _set_wide_form(pattern: str, flags: int = 0) -> tuple | None:
    return _checked(translate(pattern, flags, wide=True), latin1=True)


@_memoized
def _set_wide_line_form(pattern: str, flags: int = 0) -> tuple | None:
    return _checked(translate(pattern, flags, lines=True, wide=True), latin1=True)


def _checked(translation, latin1: bool = False) -> tuple | None:
    """The translation as a plain tuple, if RE2 compiles every piece of it."""
    if translation is None or not all(_compiles(piece, latin1) for piece in translation.pieces):
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


def _compiles(text: str, latin1: bool = False) -> bool:
    engine = _engine()
    if engine is None:
        return False
    try:
        engine.compile(text.encode("latin-1") if latin1 else text, _options(latin1))
        return True
    except Exception:
        return False


def _options(latin1: bool = False):
    """RE2's options; `latin1` for wide forms, whose text is one byte per character."""
    options = _engine().Options()
    options.max_mem = _SET_MEMORY
    options.log_errors = False
    if latin1:
        options.encoding = _engine().Options.Encoding.LATIN1
    return options


WIDE = 1  # in a scan's hits: the text is not plain, so a hit is never more than a maybe


class SetScanner:
    """(text, group) -> the bits of every pattern of the group that matches the text,
    or None when the set cannot say.

    Plain text is scanned with the pieces themselves. Other text is scanned with
    their wide forms (see _Writer), which match wherever the patterns might: the
    hits carry the WIDE bit, a hit proves nothing and a miss still proves absence.
    A piece without a wide form counts as hit on such text.

    Built from the pieces' RE2 texts, so it pickles small and rebuilds on load.
    Each group's set carries a pattern that matches every text: a scan that
    reports nothing at all failed (RE2 gives up when its DFA memory runs out) and
    answers None rather than "no pattern matches"."""

    __slots__ = ("patterns", "groups", "wide", "_built", "_always")

    def __init__(self, patterns: tuple, groups: dict, wide: tuple = ()):
        self.patterns, self.groups, self.wide = patterns, groups, wide or (None,) * len(patterns)
        # group -> (match, wants bytes, sentinel, bits), or False when re2 is missing; the wide sets
        # are under ("wide", group), built when text that is not plain first comes
        self._built = {}
        self._always = {}  # group -> the bits that count as hit on text that is not plain

    def __reduce__(self):
        return SetScanner, (self.patterns, self.groups, self.wide)

    @property
    def built(self) -> bool:
        return any(self._built.values())

    def hits(self, text: str, group: str = "window", plain: bool = False) -> int | None:
        """`plain`: the caller knows the text is plain (a line of a plain text)."""
        if len(text) > SET_MAX:
            return None
        if not (plain or is_plain(text)):
            return self._wide_hits(text, group)
        built = self._built.get(group)
        if built is None:
            members = self.groups.get(group, ())
            built = self._built[group] = _build(tuple(self.patterns[i] for i in members),
                                                tuple(1 << i for i in members)) if _engine() is not None else False
        return _scan(built, text) if built else None

    def _wide_hits(self, text: str, group: str) -> int | None:
        key = ("wide", group)
        built = self._built.get(key)
        if built is None:
            members = [i for i in self.groups.get(group, ()) if self.wide[i] is not None]
            always = WIDE
            for i in self.groups.get(group, ()):
                if self.wide[i] is None:
                    always |= 1 << i
            self._always[group] = always
            built = self._built[key] = _build(tuple(self.wide[i] for i in members), tuple(1 << i for i in members),
                                              latin1=True) if _engine() is not None else False
        if not built:
            return None
        match, _, sentinel, bits = built
        found = match(_NOT_ASCII.sub(PLACEHOLDER, text).encode("latin-1"))
        if not found:
            return None
        hits = self._always[group]
        for index in found:
            if index != sentinel:
                hits |= bits[index]
        return hits


def _build(patterns: tuple, bits: tuple, latin1: bool = False):
    engine = _engine().Set.SearchSet(_options(latin1))
    for text in patterns:
        engine.Add(text.encode("latin-1") if latin1 else text)  # the binding wants Latin-1 patterns as bytes
    engine.Add(b"" if latin1 else "")  # the sentinel: matches every text, so an empty report means a failed scan
    engine.Compile()
    # The wrapper's Match encodes str and calls its compiled set; call that directly
    # when this version of the binding has it (it is most of the cost of a short line).
    inner = getattr(engine, "_set", None)
    match = inner.Match if inner is not None and hasattr(inner, "Match") else None
    return (match or engine.Match), match is not None, len(patterns), bits


def _scan(built, text: str) -> int | None:
    match, wants_bytes, sentinel, bits = built
    found = match(text.encode("utf-8") if wants_bytes else text)
    if not found:
        return None
    hits = 0
    for index in found:
        if index != sentinel:
            hits |= bits[index]
    return hits

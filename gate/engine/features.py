"""What conditions look at: a subject (one turn, or the turns of one role) and
its features, each computed once, on first use, and shared by every rule.
"""

from __future__ import annotations

import hashlib
import re

from gate.engine.literals import fold
from gate.engine.patternset import WIDE, is_plain

# Shapes: what is left of a line once its numbers, ids and hashes are gone.
# Two heartbeats that differ only in epoch, loss and ETA have the same shape.
_SHAPE_SUBS = (
    (re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"), "<id>"),
    (re.compile(r"\b(?=[0-9a-f]*\d)[0-9a-f]{7,}\b"), "<hex>"),
    (re.compile(r"\d+(?:[.,:/]\d+)*"), "0"),
    (re.compile(r"\s+"), " "),
)
_SHAPE_PREFIX = 4096  # a shape needs the start of a turn, not all of a 5 MB paste
_WORD = re.compile(r"[^\W\d_][\w'’-]*")
_FENCE = re.compile(r"^\s*(```|~~~)")
_HEADING = re.compile(r"^\s{0,3}#{1,6}\s+\S")
_BULLET = re.compile(r"^\s*[-*+•]\s+\S")
_NUMBERED = re.compile(r"^\s*\d{1,3}[.)]\s+\S")
_TABLE_ROW = re.compile(r"^\s*\|.*\|\s*$")
_CONFIG_LINE = re.compile(r"^\s*[\"']?[A-Za-z_][\w.\-]*[\"']?\s*(?::\s+\S|:$|=\s*\S)")
_CONFIG_START = frozenset("\"'_ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz")
_BULLET_MARKS = frozenset("-*+•")


def _read_plain(hits) -> bool:
    """Whether set hits came from a scan of plain text (so its lines are plain too)."""
    return hits is not None and not hits & WIDE


_UUID, _HEX, _NUMBER, _SPACE = (pattern for pattern, _ in _SHAPE_SUBS)
_DIGITS = "0123456789"
# Each lowercase hex digit as "h", anything else as " ": a hex id of 7+ characters
# leaves "hhhhhhh" behind, found by a plain substring test (the id regex is slow).
_HEX_MARKS = bytes(ord("h") if chr(i) in "0123456789abcdef" else ord(" ") for i in range(256))


def _substituted(shape: str) -> str:
    """The id and number substitutions of a lowercase shape, each tried only where it
    can apply: an id or a hex run needs 7+ ASCII hex digits in a row, a number a digit
    (any digit \\d knows, so text beyond ASCII is always substituted)."""
    ascii_ = shape.isascii()
    if "hhhhhhh" in shape.encode("ascii", "replace").translate(_HEX_MARKS).decode("ascii"):
        if shape.count("-") >= 4:
            shape = _UUID.sub("<id>", shape)
        has_digit = not ascii_ or any(digit in shape for digit in _DIGITS)
        if has_digit:
            shape = _HEX.sub("<hex>", shape)
    else:
        has_digit = not ascii_ or any(digit in shape for digit in _DIGITS)
    return _NUMBER.sub("0", shape) if has_digit else shape


def shape_of(text: str) -> str:
    # str.split() collapses the same whitespace as \s+ (both are str.isspace), and
    # strips it from the ends.
    return " ".join(_substituted(text[:_SHAPE_PREFIX].lower()).split())


def shapes_of_lines(lines: list[str]) -> list[str]:
    """[shape_of(line) for line in lines], substituting once over the joined lines: no
    substitution spans a newline, and `\b` sees a newline as it sees a line's edge."""
    if len(lines) < 2:
        return [shape_of(line) for line in lines]
    joined = "\n".join(line[:_SHAPE_PREFIX] for line in lines).lower()  # lines hold no newline
    return [" ".join(line.split()) for line in _substituted(joined).split("\n")]


def reference_shape_of(text: str) -> str:
    """shape_of without its shortcuts (what the optimized one must equal)."""
    shape = text[:_SHAPE_PREFIX].lower()
    for pattern, replacement in _SHAPE_SUBS:
        shape = pattern.sub(replacement, shape)
    return shape.strip()


def window_shape(turn_shapes) -> str:
    """A short, stable id for a window's shape, for the caller's recent-shapes list."""
    joined = "\x1f".join(turn_shapes)
    return hashlib.blake2b(joined.encode("utf-8", "replace"), digest_size=8).hexdigest()


def continuation_heads(texts) -> list[int]:
    """For each non-blank line of `texts`, in the order Subject.lines lists them, the index of the
    line it continues: the nearest line above it in the same text that is indented less (a
    traceback's code under its frame, an exception's message below it); -1 when there is none."""
    heads, index = [], 0
    for text in texts:
        open_lines = []  # (indent, index) of the lines a deeper line below would continue
        for raw in text.splitlines():
            if not raw.strip():
                continue
            raw = raw.expandtabs(4)
            indent = len(raw) - len(raw.lstrip())
            while open_lines and open_lines[-1][0] >= indent:
                open_lines.pop()
            heads.append(open_lines[-1][1] if open_lines else -1)
            open_lines.append((indent, index))
            index += 1
    return heads


class Subject:
    """The turns a condition judges, with lazily computed, cached features."""

    __slots__ = ("turns", "recent_shapes", "window", "_tool_text", "_text", "_lower", "_lines", "_prose_words", "_structure",
                 "_turn_shapes", "_line_shapes", "_window_shape", "scanner", "_found", "_turn_found", "_line_found",
                 "_tool_found", "memo", "sets", "_set_hits", "_tool_set_hits", "_hits_by_text", "_per_turn")

    def __init__(self, turns, recent_shapes=frozenset(), window=None, scanner=None, sets=None):
        self.turns = turns
        self.recent_shapes = recent_shapes
        self.window = window  # for a one-turn subject: the whole window it sits in
        # the classifier's prefilter scanner (gate/engine/prefilter.py); a window's parts share the window's
        self.scanner = scanner if scanner is not None or window is None else window.scanner
        self._found = self._turn_found = self._line_found = self._tool_found = None
        # the classifier's pattern sets (gate/engine/patternset.py), shared the same way
        self.sets = sets if sets is not None or window is None else window.sets
        self._set_hits, self._tool_set_hits = None, False  # {group: hits}; False: not scanned yet
        self._hits_by_text = None  # on a window: the set hits of each text scanned, shared by its parts
        self._per_turn = None  # on a window: each turn's lines and their prefilter bits, shared by its parts
        self.memo = None  # what conditions compute once per subject (see line_share)
        self._tool_text = None
        self._text = self._lower = self._lines = self._prose_words = self._structure = None
        self._turn_shapes = self._line_shapes = self._window_shape = None

    @property
    def text(self) -> str:
        if self._text is None:
            self._text = self.turns[0].text if len(self.turns) == 1 else "\n\n".join(t.text for t in self.turns)
        return self._text

    @property
    def tool_text(self) -> str:
        """Tool inputs and results of the whole window, stripped turns included."""
        if self._tool_text is None:
            turns = (self.window or self).turns
            self._tool_text = "\n".join(t.tool_text for t in turns if t.tool_text)
        return self._tool_text

    def blind_to_tools(self) -> "Subject":
        """This subject with no tool calls or results to look at: what its own turns say, alone."""
        self._tool_text = ""
        return self

    @property
    def lower(self) -> str:
        """The text as keywords are looked for in it: lowercase, and 'ſ', 'K', 'İ', 'ı'
        folded to the ASCII letter a case-insensitive regex matches them with."""
        if self._lower is None:
            self._lower = fold(self.text)
        return self._lower

    @property
    def found(self) -> int:
        """The prefilter literals in this subject's text, as bits; without a scanner all
        bits are set (-1), so every condition runs as if nothing were filtered.

        Each turn is scanned once per window and a subject ORs its turns' bits:
        a literal never holds a newline, so none straddles two joined turns."""
        if self._found is None:
            if self.scanner is None:
                self._found = -1
            elif self.window is None and len(self.turns) == 1:
                self._found = self.scanner.scan(self.turns[0].text)
            else:
                whole = self.window if self.window is not None else self
                found = 0
                for turn in self.turns:
                    found |= whole.turn_found(turn)
                self._found = found
        return self._found

    @property
    def tool_found(self) -> int:
        """The prefilter bits of `tool_text` (-1 without a scanner)."""
        if self._tool_found is None:
            self._tool_found = -1 if self.scanner is None else self.scanner.scan(self.tool_text)
        return self._tool_found

    def set_hits(self, group: str) -> int | None:
        """Bits of the set patterns of a scan group (gate/engine/patternset.py) that match the
        text; None when the set cannot say (no set, text not plain, or too long): then
        conditions search. Each text is scanned once per group per window: a role's
        subject is often one turn's text again."""
        hits = self._set_hits.get(group, False) if self._set_hits else False
        if hits is False:
            if self.sets is None:
                hits = None
            else:
                root = self.window if self.window is not None else self
                memo = root._hits_by_text
                if memo is None:
                    memo = root._hits_by_text = {}
                key = (group, self.text)
                hits = memo.get(key, False)
                if hits is False:
                    hits = memo[key] = self.sets.hits(self.text, group)
            if not self._set_hits:
                self._set_hits = {}
            self._set_hits[group] = hits
        return hits

    @property
    def tool_set_hits(self) -> int | None:
        """Bits of the tool scan group's patterns that match `tool_text` (or None)."""
        if self.window is not None:
            return self.window.tool_set_hits  # the window's tool text, whichever part asks
        if self._tool_set_hits is False:
            self._tool_set_hits = None if self.sets is None else self.sets.hits(self.tool_text, "tool")
        return self._tool_set_hits

    def set_memo(self) -> dict:
        self.memo = {}
        return self.memo

    def turn_found(self, turn) -> int:
        """One turn's prefilter bits, scanned once for the window (call on the whole window)."""
        cache = self._turn_found
        if cache is None:
            cache = self._turn_found = {}
        found = cache.get(turn.index)
        if found is None:
            found = cache[turn.index] = self.scanner.scan(turn.text)
        return found

    @property
    def lines(self) -> list[str]:
        """Non-blank lines, stripped. Turns are joined by a blank line, so a subject's
        lines are its turns' lines, each turn's split once for the whole window."""
        if self._lines is None:
            root = self._root()
            if root is None:
                self._lines = [line for line in map(str.strip, self.text.splitlines()) if line]
            elif len(self.turns) == 1:
                self._lines = root._turn_part(self.turns[0])[0]
            else:
                self._lines = [line for turn in self.turns for line in root._turn_part(turn)[0]]
        return self._lines

    @property
    def line_heads(self) -> list[int]:
        """continuation_heads of `lines` (each turn on its own: no line continues another turn's)."""
        memo = self.memo if self.memo is not None else self.set_memo()
        heads = memo.get("line_heads")
        if heads is None:
            heads = continuation_heads([turn.text for turn in self.turns])
            if len(heads) != len(self.lines):  # a subject whose lines are not its turns' (none known)
                heads = [-1] * len(self.lines)
            memo["line_heads"] = heads
        return heads

    @property
    def line_found(self) -> list[int]:
        """The prefilter bits of each of `lines` (for conditions that judge line by line)."""
        if self._line_found is None:
            root = self._root()
            if self.scanner is None:
                self._line_found = [-1] * len(self.lines)
            elif root is None:
                scan = self.scanner.scan
                self._line_found = [scan(line) for line in self.lines]
            else:
                self._line_found = [bits for turn in self.turns for bits in root._turn_part(turn, found=True)[1]]
        return self._line_found

    def _root(self):
        """The window subject whose turns these are, or None (then work from the text)."""
        root = self.window if self.window is not None else self
        turns = root.turns
        for turn in self.turns:
            if not (isinstance(turn.index, int) and 0 <= turn.index < len(turns) and turns[turn.index] is turn):
                return None
        return root

    def line_set_hits(self, group: str) -> list:
        """The set hits of each of `lines` in a scan group (None for a line the set cannot judge)."""
        memo = self.memo if self.memo is not None else self.set_memo()
        key = ("line_set_hits", group)
        found = memo.get(key)
        if found is None:
            root = self._root()
            if root is None:
                found = [self.sets.hits(line, group) for line in self.lines]
            elif len(self.turns) == 1:
                found = root._turn_line_hits(self.turns[0], group)
            else:
                found = [hits for turn in self.turns for hits in root._turn_line_hits(turn, group)]
            memo[key] = found
        return found

    def _turn_line_hits(self, turn, group: str) -> list:
        """One turn's line-by-line set hits in a group, computed once per window."""
        part = self._turn_part(turn)
        by_group = part[2]
        if by_group is None:
            by_group = part[2] = {}
        found = by_group.get(group)
        if found is None:
            scanned = self._hits_by_text
            # a turn the set has read is plain, and so is each of its lines: no need to check again
            plain = (scanned is not None and any(_read_plain(scanned.get((g, turn.text))) for g in self.sets.groups)
                     or is_plain(turn.text))
            hits = self.sets.hits
            found = by_group[group] = [hits(line, group, plain) for line in part[0]]
        return found

    def _turn_part(self, turn, found: bool = False) -> list:
        """[lines, their prefilter bits, their set hits by group] of one turn, each
        computed once per window, on first use (None until then)."""
        cache = self._per_turn
        if cache is None:
            cache = self._per_turn = {}
        part = cache.get(turn.index)
        if part is None:
            part = cache[turn.index] = [[line for line in map(str.strip, turn.text.splitlines()) if line], None, None]
        if found and part[1] is None:
            scan = self.scanner.scan
            part[1] = [scan(line) for line in part[0]]
        return part

    @property
    def prose_words(self) -> int:
        """Words outside code fences: what a person wrote, not what they pasted."""
        if self._prose_words is None:
            self._compute_structure()
        return self._prose_words

    @property
    def structure(self) -> dict:
        if self._structure is None:
            self._compute_structure()
        return self._structure

    def _compute_structure(self) -> None:
        """Counts by line, each line's pattern tried only when its first character allows it."""
        text = self.text
        headings = bullets = numbered = code_fences = fenced_lines = table_rows = config_lines = lines = 0
        fenced = "```" in text or "~~~" in text
        # words cannot span lines, so without fences the whole text counts at once
        words = 0 if fenced else len(_WORD.findall(text))
        in_fence = False
        for raw in text.splitlines():
            line = raw.lstrip()  # \s* in the patterns below is str.isspace, as lstrip() is
            if not line:
                continue
            lines += 1
            first = line[0]
            if fenced and (first == "`" or first == "~") and line.startswith(("```", "~~~")):
                if not in_fence:
                    code_fences += 1
                in_fence = not in_fence
                continue
            if first in _CONFIG_START and ("=" in line or ":" in line) and _CONFIG_LINE.match(raw):
                config_lines += 1
            if in_fence:
                fenced_lines += 1
                continue
            if fenced:
                words += len(_WORD.findall(raw))
            if first == "#":
                if len(raw) - len(line) <= 3 and _HEADING.match(raw):
                    headings += 1
            elif first in _BULLET_MARKS:
                if _BULLET.match(raw):
                    bullets += 1
            elif first == "|":
                if _TABLE_ROW.match(raw):
                    table_rows += 1
            elif first.isdecimal() and _NUMBERED.match(raw):
                numbered += 1
        self._structure = {"headings": headings, "bullets": bullets, "numbered": numbered,
                           "code_fences": code_fences, "fenced_lines": fenced_lines, "table_rows": table_rows,
                           "config_lines": config_lines, "lines": lines}
        self._prose_words = words

    def _reference_structure(self) -> None:
        """_compute_structure without its shortcuts (what the optimized one must equal)."""
        counts = dict.fromkeys(("headings", "bullets", "numbered", "code_fences", "fenced_lines",
                                "table_rows", "config_lines", "lines"), 0)
        words = 0
        in_fence = False
        for raw in self.text.splitlines():
            if not raw.strip():
                continue
            counts["lines"] += 1
            if _FENCE.match(raw):
                if not in_fence:
                    counts["code_fences"] += 1
                in_fence = not in_fence
                continue
            if _CONFIG_LINE.match(raw):
                counts["config_lines"] += 1
            if in_fence:
                counts["fenced_lines"] += 1
                continue
            words += len(_WORD.findall(raw))
            if _HEADING.match(raw):
                counts["headings"] += 1
            elif _BULLET.match(raw):
                counts["bullets"] += 1
            elif _NUMBERED.match(raw):
                counts["numbered"] += 1
            elif _TABLE_ROW.match(raw):
                counts["table_rows"] += 1
        self._structure = counts
        self._prose_words = words

    @property
    def turn_shapes(self) -> list[str]:
        if self._turn_shapes is None:
            window = self.window
            if window is not None and all(t.index < len(window.turns) and window.turns[t.index] is t
                                          for t in self.turns):
                shapes = window.turn_shapes  # a part of a window: its turns' shapes are the window's
                self._turn_shapes = [shapes[t.index] for t in self.turns]
            else:
                self._turn_shapes = [shape_of(t.text) for t in self.turns]
        return self._turn_shapes

    @property
    def line_shapes(self) -> list[str]:
        if self._line_shapes is None:
            self._line_shapes = shapes_of_lines(self.lines[:2000])
        return self._line_shapes

    @property
    def window_shape(self) -> str:
        if self._window_shape is None:
            self._window_shape = window_shape(self.turn_shapes)
        return self._window_shape


class ReferenceSubject(Subject):
    """Subject without the shortcuts: what a classifier compiled with optimize=False
    uses, so a test can prove the shortcuts change nothing."""

    __slots__ = ()

    @property
    def lines(self) -> list[str]:
        if self._lines is None:
            self._lines = [line.strip() for line in self.text.splitlines() if line.strip()]
        return self._lines

    def _compute_structure(self) -> None:
        self._reference_structure()

    @property
    def turn_shapes(self) -> list[str]:
        if self._turn_shapes is None:
            self._turn_shapes = [reference_shape_of(t.text) for t in self.turns]
        return self._turn_shapes

    @property
    def line_shapes(self) -> list[str]:
        if self._line_shapes is None:
            self._line_shapes = [reference_shape_of(line) for line in self.lines[:2000]]
        return self._line_shapes

"""What conditions look at: a subject (one turn, or the turns of one role) and
its features, each computed once, on first use, and shared by every rule.
"""

from __future__ import annotations

import hashlib
import re

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


def shape_of(text: str) -> str:
    shape = text[:_SHAPE_PREFIX].lower()
    for pattern, replacement in _SHAPE_SUBS:
        shape = pattern.sub(replacement, shape)
    return shape.strip()


def window_shape(turn_shapes) -> str:
    """A short, stable id for a window's shape, for the caller's recent-shapes list."""
    joined = "\x1f".join(turn_shapes)
    return hashlib.blake2b(joined.encode("utf-8", "replace"), digest_size=8).hexdigest()


class Subject:
    """The turns a condition judges, with lazily computed, cached features."""

    __slots__ = ("turns", "recent_shapes", "window", "_tool_text", "_text", "_lower", "_lines", "_prose_words", "_structure",
                 "_turn_shapes", "_line_shapes", "_window_shape")

    def __init__(self, turns, recent_shapes=frozenset(), window=None):
        self.turns = turns
        self.recent_shapes = recent_shapes
        self.window = window  # for a one-turn subject: the whole window it sits in
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

    @property
    def lower(self) -> str:
        if self._lower is None:
            self._lower = self.text.lower()
        return self._lower

    @property
    def lines(self) -> list[str]:
        """Non-blank lines, stripped."""
        if self._lines is None:
            self._lines = [line.strip() for line in self.text.splitlines() if line.strip()]
        return self._lines

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
            self._turn_shapes = [shape_of(t.text) for t in self.turns]
        return self._turn_shapes

    @property
    def line_shapes(self) -> list[str]:
        if self._line_shapes is None:
            self._line_shapes = [shape_of(line) for line in self.lines[:2000]]
        return self._line_shapes

    @property
    def window_shape(self) -> str:
        if self._window_shape is None:
            self._window_shape = window_shape(self.turn_shapes)
        return self._window_shape

"""The validated model of a rules revision: plain frozen data, no behaviour."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # only an annotation here: a cached revision loads without importing yaml
    from gate.language.yamlsource import Located

DURABLE_TYPES = ("preference", "decision", "convention", "insight", "runbook")
ALL_TYPES_KEY = "all_types"  # a signal weight that counts toward every type


@dataclass(frozen=True)
class Examples:
    match: tuple
    no_match: tuple


# A payload rule's options beside `spare`: which of the evidence's other turns go (`strip`, v2.6)
# and which of the person's lines stay, and what becomes of them (v2.38 on). Every one but
# `strip` says something about a spare.
SPARE_OPTIONS = ("strip", "spare_unflagged", "spare_outside_fence", "spare_continuations", "spare_above_file")


@dataclass(frozen=True)
class DropRule:
    """Mechanical noise: a turn to strip (scope 'turn'), a window to drop ('window'), or a
    window to drop only when the person's own turns carry the evidence, else the other
    turns to strip ('payload')."""

    id: str
    description: str
    scope: str
    role: str
    min_level: str
    mandatory: bool
    when: dict
    unless: tuple
    examples: Examples
    path: tuple  # where the rule sits in its file, for located errors
    strip: str = "others"  # payload: strip every judged non-person turn, or only those with the evidence
    spare: str | None = None  # payload: the person's lines kept when the evidence is theirs (a pattern)
    spare_unflagged: str = "drop"  # payload with spare: what the signals leave unflagged is dropped or skipped
    spare_outside_fence: str | None = None  # payload with spare: a line of theirs outside the fenced paste
    # payload with spare: a line continuing the one above goes with it; true, or "wrapped" (also a
    # paragraph's line wrapped at its column)
    spare_continuations: bool | str = False
    # payload with spare: (opens, keeps) patterns: a line of theirs above the line a pasted file
    # opens with (its name as a title) is kept when keeps matches, in whatever case
    spare_above_file: tuple | None = None


@dataclass(frozen=True)
class Signal:
    """Evidence toward memory types; weights are summed per type and thresholded."""

    id: str
    description: str
    role: str
    min_level: str
    weights: dict
    when: dict
    unless: tuple
    examples: Examples
    path: tuple
    mandatory: bool = False
    scope: str = "window"


@dataclass(frozen=True)
class NoiseMarker:
    """A pattern that must never appear in a stored memory (checked live)."""

    id: str
    pattern: str  # already expanded; apply case-insensitively


@dataclass(frozen=True)
class Revision:
    path: str
    schema_version: int
    revision: str
    description: str
    levels: tuple
    default_level: str
    vocabularies: dict  # name -> tuple of literal terms
    fragments: dict  # name -> regex text (unexpanded)
    drop_rules: tuple
    signals: tuple
    flag_thresholds: dict  # level -> score a type needs to be flagged
    categories: dict  # type -> description
    instructions: str
    noise_markers: tuple
    thresholds: dict  # metric -> floor for --check
    policy: str
    canonical: dict = field(repr=False, compare=False)
    source: Located = field(repr=False, compare=False)

    @property
    def rules(self) -> tuple:
        return self.drop_rules + self.signals

    def level_index(self, level: str) -> int:
        return self.levels.index(level)

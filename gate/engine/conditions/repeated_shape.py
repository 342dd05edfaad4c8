"""repeated_shape: one normalized shape (numbers and ids stripped) repeats.

`unit: turn` compares whole turns, `unit: line` compares lines; `min` is how
many times one shape must occur, `min_share` how much of the subject it covers.
In a turn rule with `unit: turn`, the turn's own shape is counted across its
window: the third near-identical frame is stripped, the fact beside it is not.
`spare` (unit line) spares a person's turn as line_share's does: the lines of
the repeated shape are cut, and a line of theirs stays.
"""

import re
from collections import Counter

from gate.engine.features import shapes_of_lines

KIND = "repeated_shape"


def compile(spec, ctx, path):
    unit, least, share = spec["unit"], spec["min"], spec.get("min_share", 0.0)

    def repeated_shape(subject) -> bool:
        if unit == "turn" and subject.window is not None and len(subject.turns) == 1:
            own = subject.turn_shapes[0]
            shapes = subject.window.turn_shapes
            return bool(own) and shapes.count(own) >= least and shapes.count(own) / len(shapes) >= share
        if len(subject.turns if unit == "turn" else subject.lines) < least:
            return False  # too few to repeat: no need to compute shapes
        shapes = subject.turn_shapes if unit == "turn" else subject.line_shapes
        if len(shapes) < least:
            return False
        top = Counter(s for s in shapes if s).most_common(1)
        if not top:
            return False
        count = top[0][1]
        return count >= least and count / len(shapes) >= share

    repeated_shape.required_keywords = None
    if "spare" in spec:
        if unit != "line":
            raise ctx.fail(path + ("spare",), "spare cuts lines: it needs unit: line")
        repeated_shape.spared = _spared_by(ctx.regex({"pattern": spec["spare"]}, path + ("spare",)), ctx.timeout)
    if unit == "turn":  # a turn's shape repeats only in a window of at least `least` turns
        repeated_shape.needs = (None, 0, least)
    return repeated_shape


_BLANK_RUN = re.compile(r"\n(?:[ \t]*\n)+")


def _spared_by(spare, timeout):
    def spared(text: str) -> str | None:
        """`text` without the lines of its most repeated shape, when a line of another shape
        matches `spare`; None when none does. Asked only of a turn the rule fired on."""
        lines = text.splitlines()
        bare = [(i, line.strip()) for i, line in enumerate(lines) if line.strip()]
        shapes = shapes_of_lines([line for _, line in bare])
        top = Counter(s for s in shapes if s).most_common(1)
        if not top:
            return None
        cut = {i for (i, _), shape in zip(bare, shapes) if shape == top[0][0]}
        if not any(i not in cut and spare.search(line, timeout=timeout) is not None for i, line in bare):
            return None
        return _BLANK_RUN.sub("\n\n", "\n".join(line for i, line in enumerate(lines) if i not in cut)).strip()
    return spared

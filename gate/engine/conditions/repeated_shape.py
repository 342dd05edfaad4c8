"""repeated_shape: one normalized shape (numbers and ids stripped) repeats.

`unit: turn` compares whole turns, `unit: line` compares lines; `min` is how
many times one shape must occur, `min_share` how much of the subject it covers.
In a turn rule with `unit: turn`, the turn's own shape is counted across its
window: the third near-identical frame is stripped, the fact beside it is not.
`spare` (unit line) spares a person's turn as line_share's does: their lines
stay, the repeated ones and the rest of the paste are cut.
"""

from collections import Counter

from gate.engine.conditions._person_lines import compile_spare, person_lines
from gate.engine.features import shape_of

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
    spare, within = compile_spare(spec, ctx, path)
    if spare is not None:
        if unit != "line":
            raise ctx.fail(path + ("spare",), "spare cuts lines: it needs unit: line")
        timeout = ctx.timeout
        repeated_shape.spared = lambda text: _spared(text, spare, within, timeout)
    if unit == "turn":  # a turn's shape repeats only in a window of at least `least` turns
        repeated_shape.needs = (None, 0, least)
    return repeated_shape


def _spared(text: str, spare, within, timeout) -> str | None:
    """What `spare` leaves of a person's turn: the lines of its most repeated shape are counted."""
    shapes = Counter(shape for shape in map(shape_of, filter(None, map(str.strip, text.splitlines()))) if shape)
    if not shapes:
        return None
    top = shapes.most_common(1)[0][0]
    return person_lines(text, lambda line: shape_of(line) == top, spare, within, None, timeout)

"""repeated_shape: one normalized shape (numbers and ids stripped) repeats.

`unit: turn` compares whole turns, `unit: line` compares lines; `min` is how
many times one shape must occur, `min_share` how much of the subject it covers.
"""

from collections import Counter

KIND = "repeated_shape"


def compile(spec, ctx, path):
    unit, least, share = spec["unit"], spec["min"], spec.get("min_share", 0.0)

    def repeated_shape(subject) -> bool:
        shapes = subject.turn_shapes if unit == "turn" else subject.line_shapes
        if len(shapes) < least:
            return False
        top = Counter(s for s in shapes if s).most_common(1)
        if not top:
            return False
        count = top[0][1]
        return count >= least and count / len(shapes) >= share

    repeated_shape.required_keywords = None
    return repeated_shape

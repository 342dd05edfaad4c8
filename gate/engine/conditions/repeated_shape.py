"""repeated_shape: one normalized shape (numbers and ids stripped) repeats.

`unit: turn` compares whole turns, `unit: line` compares lines; `min` is how
many times one shape must occur, `min_share` how much of the subject it covers.
In a turn rule with `unit: turn`, the turn's own shape is counted across its
window: the third near-identical frame is stripped, the fact beside it is not.
`spare` (unit line) spares a person's turn as line_share's does: their lines
stay, the repeated ones and the rest of the paste are cut. With `every_shape`
(unit line) the share counts the lines of every shape that repeats `min` times
with new numbers, not only the most repeated one's: a tool that prints a frame of
two or more lines (a load test's status and its bar) repeats each of them, none
most of the turn. A line repeated word for word is no frame ("check replication
lag" after each host of a person's procedure): its shape counts only there.
`miss` (unit line): a line it matches is in no repeated shape (a person's step,
"ssh db-1, restart pgbouncer, wait till lag < 5s", repeated for each host), and
with `spare` it is never counted as the paste's: beside the paste it stays when
`spare` matches it, inside the paste only when `spare_within` does too, as any line.
"""

from collections import Counter

from gate.engine.conditions._person_lines import compile_spare, person_lines
from gate.engine.features import shape_of

KIND = "repeated_shape"


def compile(spec, ctx, path):
    unit, least, share = spec["unit"], spec["min"], spec.get("min_share", 0.0)
    every = spec.get("every_shape", False)
    if every and unit != "line":
        raise ctx.fail(path + ("every_shape",), "every_shape counts lines: it needs unit: line")
    miss = ctx.regex({"pattern": spec["miss"]}, path + ("miss",)) if "miss" in spec else None
    if miss is not None and unit != "line":
        raise ctx.fail(path + ("miss",), "miss sets lines apart: it needs unit: line")
    timeout = ctx.timeout

    def repeated_shape(subject) -> bool:
        if unit == "turn" and subject.window is not None and len(subject.turns) == 1:
            own = subject.turn_shapes[0]
            shapes = subject.window.turn_shapes
            return bool(own) and shapes.count(own) >= least and shapes.count(own) / len(shapes) >= share
        if len(subject.turns if unit == "turn" else subject.lines) < least:
            return False  # too few to repeat: no need to compute shapes
        shapes = subject.turn_shapes if unit == "turn" else subject.line_shapes
        if len(shapes) < least or not repeats(subject, shapes):
            return False
        # a line `miss` matches only lowers a count: searched only once the shapes would fire
        return miss is None or repeats(subject, _missed(subject.lines, shapes, miss, timeout))

    def repeats(subject, shapes) -> bool:
        counts = Counter(s for s in shapes if s)
        if every:
            count = sum(counts[shape] for shape in _reprinted(subject.lines, shapes, counts, least))
        else:
            top = counts.most_common(1)
            count = top[0][1] if top else 0
        return count >= least and count / len(shapes) >= share

    repeated_shape.required_keywords = None
    spare, within = compile_spare(spec, ctx, path)
    if spare is not None:
        if unit != "line":
            raise ctx.fail(path + ("spare",), "spare cuts lines: it needs unit: line")
        repeated_shape.spared = lambda text: _spared(text, spare, within, timeout, least if every else None, miss)
    if unit == "turn":  # a turn's shape repeats only in a window of at least `least` turns
        repeated_shape.needs = (None, 0, least)
    return repeated_shape


def _spared(text: str, spare, within, timeout, every: int | None = None, miss=None) -> str | None:
    """What `spare` leaves of a person's turn: the lines of its most repeated shape are counted,
    or with `every` the lines of each shape seen at least that many times; a line `miss`
    matches is counted in none."""
    lines = [line for line in map(str.strip, text.splitlines()) if line]
    line_shapes = [shape_of(line) for line in lines]
    if miss is not None:
        line_shapes = _missed(lines, line_shapes, miss, timeout)
    counts = Counter(shape for shape in line_shapes if shape)
    if not counts:
        return None
    repeated = {counts.most_common(1)[0][0]} if every is None else _reprinted(lines, line_shapes, counts, every)
    if not repeated:
        return None
    counted = {line for line, shape in zip(lines, line_shapes) if shape in repeated}
    return person_lines(text, counted.__contains__, spare, within, None, timeout)


def _reprinted(lines, shapes, counts, least: int) -> set:
    """The shapes seen at least `least` times whose lines are not all the same text: a frame
    printed again with new numbers."""
    seen: dict = {}
    for line, shape in zip(lines, shapes):
        if shape and counts[shape] >= least:
            seen.setdefault(shape, set()).add(line)
    return {shape for shape, texts in seen.items() if len(texts) > 1}


def _missed(lines, shapes, miss, timeout) -> list:
    """`shapes` with the shape of each line `miss` matches blanked: it repeats nothing."""
    return [shape if shape and miss.search(line, timeout=timeout) is None else "" for line, shape in zip(lines, shapes)]

"""What `spare` leaves of a person's turn a line rule took: only the lines they wrote.

line_share and repeated_shape share it. Once such a rule fires on the person's own turn, the
turn is mostly what a tool printed. The lines the rule counted mark where the paste runs, from
the first to the last. Outside it, a line `spare` matches (a sentence, a question, words to
someone) is theirs, and a lead-in the rule ignores stays with it. Inside it, a tool prints whole
sentences too ("Deprecated features were used in this build...", a library's warning between
progress frames): a line there is theirs only when `spare_within` matches it as well (words
only a person types: "fyi", "we", "arent"), and none is without it. Those lines stay, in order;
every other line is cut, counted or not (a paste's loose lines are no more theirs than its
counted ones). Without a line of theirs the turn goes whole.
"""

from __future__ import annotations

import re

_BLANK_RUN = re.compile(r"\n(?:[ \t]*\n)+")  # what is left where a paste was cut: one blank line


def compile_spare(spec, ctx, path) -> tuple:
    """(spare, spare_within) compiled from a line rule's spec: (None, None) without `spare`."""
    spare = ctx.regex({"pattern": spec["spare"]}, path + ("spare",)) if "spare" in spec else None
    within = ctx.regex({"pattern": spec["spare_within"]}, path + ("spare_within",)) if "spare_within" in spec else None
    if within is not None and spare is None:
        raise ctx.fail(path + ("spare_within",), "spare_within narrows spare inside the paste: it needs spare")
    return spare, within


def person_lines(text: str, counted, spare, within, ignore, timeout, counted_at=None) -> str | None:
    """`text` with only the person's lines and lead-ins (see above); `counted` (a line's stripped
    text -> bool) marks the paste, or `counted_at` (a line's place in text.splitlines() -> bool)
    when its place decides too (line_share's continuations). None when no line is theirs."""
    lines = text.splitlines()

    def counts(i: int) -> bool:
        return counted_at(i) if counted_at is not None else counted(lines[i].strip())

    # the paste's first and last counted lines, found from each end: what lies between is cut
    # unless `spare_within` speaks for it, so most of a long paste is never searched
    first = next((i for i, line in enumerate(lines) if line.strip() and counts(i)), None)
    if first is None:
        return None
    last = next(i for i in range(len(lines) - 1, first - 1, -1) if lines[i].strip() and counts(i))
    kept, theirs = [], False
    for i, line in enumerate(lines):
        bare = line.strip()
        if not bare:
            kept.append(line)
        elif first <= i <= last:
            if (within is not None and within.search(bare, timeout=timeout) is not None
                    and spare.search(bare, timeout=timeout) is not None and not counts(i)):
                theirs = True
                kept.append(line)
        elif spare.search(bare, timeout=timeout) is not None:
            theirs = True
            kept.append(line)
        elif ignore is not None and ignore.search(bare, timeout=timeout) is not None:
            kept.append(line)
    return _BLANK_RUN.sub("\n\n", "\n".join(kept)).strip() if theirs else None

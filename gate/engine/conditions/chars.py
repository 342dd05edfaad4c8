"""chars: the subject's length in characters, compared with min / max."""

from gate.engine.conditions._bounds import within

KIND = "chars"


def compile(spec, ctx, path):
    def chars(subject) -> bool:
        return within(sum(len(t.text) for t in subject.turns), spec)

    chars.required_keywords = None
    chars.needs = (None, spec.get("min", 0), 0)  # what a turn must have: see compiler._turn_needs
    return chars

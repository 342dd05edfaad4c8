"""turns: how many turns the subject has (1 for a turn rule), min / max."""

from gate.engine.conditions._bounds import within

KIND = "turns"


def compile(spec, ctx, path):
    def turns(subject) -> bool:
        return within(len(subject.turns), spec)

    turns.required_keywords = None
    return turns

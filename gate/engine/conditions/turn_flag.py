"""turn_flag: every turn of the subject carries the flag (tool_only, sidechain, empty, json_only)."""

KIND = "turn_flag"


def compile(spec, ctx, path):
    def turn_flag(subject) -> bool:
        return bool(subject.turns) and all(spec in t.flags for t in subject.turns)

    turn_flag.required_keywords = None
    turn_flag.needs = (frozenset((spec,)), 0, 0)  # what a turn must have: see compiler._turn_needs
    return turn_flag

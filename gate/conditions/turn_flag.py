"""turn_flag: every turn of the subject carries the flag (tool_only, sidechain, empty, json_only)."""

KIND = "turn_flag"


def compile(spec, ctx, path):
    def turn_flag(subject) -> bool:
        return bool(subject.turns) and all(spec in t.flags for t in subject.turns)

    turn_flag.required_keywords = None
    return turn_flag

"""role: every turn of the subject has one of these roles (and there is one)."""

KIND = "role"


def compile(spec, ctx, path):
    roles = frozenset([spec] if isinstance(spec, str) else spec)

    def role(subject) -> bool:
        return bool(subject.turns) and all(t.role in roles for t in subject.turns)

    role.required_keywords = None
    return role

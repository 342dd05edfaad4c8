"""structure: markdown/config counts (headings, bullets, fences...), each within min / max.

The repository-file rule is built from these: a pasted CLAUDE.md has headings
and bullets; a pasted config has key: value lines; a stated convention has neither.
"""

from gate.conditions._bounds import within

KIND = "structure"


def compile(spec, ctx, path):
    checks = tuple(spec.items())

    def structure(subject) -> bool:
        counts = subject.structure
        return all(within(counts[name], bounds) for name, bounds in checks)

    structure.required_keywords = None
    return structure

"""structure: markdown/config counts (headings, bullets, fences...), each within min / max.

The repository-file rule is built from these: a pasted CLAUDE.md has headings
and bullets; a pasted config has key: value lines; a stated convention has neither.
"""

from gate.engine.conditions._bounds import within

KIND = "structure"

# What a text must hold for a count to be above zero (see gate/engine/features.py): one
# of these strings. Checking them first spares counting the lines of most texts.
_NEEDS = {"headings": ("#",), "bullets": ("-", "*", "+", "•"), "numbered": (".", ")"),
          "code_fences": ("```", "~~~"), "fenced_lines": ("```", "~~~"), "table_rows": ("|",),
          "config_lines": (":", "=")}


def compile(spec, ctx, path):
    checks = tuple(spec.items())
    optimized = ctx.literals is not None
    needs = tuple(_NEEDS[name] for name, bounds in checks
                  if optimized and name in _NEEDS and bounds.get("min", 0) >= 1)

    def structure(subject) -> bool:
        if needs:
            text = subject.text
            for options in needs:
                if not any(option in text for option in options):
                    return False
        counts = subject.structure
        return all(within(counts[name], bounds) for name, bounds in checks)

    structure.required_keywords = None
    return structure

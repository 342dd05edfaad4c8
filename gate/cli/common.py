"""What every command module shares: locating the newest rules, and failing with located errors.

It lives below the command modules so none of them reaches back into the group that registers them.
"""

from __future__ import annotations

import os
import re
import sys

import click

EXIT_BAD_INPUT = 2


def newest_rules(rules_dir: str = "rules") -> str:
    """The highest-versioned rules file in `rules_dir` (v2.10 sorts after v2.9)."""
    try:
        names = [n for n in os.listdir(rules_dir) if n.endswith((".yaml", ".yml"))]
    except OSError:
        names = []
    if not names:
        raise click.UsageError(f"no rules files in {rules_dir}/; pass --rules PATH")

    def version(name: str):
        return [int(p) if p.isdigit() else p for p in re.split(r"(\d+)", name)]

    return os.path.join(rules_dir, max(names, key=version))


def fail(error) -> None:
    """Print a GateError's problems, one line each, and exit."""
    for problem in error.problems:
        click.echo(str(problem), err=True)
    sys.exit(EXIT_BAD_INPUT)

"""What every command module shares: locating the newest rules, and failing with located errors.

It lives below the command modules so none of them reaches back into the group that registers them.
"""

from __future__ import annotations

import os
import sys

import click

from gate.language import versions

EXIT_BAD_INPUT = 2


def newest_rules(rules_dir: str = "rules") -> str:
    """The highest-versioned rules file in `rules_dir` (v2.10 sorts after v2.9)."""
    try:
        names = [n for n in os.listdir(rules_dir) if n.endswith((".yaml", ".yml"))]
    except OSError:
        names = []
    if not names:
        raise click.UsageError(f"no rules files in {rules_dir}/; pass --rules PATH")
    return os.path.join(rules_dir, versions.newest(names))


def fail(error) -> None:
    """Print a GateError's problems, one line each, and exit."""
    for problem in error.problems:
        click.echo(str(problem), err=True)
    sys.exit(EXIT_BAD_INPUT)

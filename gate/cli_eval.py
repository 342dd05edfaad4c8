"""`gate fixtures`, `gate eval`, `gate diff`: the evaluator's commands."""

from __future__ import annotations

import json
import sys

import click


@click.command()
@click.argument("paths", nargs=-1, type=click.Path())
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
def fixtures(paths, fmt) -> None:
    """Validate fixtures and print coverage: counts per label, type and tag."""
    from gate.cli import fail
    from gate.errors import GateError
    from gate.fixtures import coverage, load_fixtures

    try:
        loaded = load_fixtures(list(paths) or ["fixtures"], require_all_types=True)
    except GateError as exc:
        fail(exc)
    summary = coverage(loaded)
    if fmt == "json":
        click.echo(json.dumps(summary, indent=2))
        return
    click.echo(f"{summary['total']} fixtures" + (f", {summary['todo']} marked todo" if summary["todo"] else ""))
    for title, counts in (("label", summary["labels"]), ("type", summary["types"]), ("tag", summary["tags"])):
        click.echo(f"\nper {title}:")
        for name, count in counts.items():
            click.echo(f"  {name:<20} {count:>4}")


eval_ = None  # set below by the evaluator
diff = None

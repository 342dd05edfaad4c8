"""`gate init`: start a rules repository."""

from __future__ import annotations

import click

_WHAT = (
    ("fixtures/", "starter fixtures the revision passes: drop, exclude, extract"),
    ("schemas/", "what each file's yaml-language-server line points at, for the editor"),
    (".pre-commit-config.yaml", "gate lint, gate fixtures, gate eval --check before each commit"),
    (".github/workflows/gate.yml", "the same on pull requests, and the gate diff comment"),
)


@click.command("init")
@click.argument("directory", type=click.Path(file_okay=False))
@click.option("--force", is_flag=True,
              help="Write into a directory that is not empty, replacing files of the same name.")
def init(directory, force) -> None:
    """Start a rules repository in DIRECTORY (created if missing).

    It holds the newest revision gate ships as rules/v1.0.yaml, starter
    fixtures, the schemas for the editor, a pre-commit config and a GitHub
    Actions workflow; `cd DIRECTORY && gate eval --check` passes at once.
    """
    from gate.cli.common import fail
    from gate.language.errors import GateError
    from gate.scaffold import init_repository

    try:
        result = init_repository(directory, force=force)
    except GateError as exc:
        fail(exc)
    click.echo(f"gate init: {directory}, from gate's shipped {result.source}")
    click.echo(f"  {'rules/v1.0.yaml':<27} policy {result.policy}")
    for prefix, what in _WHAT:
        click.echo(f"  {prefix:<27} {what}")
    click.echo(f"  {result.git}")
    for relative in result.replaced:
        click.echo(f"  replaced {relative}")
    click.echo(f"\nnext:\n  cd {directory} && gate eval --check\n  pip install pre-commit && pre-commit install")

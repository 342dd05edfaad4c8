"""`gate lint`, `gate hash`, `gate policy find`: commands that read a rules file as data."""

from __future__ import annotations

import sys

import click

from gate.cli.common import fail, newest_rules


@click.command()
@click.argument("rules", nargs=-1, type=click.Path())
def lint(rules) -> None:
    """Validate revisions: schema, patterns, examples, prefilter, backtracking."""
    paths = list(rules) or [newest_rules()]
    failed = False
    for path, problems in zip(paths, _lint_all(paths)):
        for problem in problems:
            click.echo(problem, err=True)
        failed |= bool(problems)
        click.echo(f"{path}: {'FAILED, ' + str(len(problems)) + ' problem(s)' if problems else 'ok'}")
    sys.exit(1 if failed else 0)


def _lint_all(paths):
    """Each file's problems as text, in the order given; several files are linted one per core
    (a revision takes a few seconds, and `gate lint rules/*.yaml` reads them all)."""
    import multiprocessing
    import os

    jobs = min(len(paths), os.cpu_count() or 1)
    if jobs < 2 or "fork" not in multiprocessing.get_all_start_methods():
        return map(_lint_one, paths)
    with multiprocessing.get_context("fork").Pool(jobs) as pool:
        return pool.map(_lint_one, paths, chunksize=1)


def _lint_one(path: str) -> list[str]:
    from gate.evaluation import lint_cache

    if lint_cache.is_known_clean(path):  # these bytes linted clean with this very code before
        return []
    from gate.evaluation.lint import lint_file

    problems = [str(problem) for problem in lint_file(path)]
    if not problems:
        lint_cache.remember_clean(path)
    return problems


@click.command("hash")
@click.argument("rules", type=click.Path())
def hash_(rules) -> None:
    """Print a revision's policy id (revision name + hash of its behaviour)."""
    from gate.engine.compiler import compile_revision
    from gate.language.errors import GateError
    from gate.language.loader import load_revision

    try:
        revision = load_revision(rules)
        compile_revision(revision)  # a revision whose patterns do not compile has no behaviour to name
    except GateError as exc:
        fail(exc)
    click.echo(revision.policy)


@click.group()
def policy() -> None:
    """Trace policy ids back to rules files."""


@policy.command("find")
@click.argument("policy_id")
@click.option("--rules-dir", default="rules", show_default=True, type=click.Path())
def policy_find(policy_id, rules_dir) -> None:
    """Name the rules file(s), in rules/ or its git history, with this policy id."""
    from gate.language.history import find_policy

    places = find_policy(policy_id, rules_dir)
    for place in places:
        click.echo(place)
    if not places:
        click.echo(f"no rules file in {rules_dir}/ or its git history has policy id {policy_id}", err=True)
        sys.exit(1)

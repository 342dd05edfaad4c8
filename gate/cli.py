"""The `gate` command. Thin: parse arguments, call one module, print.

Bad input prints located one-line errors and exits non-zero; never a traceback.
Heavy imports live inside commands so `gate classify` starts fast.
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


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="gate")
def main() -> None:
    """gate: the write gate for coding-assistant memory, with rules as data."""


@main.command()
@click.argument("rules", nargs=-1, type=click.Path())
def lint(rules) -> None:
    """Validate revisions: schema, patterns, examples, prefilter, backtracking."""
    from gate.lint import lint_file

    paths = list(rules) or [newest_rules()]
    failed = False
    for path in paths:
        problems = lint_file(path)
        for problem in problems:
            click.echo(str(problem), err=True)
        failed |= bool(problems)
        click.echo(f"{path}: {'FAILED, ' + str(len(problems)) + ' problem(s)' if problems else 'ok'}")
    sys.exit(1 if failed else 0)


@main.command()
@click.option("--rules", "rules_path", type=click.Path(), help="Rules file (default: newest in rules/).")
@click.option("--level", help="Capture level (default: the revision's default_level).")
@click.option("--track-shapes", type=click.IntRange(0, 10_000), default=0, show_default=True,
              help="Remember the last N window shapes of the stream as recent shapes.")
@click.option("--no-cache", is_flag=True, help="Parse the YAML even when a compiled copy is cached.")
@click.option("--jobs", type=click.IntRange(1, 256), default=1, show_default=True,
              help="Worker processes for a long JSON Lines input; output keeps the input's order.")
@click.argument("source", default="-", type=click.Path(allow_dash=True))
def classify(rules_path, level, track_shapes, no_cache, jobs, source) -> None:
    """Classify a JSON window, or JSON Lines of windows; one JSON decision per line.

    A line is a window (a list of {role, content}) or an object
    {"window": [...], "recent_shapes": [...], "level": "..."}.
    """
    from gate.cache import load_classifier
    from gate.errors import GateError
    from gate.stream import classify_parallel, classify_stream

    if jobs > 1 and track_shapes:
        raise click.UsageError("--track-shapes follows the stream in order; it needs --jobs 1")
    try:
        classifier = load_classifier(rules_path or newest_rules(), use_cache=not no_cache)
    except GateError as exc:
        fail(exc)
    if level is not None and level not in classifier.levels:
        raise click.BadParameter(f"must be one of {', '.join(classifier.levels)}", param_hint="--level")
    # Hooks speak UTF-8 whatever the locale. Bytes that are not UTF-8 come in as
    # lone surrogates (the classifier cleans them), and nothing can break a write.
    for std, errors in ((sys.stdin, "surrogateescape"), (sys.stdout, "replace")):
        if hasattr(std, "reconfigure"):
            std.reconfigure(encoding="utf-8", errors=errors)
    stream = sys.stdin if source == "-" else open(source, encoding="utf-8", errors="surrogateescape")
    with stream:
        if jobs > 1:
            bad = classify_parallel(classifier, stream, sys.stdout, jobs=jobs, level=level, source=source)
        else:
            bad = classify_stream(classifier, stream, sys.stdout, level=level, track_shapes=track_shapes,
                                  source=source)
    sys.exit(1 if bad else 0)


@main.command("hash")
@click.argument("rules", type=click.Path())
def hash_(rules) -> None:
    """Print a revision's policy id (revision name + hash of its behaviour)."""
    from gate.compiler import compile_revision
    from gate.errors import GateError
    from gate.loader import load_revision

    try:
        revision = load_revision(rules)
        compile_revision(revision)  # a revision whose patterns do not compile has no behaviour to name
    except GateError as exc:
        fail(exc)
    click.echo(revision.policy)


@main.group()
def policy() -> None:
    """Trace policy ids back to rules files."""


@policy.command("find")
@click.argument("policy_id")
@click.option("--rules-dir", default="rules", show_default=True, type=click.Path())
def policy_find(policy_id, rules_dir) -> None:
    """Name the rules file(s), in rules/ or its git history, with this policy id."""
    from gate.policy import find_policy

    places = find_policy(policy_id, rules_dir)
    for place in places:
        click.echo(place)
    if not places:
        click.echo(f"no rules file in {rules_dir}/ or its git history has policy id {policy_id}", err=True)
        sys.exit(1)


def _register_optional_commands() -> None:
    """Commands that live in their own modules (evaluation, platform)."""
    from gate.cli_eval import diff, eval_, fixtures

    for command in (eval_, diff, fixtures):
        main.add_command(command)
    try:
        from gate.platform.commands import apply, emulator, rescore
    except ImportError:  # the platform package is optional at import time only while it is built
        return
    for command in (emulator, apply, rescore):
        main.add_command(command)


_register_optional_commands()

"""`gate classify`: the hook path. Only click at import time; the classifier loads inside the command."""

from __future__ import annotations

import sys

import click

from gate.cli.common import EXIT_BAD_INPUT, fail, newest_rules


@click.command()
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
    from gate.engine.cache import load_classifier
    from gate.language.errors import GateError
    from gate.engine.stream import classify_parallel, classify_stream

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
    try:
        stream = sys.stdin if source == "-" else open(source, encoding="utf-8", errors="surrogateescape")
    except OSError as exc:
        click.echo(f"{source}: cannot read windows: {exc.strerror or exc}", err=True)
        sys.exit(EXIT_BAD_INPUT)
    with stream:
        if jobs > 1:
            bad = classify_parallel(classifier, stream, sys.stdout, jobs=jobs, level=level, source=source)
        else:
            bad = classify_stream(classifier, stream, sys.stdout, level=level, track_shapes=track_shapes,
                                  source=source)
    sys.exit(1 if bad else 0)

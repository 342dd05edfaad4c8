"""`gate fit`: learn a revision's signal weights (and a lexicon) from labeled windows."""

from __future__ import annotations

import os

import click

_FORMATS = click.Choice(["text", "json", "markdown"])


@click.command("fit")
@click.argument("rules_path", type=click.Path())
@click.option("--fixtures", "fixture_paths", multiple=True, type=click.Path(),
              help="Fixture file or folder; repeat for several (default: fixtures/).")
@click.option("--recall-only", "recall_only", multiple=True, type=click.Path(),
              help="Fixtures also fitted and cross-validated, whose flags count toward a level's recall but "
                   "not its precision (where the platform's instructions filter what is sent); repeatable. A file "
                   "named here counts as recall-only even inside a --fixtures folder.")
@click.option("--holdout", "holdout", multiple=True, type=click.Path(),
              help="Fixtures kept out of the fit and the cross-validation, even inside a --fixtures folder: a "
                   "blind set to score the new revision on with `gate eval`; repeatable. The fitted block "
                   "names them.")
@click.option("--out", "out_path", type=click.Path(), help="Write the fitted revision here (default: report only).")
@click.option("--revision", "revision_name", help="Name of the new revision (default: from --out, e.g. v2.5).")
@click.option("--folds", type=click.IntRange(2, 50), default=5, show_default=True,
              help="Cross-validation folds, grouped by source file and near-duplicate cluster.")
@click.option("--seed", type=int, default=13, show_default=True, help="Orders groups of equal size into folds.")
@click.option("--lexicon", "lexicon", type=click.IntRange(0, 5000), default=None,
              help="Select and fit at most N words and two-word phrases (a `lexicon` signal).")
@click.option("--l2", type=click.FloatRange(min=0.0, min_open=True), default=1.0, show_default=True,
              help="Strength of the L2 penalty on every fitted weight.")
@click.option("--type-prior", type=click.FloatRange(min=0.0), default=0.0, show_default=True,
              help="Pull the type part toward the hand weights' type evidence (0: toward zero); 1 starts from it whole.")
@click.option("--type-l2", type=click.FloatRange(min=0.0, min_open=True), default=None,
              help="Strength of the L2 penalty on the type part (default: --l2).")
@click.option("--recall-weight", type=click.FloatRange(min=0.0, min_open=True), default=1.0, show_default=True,
              help="How much a knowledge window of a --recall-only set counts in the fit, against 1 for any other "
                   "window: losing knowledge in a long exchange is the costlier error.")
@click.option("--recall-only-rest-weight", "rest_weight", type=click.FloatRange(min=0.0, min_open=True),
              default=1.0, show_default=True,
              help="How much a window of a --recall-only set that holds no knowledge counts in the fit, against 1 "
                   "for any other window: its flag costs no precision, since the platform's instructions filter there.")
@click.option("--min-df", type=click.IntRange(1, 1000), default=3, show_default=True,
              help="Lexicon: a term must occur in this many training windows (of two sources or more).")
@click.option("--spread", type=click.IntRange(0, 20), default=0, show_default=True,
              help="Cross-validate N more times under fold seeds SEED+1.. and report each score's range "
                   "(the written file is the same).")
@click.option("--report", "report_path", type=click.Path(), help="Also write the JSON report here.")
@click.option("--format", "fmt", type=_FORMATS, default="text", show_default=True)
@click.option("--quiet", is_flag=True, help="No progress lines on stderr.")
def fit(rules_path, fixture_paths, recall_only, holdout, out_path, revision_name, folds, seed, lexicon, l2,
        type_prior, type_l2, recall_weight, rest_weight, min_df, spread, report_path, fmt, quiet) -> None:
    """Fit RULES' signal weights to labeled fixtures; write a new revision with --out.

    The drop half and mandatory rules are never changed. Each level's threshold is its
    operating point (flag.operating_points) chosen on cross-validated scores, and the
    report shows every score cross-validated, beside the hand weights on the same folds.
    Needs the optional extra: pip install 'gate[fit]'.
    """
    import importlib.util

    from gate.cli.common import EXIT_BAD_INPUT, fail
    from gate.language.errors import GateError, Problem

    missing = [m for m in ("numpy", "scipy", "sklearn") if importlib.util.find_spec(m) is None]
    if missing:
        click.echo(f"gate fit: needs the fit extra ({', '.join(missing)} not installed): "
                   "pip install 'gate[fit]'", err=True)
        raise SystemExit(EXIT_BAD_INPUT)
    if out_path and os.path.abspath(out_path) == os.path.abspath(rules_path):
        fail(GateError(Problem(out_path, "--out must be a new file: a fit never overwrites the revision it starts from")))
    for path in (out_path, report_path):  # before the fit's minutes of work, not after them
        problem = _unwritable(path) if path else None
        if problem:
            fail(GateError(Problem(path, problem)))
    name = revision_name or (os.path.splitext(os.path.basename(out_path))[0] if out_path else None)
    from gate.fit.report import render
    from gate.fit.run import fit_revision

    progress = None if quiet else (lambda message: click.echo(f"gate fit: {message}", err=True))
    try:
        outcome = fit_revision(rules_path, list(fixture_paths) or ["fixtures"], out_revision=name or "fitted",
                               folds=folds, seed=seed, l2=l2, lexicon=lexicon, min_df=min_df,
                               recall_only=list(recall_only), holdout=list(holdout), type_prior=type_prior,
                               type_l2=type_l2, recall_weight=recall_weight, rest_weight=rest_weight,
                               spread=spread, progress=progress)
    except GateError as exc:
        fail(exc)
    try:
        if out_path:
            _write(out_path, outcome.text)
        if report_path:
            _write(report_path, render(outcome.report, "json"))
    except OSError as exc:
        fail(GateError(Problem(exc.filename or out_path or report_path, f"cannot write: {exc.strerror or exc}")))
    click.echo(render(outcome.report, fmt), nl=False)
    if out_path and not quiet:
        click.echo(f"gate fit: wrote {out_path}", err=True)
    if outcome.report["self_check"]["differ"]:
        raise SystemExit(1)  # the written file does not decide as the fit computed: a bug, say so loudly


def _unwritable(path: str) -> str | None:
    """Why `path` cannot take the file, or None; its folder is made, as `gate eval --report` makes it."""
    directory = os.path.dirname(os.path.abspath(path))
    try:
        os.makedirs(directory, exist_ok=True)
    except OSError as exc:
        return f"cannot make its folder: {exc.strerror or exc}"
    if os.path.isdir(path):
        return "is a folder, not a file"
    return None if os.access(directory, os.W_OK | os.X_OK) else "its folder is not writable"


def _write(path: str, text: str) -> None:
    """Whole or not at all: a temporary file beside it, then renamed over."""
    directory = os.path.dirname(os.path.abspath(path))
    temporary = os.path.join(directory, f".{os.path.basename(path)}.tmp")
    try:
        with open(temporary, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.replace(temporary, path)
    except OSError as exc:
        # The person named `path`; the temporary file is ours, so the error names theirs.
        if os.path.isfile(temporary):
            os.remove(temporary)
        raise OSError(exc.errno, exc.strerror or str(exc), path) from exc

"""`gate fixtures`, `gate eval`, `gate diff`: the evaluator's commands."""

from __future__ import annotations

import json
import os
import sys

import click


@click.command()
@click.argument("paths", nargs=-1, type=click.Path())
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
def fixtures(paths, fmt) -> None:
    """Validate fixtures and print coverage: counts per label, type and tag."""
    from gate.cli.common import fail
    from gate.language.errors import GateError
    from gate.evaluation.fixtures import coverage, load_fixtures

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


_FORMATS = click.Choice(["text", "json", "markdown"])


def _emit(text: str) -> None:
    click.echo(text, nl=False)


@click.command("eval")
@click.option("--rules", "rules_path", help="Rules file, or REV:path from git (default: newest in rules/).")
@click.option("--fixtures", "fixture_paths", multiple=True, type=click.Path(),
              help="Fixture file or folder; repeat for several (default: fixtures/).")
@click.option("--level", help="Capture level (default: the revision's default_level).")
@click.option("--sweep", is_flag=True, help="Score every level in one run, side by side.")
@click.option("--check", is_flag=True, help="Exit non-zero when a floor from the revision's thresholds is not met.")
@click.option("--strict", is_flag=True, help="Score todo fixtures with the rest, so known gaps fail --check.")
@click.option("--report", "report_path", default="last_report.json", show_default=True, type=click.Path(),
              help="Where to write the JSON report.")
@click.option("--format", "fmt", type=_FORMATS, default="text", show_default=True)
@click.option("-q", "--quiet", is_flag=True,
              help="Print only the check: one line when it passes, else each failed floor with the "
                   "fixtures that failed it (what a pre-commit hook shows).")
@click.option("--jobs", type=click.IntRange(1, 256), default=None,
              help="Worker processes for big fixture sets (default: the CPUs available).")
@click.option("--no-cache", is_flag=True, help="Parse the rules file and every fixture file, even those parsed before and cached.")
@click.option("--live", is_flag=True, help="Replay fixtures against a scratch Mem0 project (see --project-id).")
@click.option("--project-id", help="--live: the scratch project to write to (required, no default).")
@click.option("--org-id", help="--live: the scratch project's organization (required, no default).")
@click.option("--base-url", default="https://api.mem0.ai", show_default=True, help="--live: platform URL.")
@click.option("--api-key-env", default="MEM0_API_KEY", show_default=True,
              help="--live: environment variable holding the API key.")
@click.option("--run-id", help="--live: run id for user and app ids (default: generated).")
@click.option("--timeout", type=float, default=360.0, show_default=True,
              help="--live: seconds to wait for extraction.")
@click.option("--min-settle", type=float, default=60.0, show_default=True,
              help="--live: seconds before a zero read counts as suppression.")
@click.option("--cleanup", is_flag=True, help="--live: delete everything the run wrote.")
@click.option("--preflight-only", is_flag=True, help="--live: check key, ping and target; write nothing.")
@click.option("--allow-default-project", is_flag=True, help="--live: allow writing to the key's default project.")
@click.option("--report-mode", type=click.Choice(["compact", "full"]), default="compact", show_default=True,
              help="--live: how much of each stored memory the report keeps.")
@click.argument("more_fixtures", nargs=-1, type=click.Path(), metavar="[FIXTURES]...")
def eval_(rules_path, fixture_paths, level, sweep, check, strict, report_path, fmt, quiet, jobs, no_cache, live, project_id,
          org_id, base_url, api_key_env, run_id, timeout, min_settle, cleanup, preflight_only,
          allow_default_project, report_mode, more_fixtures) -> None:
    """Score a rules revision against labeled fixtures and write a report.

    Fixture paths may follow --fixtures or stand alone: `--fixtures a.yaml b/`
    scores both.

    Exit status: 0 scored (and, with --check, every floor met); 1 a floor not
    met under --check; 2 nothing could be measured (rules or fixtures did not
    load): a gate that cannot measure must not pass.
    """
    from gate.cli.common import fail, newest_rules
    from gate.language.errors import GateError

    fixture_paths = list(fixture_paths) + list(more_fixtures) or ["fixtures"]
    if not rules_path:
        try:
            rules_path = newest_rules()
        except click.UsageError:
            rules_path = None
    if live:
        from gate.live import run_live

        sys.exit(run_live(rules_path, fixture_paths, level=level, project_id=project_id, org_id=org_id,
                          base_url=base_url, api_key_env=api_key_env, run_id=run_id, timeout=timeout,
                          min_settle=min_settle, cleanup=cleanup, preflight_only=preflight_only,
                          allow_default_project=allow_default_project, report_path=report_path,
                          report_mode=report_mode, check=check, echo=click.echo))
    live_only = [name for name, given in (("--project-id", project_id), ("--org-id", org_id), ("--run-id", run_id),
                                          ("--cleanup", cleanup), ("--preflight-only", preflight_only),
                                          ("--allow-default-project", allow_default_project)) if given]
    if live_only:
        raise click.UsageError(f"{', '.join(live_only)} only apply with --live")
    if sweep and level:
        raise click.UsageError("--sweep scores every level; give --level or --sweep, not both")

    from gate.evaluation.evaluate import evaluate
    from gate.evaluation.report import dumps, render_check, render_markdown, render_text

    try:
        report = evaluate(rules_path, fixture_paths, level=level, sweep=sweep, strict=strict, jobs=jobs,
                          use_cache=not no_cache)
    except GateError as exc:
        fail(exc)
    text = dumps(report)
    try:
        os.makedirs(os.path.dirname(report_path) or ".", exist_ok=True)
        with open(report_path, "w", encoding="utf-8") as handle:
            handle.write(text)
    except OSError as exc:
        raise click.FileError(report_path, hint=exc.strerror or str(exc)) from None
    if quiet:
        _emit(render_check(report))
    elif fmt == "json":
        _emit(text)
    elif fmt == "markdown":
        _emit(render_markdown(report))
    else:
        _emit(render_text(report))
        click.echo(f"report: {report_path}")
    if not report["measured"]:
        sys.exit(2)
    sys.exit(1 if check and not report["check"]["passed"] else 0)


@click.command()
@click.argument("old")
@click.argument("new")
@click.argument("more_fixtures", nargs=-1, type=click.Path(), metavar="[FIXTURES]...")
@click.option("--fixtures", "fixture_paths", multiple=True, type=click.Path(),
              help="Fixture file or folder; repeat for several (default: fixtures/).")
@click.option("--level", help="Score both at this level (default: each revision's default_level).")
@click.option("--format", "fmt", type=_FORMATS, default="text", show_default=True)
@click.option("--check", is_flag=True, help="Exit non-zero when NEW misses a floor or regresses a gated metric.")
@click.option("--jobs", type=click.IntRange(1, 256), default=None,
              help="Worker processes for big fixture sets (default: the CPUs available).")
def diff(old, new, more_fixtures, fixture_paths, level, fmt, check, jobs) -> None:
    """Compare two revisions on the same fixtures: metric deltas, the fixtures that
    changed (regressions first), and what changed in the rules, with a verdict.

    OLD and NEW are paths or REV:path from git, e.g.
    `gate diff HEAD~1:rules/v2.1.yaml rules/v2.1.yaml`. Paths after OLD NEW
    are more fixture paths (`--fixtures a.yaml b/` scores both).
    """
    from gate.cli.common import fail
    from gate.evaluation.diff import diff_revisions
    from gate.language.errors import GateError
    from gate.evaluation.report import dumps, render_diff_markdown, render_diff_text

    try:
        result = diff_revisions(old, new, list(fixture_paths) + list(more_fixtures) or ["fixtures"],
                                level=level, jobs=jobs)
    except GateError as exc:
        fail(exc)
    if fmt == "json":
        _emit(dumps(result))
    elif fmt == "markdown":
        _emit(render_diff_markdown(result))
    else:
        _emit(render_diff_text(result))
    sys.exit(1 if check and not result["check"]["passed"] else 0)

"""`gate replay`: a transcript archive through one or two revisions. Only click at import time."""

from __future__ import annotations

import json
import sys
import time

import click

from gate.cli.common import fail, newest_rules


@click.command()
@click.argument("paths", nargs=-1, required=True, type=click.Path())
@click.option("--rules", "rules_spec", help="Revision A: a rules file or REV:path (default: newest in rules/).")
@click.option("--vs", "vs_spec", help="Revision B, judged on the same windows; flips are listed.")
@click.option("--level", help="Capture level for both (default: each revision's default_level).")
@click.option("--recent-shapes", type=click.IntRange(0, 10_000), default=32, show_default=True,
              help="Window shapes a session remembers, as the hook keeps them (0: none).")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
@click.option("--export-candidates", "export_path", type=click.Path(dir_okay=False),
              help="Write a sample of windows as fixtures to label (YAML, fixtures schema).")
@click.option("--sample", type=click.IntRange(1, 100_000), default=50, show_default=True,
              help="How many windows to export: flips first, then stratified by decision and deciding rule.")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the export's sample.")
@click.option("--progress/--no-progress", default=None,
              help="Progress bar on stderr (default: when stderr is a terminal).")
def replay(paths, rules_spec, vs_spec, level, recent_shapes, fmt, export_path, sample, seed, progress) -> None:
    """Run every window of Claude Code and Codex transcripts (files or folders) through revision A,
    and B with --vs: decisions per rule and type, the windows that flip, the share each would send."""
    from gate.language.errors import GateError
    from gate.transcripts.archive import transcript_files
    from gate.transcripts.redact import secret_redactor
    from gate.transcripts.replay import load_side, replay as run_replay
    from gate.transcripts.report import render_replay_text

    try:
        files = transcript_files(paths)
        sides = [load_side("A", rules_spec or newest_rules(), level)]
        if vs_spec:
            sides.append(load_side("B", vs_spec, level))
    except GateError as exc:
        fail(exc)
    redactor = secret_redactor([s.revision for s in sides])
    sampler = None
    if export_path:
        from gate.transcripts.export import CandidateSampler

        sampler = CandidateSampler(sample, seed)
    show = sys.stderr.isatty() if progress is None else progress
    bar = ProgressBar() if show else None
    report = run_replay(files, sides, recent_shapes=recent_shapes, progress=bar, sampler=sampler, redactor=redactor)
    if bar is not None:
        bar.finish()
    if fmt == "json":
        click.echo(json.dumps(report, indent=1, ensure_ascii=False))
    else:
        click.echo(render_replay_text(report), nl=False)
    if export_path:
        from gate.transcripts.export import candidate_fixtures, write_candidates

        fixtures = candidate_fixtures(sampler.chosen(), sides, redactor)
        try:
            write_candidates(export_path, fixtures)
        except OSError as exc:
            raise click.FileError(export_path, hint=exc.strerror or str(exc)) from None
        note = "" if redactor else " (no secret rule in the revision: text NOT redacted)"
        click.echo(f"exported {len(fixtures)} candidate(s) to {export_path}{note}; "
                   f"check them beside the set they would join: gate fixtures fixtures/ {export_path}",
                   err=fmt == "json")


class ProgressBar:
    """`[######....]  45%  1.2/2.6 MB  3,100 windows  1,450/s` on stderr, redrawn at most 10 times a second."""

    WIDTH = 28

    def __init__(self) -> None:
        self.started = time.monotonic()
        self.drawn = float("-inf")  # the first call draws

    def __call__(self, done: int, total: int, windows: int) -> None:
        now = time.monotonic()
        if now - self.drawn < 0.1:
            return
        self.drawn = now
        share = done / total if total else 1.0
        filled = int(self.WIDTH * share)
        rate = windows / (now - self.started) if now > self.started else 0.0
        sys.stderr.write(f"\r[{'#' * filled}{'.' * (self.WIDTH - filled)}] {100 * share:3.0f}%  "
                         f"{done / 1e6:.1f}/{total / 1e6:.1f} MB  {windows:,} windows  {rate:,.0f}/s ")
        sys.stderr.flush()

    def finish(self) -> None:
        sys.stderr.write("\r" + " " * 79 + "\r")
        sys.stderr.flush()

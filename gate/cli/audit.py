"""`gate audit`: click only at import time; the audit machinery loads inside the command."""

from __future__ import annotations

import sys

import click

from gate.cli.common import newest_rules

DEFAULT_BASE_URL = "https://api.mem0.ai"


@click.command()
@click.argument("export", required=False, type=click.Path())
@click.option("--live", is_flag=True, help="Read a live scope through the platform API instead of an export.")
@click.option("--user-id", help="Live: the user whose memories to read.")
@click.option("--app-id", help="Live: only this app's (project-scoped) memories; default every memory of the user.")
@click.option("--project-id", default=None, help="Live: project override (with --org-id); default the key's own.")
@click.option("--org-id", default=None, help="Live: org of the project override (with --project-id).")
@click.option("--base-url", default=DEFAULT_BASE_URL, show_default=True, help="Live: the platform's address.")
@click.option("--api-key-env", default="MEM0_API_KEY", show_default=True,
              help="Live: environment variable holding the API key.")
@click.option("--page-size", default=100, show_default=True, type=click.IntRange(1, 1000), help="Live: memories per page.")
@click.option("--rules", "rules_path", type=click.Path(), help="Rules file (default: newest in rules/).")
@click.option("--level", help="Level of the drop rules (default: the revision's default_level).")
@click.option("--role", type=click.Choice(["user", "assistant", "tool"]), default="user", show_default=True,
              help="Role a memory's text is judged as by the drop rules.")
@click.option("--skip-drop-rules", is_flag=True,
              help="Judge noise by the noise markers alone: faster on a large store (the drop rules cost "
                   "about a fifth of the audit's CPU on distinct facts, more on text they may drop); the "
                   "report says the drop rules were not judged.")
@click.option("--format", "fmt", type=click.Choice(["text", "json", "html"]), default="text", show_default=True)
@click.option("--out", "out_path", type=click.Path(dir_okay=False), help="Write the report here (the summary still prints).")
@click.option("--check", is_flag=True,
              help="Exit 1 when the near-duplicate or noise share is above the revision's audit_max_* ceiling.")
@click.option("--similarity", default=0.8, show_default=True, type=click.FloatRange(0.0, 1.0, min_open=True),
              help="Token-set similarity (Jaccard) at which two shapes are one cluster.")
@click.option("--top", default=10, show_default=True, type=click.IntRange(0, 1000), help="Largest clusters to show.")
@click.option("--jobs", type=click.IntRange(1, 64), default=None, help="Worker processes (default: cores, at most 4).")
def audit(export, live, user_id, app_id, project_id, org_id, base_url, api_key_env, page_size, rules_path, level,
          role, skip_drop_rules, fmt, out_path, check, similarity, top, jobs) -> None:
    """Audit a memory store: near-duplicate clusters, noise, and which policy let each in.

    EXPORT is a JSON Lines or JSON export (get_all pages or memory objects) or the SQLite file
    of `gate emulator --db`; or read a live scope with --live --user-id U [--app-id A].
    """
    from gate.audit.command import LiveScope, run_audit

    if live == bool(export):
        raise click.UsageError("pass an EXPORT file, or --live --user-id U (not both)")
    scope = None
    if live:
        if not user_id:
            raise click.UsageError("--live needs --user-id")
        scope = LiveScope(user_id=user_id, app_id=app_id, project_id=project_id, org_id=org_id,
                          base_url=base_url, api_key_env=api_key_env, page_size=page_size)
    elif user_id or app_id or project_id or org_id:
        raise click.UsageError("--user-id, --app-id, --project-id and --org-id go with --live")
    code = run_audit(export, scope, rules_path=rules_path or newest_rules(), level=level, role=role,
                     drop_rules=not skip_drop_rules, fmt=fmt,
                     out_path=out_path, check=check, similarity=similarity, top=top, jobs=jobs,
                     echo=click.echo, echo_err=lambda line: click.echo(line, err=True))
    sys.exit(code)

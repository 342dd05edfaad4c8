"""CLI commands of the platform half: `gate emulator`, `gate apply`, `gate rescore`.

httpx and the live machinery are imported inside the command bodies, so registering these
commands costs `gate classify` nothing at start-up.
"""

from __future__ import annotations

import sys

import click

DEFAULT_BASE_URL = "https://api.mem0.ai"


@click.command()
@click.option("--host", default="127.0.0.1", show_default=True, help="Loopback address to listen on.")
@click.option("--port", default=8765, show_default=True, type=int, help="0 picks a free port.")
@click.option("--db", default=":memory:", show_default=True, help="SQLite file for state (default in memory).")
@click.option("--org-id", default="org_emu", show_default=True, help="The org the key belongs to.")
@click.option("--project-id", default="proj_default", show_default=True,
              help="The project the key resolves to when a call carries no override.")
@click.option("--api-key-env", default=None,
              help="Accept only the key in this environment variable (default: any non-empty key).")
@click.option("--delay-ms", default=2000, show_default=True, type=int, help="Extraction time of an infer=True add.")
@click.option("--late-ms", default=0, type=int, help="Extraction time for users matching --late-match.")
@click.option("--late-match", default="", help="Substring of user ids that land late ('' = all, with --late-ms).")
@click.option("--no-events", is_flag=True, help="Do not report event status (callers must poll reads).")
@click.option("--leak", is_flag=True, help="Store heartbeat sentences from any turn (a leaking memory).")
@click.option("--fail-match", default="", help="Users whose id contains this get a FAILED event.")
@click.option("--rate-429", default=0.0, type=float, help="Fraction of requests answered 429.")
@click.option("--rate-5xx", default=0.0, type=float, help="Fraction of requests answered 503.")
@click.option("--retry-after", default="1", show_default=True, help="Retry-After sent with 429/503.")
@click.option("--slow-ms", default=0, type=int, help="Delay added to every response.")
@click.option("--ignore-delete-scope", is_flag=True,
              help="Ignore org_id/project_id query params on DELETE too (cleanup then cannot reach an override).")
@click.option("--seed", default=0, type=int, help="Seed of the fault injection.")
def emulator(host, port, db, org_id, project_id, api_key_env, delay_ms, late_ms, late_match, no_events, leak,
             fail_match, rate_429, rate_5xx, retry_after, slow_ms, ignore_delete_scope, seed):
    """Run a local stand-in for the Mem0 platform on loopback (for live runs without a scratch project)."""
    import os

    from gate.platform.emulator import Emulator, EmulatorConfig

    api_key = None
    if api_key_env:
        api_key = (os.environ.get(api_key_env) or "").strip() or None
        if api_key is None:
            click.echo(f"usage error: {api_key_env} is not set", err=True)
            sys.exit(2)
    config = EmulatorConfig(org_id=org_id, project_id=project_id, api_key=api_key, delay_ms=delay_ms,
                            late_ms=late_ms, late_match=late_match, events=not no_events, leak=leak,
                            fail_match=fail_match, rate_429=rate_429, rate_5xx=rate_5xx,
                            retry_after=retry_after, slow_ms=slow_ms,
                            honour_delete_scope=not ignore_delete_scope, seed=seed)
    try:
        emu = Emulator(config, host=host, port=port, db=db)
    except (ValueError, OSError) as e:
        click.echo(f"error: {e}", err=True)
        sys.exit(2)
    click.echo(f"gate emulator listening on {emu.url}")
    click.echo(f"  the key resolves to org {org_id} / project {project_id}; "
               f"{'only the key in ' + api_key_env if api_key_env else 'any non-empty key'} is accepted")
    click.echo(f"  extraction {delay_ms} ms; events {'reported' if not no_events else 'not reported'}; "
               f"state {'in memory' if db == ':memory:' else db}. Ctrl-C stops it.")
    try:
        emu.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        emu.close()
        click.echo("gate emulator stopped")


@click.command()
@click.option("--rules", "rules_path", required=True, help="The revision whose instructions and categories to push.")
@click.option("--project-id", default=None, help="Target project (with --org-id); default: the key's own.")
@click.option("--org-id", default=None, help="Target org (with --project-id).")
@click.option("--base-url", default=DEFAULT_BASE_URL, show_default=True)
@click.option("--api-key-env", default="MEM0_API_KEY", show_default=True,
              help="Environment variable holding the API key.")
@click.option("--timeout", "request_timeout", default=30.0, show_default=True, type=float,
              help="Seconds per HTTP call.")
@click.option("--dry-run", is_flag=True, help="Read the project and print what would change; write nothing.")
def apply(rules_path, project_id, org_id, base_url, api_key_env, request_timeout, dry_run):
    """Push a revision's custom instructions and categories to a project, verified by reading back."""
    from gate.live.apply import run_apply

    code = run_apply(rules_path, project_id=project_id, org_id=org_id, base_url=base_url,
                     api_key_env=api_key_env, dry_run=dry_run, echo=click.echo,
                     request_timeout=request_timeout)
    sys.exit(code)


@click.command()
@click.argument("report_path", metavar="REPORT")
@click.option("--rules", "rules_path", default=None,
              help="Revision whose noise markers and thresholds to apply (default: the report's own).")
@click.option("--out", "out_path", default=None, help="Write the re-scored report here.")
@click.option("--check", is_flag=True, help="Exit non-zero when a live floor fails.")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
def rescore(report_path, rules_path, out_path, check, fmt):
    """Re-score a saved live report with another revision, without any network."""
    from gate.live.rescore import run_rescore

    sys.exit(run_rescore(report_path, rules_path=rules_path, out_path=out_path, check=check, fmt=fmt,
                         echo=click.echo))

"""`gate hook`, `gate flush`, `gate spool`: the editor's write path. Only click at import time."""

from __future__ import annotations

import json
import sys
import time

import click

from gate.cli.common import EXIT_BAD_INPUT, fail

EDITORS = ("claude-code",)


@click.group()
def hook() -> None:
    """The editor hook: classify each new exchange, spool what is flagged."""


@hook.command("claude-code")
@click.option("--no-budget", is_flag=True, hidden=True,
              help="No time limit: the background continuation of a long session's end.")
def hook_claude_code(no_budget) -> None:
    """Run as Claude Code's Stop, PreCompact and SessionEnd hook (event JSON on stdin).

    Prints nothing and always exits 0; what it did goes to the capture log in the state
    directory. At SessionEnd it starts `gate flush` in the background.
    """
    started = time.monotonic()
    state = None
    try:
        from gate.capture.hook import run_hook
        from gate.capture.log import log_line
        from gate.capture.paths import state_dir

        state = state_dir()
        raw = sys.stdin.buffer.read(16 * 1024 * 1024) if hasattr(sys.stdin, "buffer") else sys.stdin.read()
        text = raw.decode("utf-8", "surrogateescape") if isinstance(raw, bytes) else raw
        report = run_hook(text, budget_s=None) if no_budget else run_hook(text)
        if not report.error:
            log_line(state, f"hook {report.summary()} in {(time.monotonic() - started) * 1000:.0f} ms")
    except BaseException:  # noqa: BLE001 - the session matters more than our failure
        pass
    sys.exit(0)


@hook.command("install")
@click.argument("editor", type=click.Choice(EDITORS))
@click.option("--user", "where", flag_value="user", default=True,
              help="Into ~/.claude/settings.json: every session of this user (the default).")
@click.option("--project", "where", flag_value="project",
              help="Into .claude/settings.json of the repository you are in.")
@click.option("--dry-run", is_flag=True, help="Print the diff of what would change; write nothing.")
@click.option("--rules", "rules_path", type=click.Path(),
              help="Rules for a new configuration (default: newest in ./rules). An existing one is kept.")
@click.option("--user-id", help="Platform user id for a new configuration (default: your login name).")
def install(editor, where, dry_run, rules_path, user_id) -> None:
    """Add gate's Stop, PreCompact and SessionEnd hooks to Claude Code's settings.

    Idempotent, keeps every other setting and hook, backs the old file up before a change.
    Writes the capture configuration too when there is none.
    """
    import getpass
    import os

    from gate.capture.config import render_config
    from gate.capture.install import Plan, hook_command, plan_install, settings_path, write_plan
    from gate.capture.paths import config_path
    from gate.language.errors import GateError

    try:
        plan = plan_install(settings_path(project=where == "project", cwd=os.getcwd()), hook_command())
    except GateError as exc:
        fail(exc)
    config_file = config_path()
    new_config = None
    if not os.path.exists(config_file):
        rules = os.path.abspath(rules_path or _newest_rules_or_fail())
        new_config = render_config(rules=rules, user_id=user_id or getpass.getuser())
    else:
        rules = _configured_rules(config_file)
    # compiled once here, so the first hook of a session does not spend its timeout compiling
    _check_rules(rules)
    if dry_run:
        if plan.changed:
            click.echo(plan.diff(), nl=False)
        else:
            click.echo(f"{plan.path}: gate's hooks are already there; nothing to change")
        if new_config is not None:
            click.echo(Plan(config_file, "", new_config).diff(), nl=False)
        else:
            click.echo(f"{config_file}: exists; kept as it is")
        click.echo("dry run: nothing was written")
        return
    if plan.changed:
        backup = write_plan(plan)
        click.echo(f"{plan.path}: hooks Stop, PreCompact, SessionEnd -> {hook_command()}"
                   + (f" (backup: {backup})" if backup else ""))
    else:
        click.echo(f"{plan.path}: gate's hooks are already there; nothing written")
    if new_config is not None:
        os.makedirs(os.path.dirname(config_file), exist_ok=True)
        with open(config_file, "x", encoding="utf-8") as handle:
            handle.write(new_config)
        click.echo(f"{config_file}: written; the API key is read from $MEM0_API_KEY at flush time")
    else:
        click.echo(f"{config_file}: exists; kept as it is")


@click.command()
@click.option("--limit", type=click.IntRange(1, None), help="Send at most this many items.")
@click.option("--quiet", is_flag=True, help="Write the summary to the capture log instead of stdout.")
def flush(limit, quiet) -> None:
    """Send the spool's pending items to the platform; each is marked sent only once accepted.

    Exit 1 when the platform gave trouble and items wait for the next flush.
    """
    from gate.capture.flush import flush as run_flush, make_client
    from gate.capture.log import log_line
    from gate.capture.spool import SpoolError

    config, spool = _config_and_spool()
    say = (lambda line: log_line(spool.directory, "flush: " + line)) if quiet else click.echo
    client, why = make_client(config)
    if client is None:
        say(f"nothing sent: {why}")
        sys.exit(EXIT_BAD_INPUT)
    try:
        with client:
            report = run_flush(spool, client, config, limit=limit, echo=say if not quiet else lambda _: None)
        counts = spool.counts()
    except SpoolError as exc:
        say(f"spool: {exc}")
        sys.exit(1)
    line = (f"sent {report.sent}, deferred {report.deferred}, parked {report.parked}"
            + (f", taken back from a stopped flush {report.reclaimed}" if report.reclaimed else "")
            + f"; now pending {counts['pending']}, parked {counts['parked']}, sent {counts['sent']}")
    if report.stopped:
        line += f"\nstopped: {report.stopped}"
    say(line)
    sys.exit(0 if report.ok else 1)


@click.group(invoke_without_command=True)
@click.option("--state", "states", multiple=True, type=click.Choice(["pending", "sending", "sent", "parked"]),
              help="Only items in this state (repeatable; default: all).")
@click.option("--limit", type=click.IntRange(1, None), default=50, show_default=True)
@click.option("--json", "as_json", is_flag=True, help="One JSON object per item, payload included.")
@click.pass_context
def spool(ctx, states, limit, as_json) -> None:
    """List the spool: what waits to be sent, what was sent (with its event id), what is parked."""
    if ctx.invoked_subcommand is not None:
        return
    from gate.capture.spool import STATES

    _, store = _config_and_spool(need_config=False)
    counts = store.counts()
    items = store.items(states or STATES)
    shown = items[-limit:]
    if as_json:
        for item in shown:
            click.echo(json.dumps({**item.__dict__, "payload": item.messages}, ensure_ascii=False))
        return
    click.echo(f"{store.path}: " + ", ".join(f"{k} {v}" for k, v in counts.items()))
    for item in shown:
        click.echo(_row(item))
    if len(items) > len(shown):
        click.echo(f"(the last {len(shown)} of {len(items)}; --limit N for more)")


@spool.command("retry")
@click.argument("ids", nargs=-1, type=int)
def spool_retry(ids) -> None:
    """Make parked (and waiting) items due now, with a fresh failure count; then run `gate flush`."""
    _, store = _config_and_spool(need_config=False)
    n = store.retry(list(ids) or None)
    click.echo(f"{n} item(s) due now; `gate flush` sends them")


@spool.command("purge")
@click.option("--sent-before", required=True, help="A date (YYYY-MM-DD, UTC) or an ISO date-time.")
def spool_purge(sent_before) -> None:
    """Delete sent items older than a date (pending and parked items are never purged)."""
    from datetime import datetime, timezone

    try:
        when = datetime.fromisoformat(sent_before)
    except ValueError:
        raise click.BadParameter("expected a date like 2026-12-01 or 2026-12-01T18:00", param_hint="--sent-before")
    if when.tzinfo is None:
        when = when.replace(tzinfo=timezone.utc)
    _, store = _config_and_spool(need_config=False)
    n = store.purge_sent_before(when.timestamp())
    click.echo(f"purged {n} sent item(s) sent before {when.isoformat()}")


def _newest_rules_or_fail() -> str:
    from gate.cli.common import newest_rules

    return newest_rules()


def _configured_rules(config_file: str) -> str:
    from gate.capture.config import load_config
    from gate.language.errors import GateError

    try:
        return load_config(config_file).rules
    except GateError as exc:
        fail(exc)


def _check_rules(path: str) -> None:
    from gate.engine.cache import load_classifier
    from gate.language.errors import GateError

    try:
        load_classifier(path)
    except GateError as exc:
        fail(exc)


def _config_and_spool(need_config: bool = True):
    from gate.capture.config import load_config
    from gate.capture.paths import config_path, state_dir
    from gate.capture.spool import Spool, SpoolError
    from gate.language.errors import GateError

    config = None
    if need_config:
        try:
            config = load_config(config_path())
        except GateError as exc:
            fail(exc)
    try:
        return config, Spool(state_dir())
    except SpoolError as exc:
        click.echo(f"spool: {exc}", err=True)
        sys.exit(1)


def _row(item) -> str:
    when = time.strftime("%Y-%m-%d %H:%M", time.gmtime(item.created_at))
    try:
        first = next((m["content"] for m in item.messages if m.get("role") == "user"), item.messages[0]["content"])
    except (ValueError, IndexError, KeyError, TypeError):
        first = ""
    preview = " ".join(first.split())
    preview = preview if len(preview) <= 60 else preview[:57] + "..."
    if item.state == "sent":
        status = f"event {item.event_id or '?'}"
    elif item.state == "parked" or item.error:
        status = f"{item.attempts} failed: {item.error or ''}"
    else:
        status = "due" if item.next_attempt_at <= time.time() else \
            "retry at " + time.strftime("%H:%M:%S", time.gmtime(item.next_attempt_at))
    doubt = f" (resent {item.resends}x)" if item.resends else ""
    return (f"{item.id:>5} {item.state:<7} {item.type:<11} {item.repository[:24]:<24} {when}  "
            f"{preview!r}  {status}{doubt}")

"""`gate eval --live`: replay exclude/extract fixtures against a scratch project and score what landed.

Order of events, each step refusing early rather than writing somewhere unintended:
  1. --project-id and --org-id present, the key present (else exit 2, nothing sent);
  2. load the revision and fixtures (bad input: exit 2, nothing sent);
  3. preflight: ping, show where the key resolves and where the run would write, refuse the key's
     default project unless --allow-default-project (--preflight-only stops here);
  4. apply the revision's instructions + categories to the project and verify by reading back;
  5. send every exclude/extract fixture (infer=True, one user id per fixture), writing the report
     after each send so that even a killed run leaves a trace of what it wrote;
  6. poll (event status first, reads with backoff otherwise), score, --cleanup, final report.
Ctrl-C, SIGTERM and a lost network still write the report and print the cleanup hint.
"""

from __future__ import annotations

import json
import signal
import threading
import time
from dataclasses import dataclass, field

from gate.engine.compiler import compile_revision
from gate.language.errors import GateError
from gate.evaluation.fixtures import load_fixtures
from gate.live import plan as planmod
from gate.live import report as rep
from gate.live.apply import apply_revision
from gate.live.cleanup import cleanup_run, hint
from gate.live.poll import Aborted, Poller
from gate.live.preflight import run_preflight
from gate.live.scoring import annotate_leaks, evaluate_check, score_rows
from gate.language.loader import load_revision
from gate.platform.contract import Scope
from gate.platform.secret import key_from_env, safe_url

EXIT_OK, EXIT_FAIL, EXIT_USAGE, EXIT_INTERRUPTED = 0, 1, 2, 130
DEFAULT_REPORT = "last_report.json"


@dataclass
class RunContext:
    rev: object
    rules_path: str
    fixture_paths: list
    level: str | None
    run_id: str
    base_url: str
    project_id: str
    org_id: str
    api_key_env: str
    timeout: float
    min_settle: float
    report_path: str
    report_mode: str
    started_at: str = field(default_factory=rep.now_iso)
    started_mono: float = field(default_factory=time.monotonic)
    key_org: str | None = None
    key_project: str | None = None
    apply: dict | None = None
    events_supported: bool | None = None
    interrupted: bool = False
    interrupt_reason: str | None = None
    cleanup: dict = field(default_factory=lambda: {"requested": False})
    client_stats: dict = field(default_factory=dict)
    sends: list = field(default_factory=list)

    @property
    def app_id(self) -> str:
        return planmod.app_id_for(self.run_id)

    @property
    def user_prefix(self) -> str:
        return planmod.user_prefix_for(self.run_id)


def build_report(ctx: RunContext, *, final: bool) -> dict:
    rev = ctx.rev
    rows = annotate_leaks([s.row for s in ctx.sends], getattr(rev, "noise_markers", ()))
    for s, r in zip(ctx.sends, rows):
        s.row["leaks"] = r["leaks"]
    scores = score_rows(rows, tuple(getattr(rev, "categories", {}) or ()))
    apply_ok = None if ctx.apply is None else ctx.apply.get("ok")
    check = evaluate_check(scores, dict(getattr(rev, "thresholds", {}) or {}), interrupted=ctx.interrupted,
                           interrupt_reason=ctx.interrupt_reason, apply_ok=apply_ok)
    if not final and not ctx.interrupted:
        check = {"passed": False, "failures": ["run still in progress"], "floors": check["floors"]}
    messages = {s.fixture_id: {"messages": s.messages, "metadata": s.metadata} for s in ctx.sends}
    return {
        "kind": "live",
        "policy": getattr(rev, "policy", None),
        "revision": getattr(rev, "revision", None),
        "rules": ctx.rules_path,
        "fixtures": list(ctx.fixture_paths or []),
        "level": ctx.level,
        "run_id": ctx.run_id,
        "app_id": ctx.app_id,
        "user_id_prefix": ctx.user_prefix,
        "base_url": safe_url(ctx.base_url),
        "written_to": {"org_id": ctx.org_id, "project_id": ctx.project_id},
        "key_resolves_to": {"org_id": ctx.key_org, "project_id": ctx.key_project},
        "api_key_env": ctx.api_key_env,
        "apply": ctx.apply,
        "settings": {"timeout": ctx.timeout, "min_settle": ctx.min_settle, "report_mode": ctx.report_mode},
        "event_status": {True: "reported", False: "not reported (polled reads)", None: "unknown"}[ctx.events_supported],
        "scores": scores,
        "rows": rep.shape_rows(rows, ctx.report_mode, messages),
        "noise_markers": [{"id": m.id, "pattern": m.pattern} for m in getattr(rev, "noise_markers", ())],
        "thresholds": dict(getattr(rev, "thresholds", {}) or {}),
        "check": check,
        "complete": final,
        "interrupted": ctx.interrupted,
        "interrupt_reason": ctx.interrupt_reason,
        "cleanup": ctx.cleanup,
        "cleanup_hint": hint(ctx.app_id, ctx.user_prefix, ctx.project_id, ctx.org_id,
                             sum(1 for s in ctx.sends if s.row["status"] != "not_sent")),
        "client_stats": ctx.client_stats,
        "started_at": ctx.started_at,
        "elapsed_s": round(time.monotonic() - ctx.started_mono, 3),
        "generated_at": rep.now_iso(),
    }


def _usage(echo, message: str) -> int:
    echo(f"usage error: {message}")
    return EXIT_USAGE


def run_live(rules_path, fixture_paths, *, level=None, project_id=None, org_id=None,
             base_url="https://api.mem0.ai", api_key_env="MEM0_API_KEY", run_id=None, timeout=360.0,
             min_settle=60.0, cleanup=False, preflight_only=False, allow_default_project=False,
             report_path=None, report_mode="compact", check=False, echo=print,
             retry_backoff: float = 0.5, request_timeout: float = 30.0, environ=None) -> int:
    """The live mode of `gate eval`. Returns the process exit code; raises nothing for bad input."""
    if not project_id or not org_id:
        missing = " and ".join(n for n, v in (("--project-id", project_id), ("--org-id", org_id)) if not v)
        verb = "are" if " and " in missing else "is"
        return _usage(echo, f"{missing} {verb} required for --live, with no default: a live run writes real "
                            "memories, so it must be pointed at a scratch project explicitly (v1's benchmark "
                            "data landed in production because a harness defaulted to the key's project). "
                            "Nothing was sent.")
    if not rules_path:
        return _usage(echo, "no rules file: pass --rules (nothing was sent)")
    if report_mode not in ("compact", "full"):
        return _usage(echo, "--report-mode must be compact or full")
    if timeout <= 0 or min_settle < 0:
        return _usage(echo, "--timeout must be > 0 and --min-settle >= 0")
    if run_id is None:
        run_id = planmod.new_run_id()
    elif planmod.check_run_id(run_id):
        return _usage(echo, f"--run-id {run_id!r}: {planmod.check_run_id(run_id)}")
    key = key_from_env(api_key_env, environ)
    if key is None:
        echo(f"key ({api_key_env}): absent")
        return _usage(echo, f"set {api_key_env} to an API key of org {org_id}. Nothing was sent.")

    try:
        rev = load_revision(rules_path)
        fixtures = load_fixtures(list(fixture_paths))
        classifier = compile_revision(rev)
    except GateError as e:
        echo(str(e))
        return EXIT_USAGE
    return run_loaded(rev, fixtures, classifier, key, rules_path=rules_path, fixture_paths=fixture_paths,
                      level=level, project_id=project_id, org_id=org_id, base_url=base_url,
                      api_key_env=api_key_env, run_id=run_id, timeout=timeout, min_settle=min_settle,
                      cleanup=cleanup, preflight_only=preflight_only,
                      allow_default_project=allow_default_project, report_path=report_path,
                      report_mode=report_mode, check=check, echo=echo, retry_backoff=retry_backoff,
                      request_timeout=request_timeout)


class _Terminated(KeyboardInterrupt):
    pass


def _interrupt_reason(e: BaseException) -> str:
    return str(e) if isinstance(e, _Terminated) else "interrupted by user (Ctrl-C)"


def _on_sigterm(signum, frame):
    raise _Terminated("terminated (SIGTERM)")


def run_loaded(rev, fixtures, classifier, key, *, rules_path, fixture_paths, level, project_id, org_id,
               base_url, api_key_env, run_id, timeout, min_settle, cleanup, preflight_only,
               allow_default_project, report_path, report_mode, check, echo, retry_backoff=0.5,
               request_timeout=30.0) -> int:
    """The live run on already-loaded inputs (a Revision, Fixtures and a Classifier)."""
    from gate.platform.client import PlatformClient  # httpx: only when a run really starts

    def say(line: str) -> None:  # every line we print passes through the key scrubber
        echo(key.redact(str(line)))

    ctx = RunContext(rev=rev, rules_path=str(rules_path), fixture_paths=[str(p) for p in fixture_paths or []],
                     level=level, run_id=run_id, base_url=base_url, project_id=project_id, org_id=org_id,
                     api_key_env=api_key_env, timeout=float(timeout), min_settle=float(min_settle),
                     report_path=report_path or DEFAULT_REPORT, report_mode=report_mode)
    client = PlatformClient(base_url, key, scope=Scope.of(project_id, org_id), timeout=request_timeout,
                            backoff=retry_backoff)
    try:
        pre = run_preflight(client, api_key_env=api_key_env, project_id=project_id, org_id=org_id,
                            allow_default_project=allow_default_project)
        for line in pre.lines:
            say(line)
        ctx.key_org, ctx.key_project = pre.key_org, pre.key_project
        if not pre.ok:
            return pre.exit_code
        ctx.sends = planmod.plan_sends(fixtures, classifier, run_id=run_id, policy=rev.policy, level=level)
        if preflight_only:
            say(f"preflight ok: a run would send {len(ctx.sends)} windows under app id {ctx.app_id} "
                f"(user ids {ctx.user_prefix}<fixture id>). Nothing was written.")
            return EXIT_OK
        return _run(ctx, client, key, say, cleanup=cleanup, check=check)
    finally:
        client.close()


def _run(ctx, client, key, say, *, cleanup, check) -> int:
    def flush(final: bool = False) -> dict:
        ctx.client_stats = dict(client.stats)
        report = build_report(ctx, final=final)
        text = key.scrub(json.dumps(report, default=str))
        rep.write_report(ctx.report_path, json.loads(text))
        return report

    old_handler = None
    if threading.current_thread() is threading.main_thread():
        old_handler = signal.signal(signal.SIGTERM, _on_sigterm)
    poller = None
    try:
        try:
            say(f"run {ctx.run_id}: policy {ctx.rev.policy}; app id {ctx.app_id}; "
                f"user ids {ctx.user_prefix}<fixture id>; report {ctx.report_path}")
            applied = apply_revision(client, ctx.rev, ctx.org_id, ctx.project_id)
            ctx.apply = applied.as_dict()
            for line in applied.lines:
                say(f"apply: {line}")
            if not applied.ok:
                say(f"apply failed: {applied.error}; nothing was sent")
                flush(final=True)
                return EXIT_FAIL
            _send_all(ctx, client, say, flush)
            poller = Poller(client, ctx.sends, ctx.app_id, timeout=ctx.timeout, min_settle=ctx.min_settle,
                            echo=say, on_change=flush)
            poller.run()
            ctx.events_supported = poller.events_supported
            poller.refresh_stored()
        except Aborted as e:
            ctx.interrupted, ctx.interrupt_reason = True, e.reason
        except KeyboardInterrupt as e:
            ctx.interrupted = True
            ctx.interrupt_reason = _interrupt_reason(e)
        if poller is not None:
            ctx.events_supported = poller.events_supported
        if ctx.interrupted:
            say(f"run interrupted: {ctx.interrupt_reason}")
            if cleanup:
                ctx.cleanup = {"requested": True, "performed": False,
                               "reason": "run interrupted before cleanup; clean up by hand (see cleanup_hint)"}
        elif cleanup:
            try:
                ctx.cleanup = cleanup_run(client, ctx.sends, ctx.app_id, verify_for=min(30.0, ctx.timeout),
                                          echo=say)
            except KeyboardInterrupt as e:
                ctx.interrupted = True
                ctx.interrupt_reason = _interrupt_reason(e) + " during cleanup"
                ctx.cleanup = {"requested": True, "performed": False, "verified": False,
                               "reason": "interrupted during cleanup; some memories may remain"}
        report = flush(final=not ctx.interrupted)
    finally:
        if old_handler is not None:
            signal.signal(signal.SIGTERM, old_handler)
    for line in rep.summary_lines(report):
        say(line)
    stats = ctx.client_stats
    say(f"client: {stats.get('requests', 0)} requests, {stats.get('retries', 0)} retries "
        f"({stats.get('rate_limited', 0)} rate limited, {stats.get('server_errors', 0)} server errors)")
    if not (ctx.cleanup.get("performed") and ctx.cleanup.get("verified")):
        say(report["cleanup_hint"])
    say(f"report: {ctx.report_path}")
    if ctx.interrupted:
        reason = ctx.interrupt_reason or ""
        if "SIGTERM" in reason:
            return 128 + signal.SIGTERM
        return EXIT_INTERRUPTED if "Ctrl-C" in reason else EXIT_FAIL
    if ctx.cleanup.get("requested") and not ctx.cleanup.get("verified"):
        return EXIT_FAIL
    if check and not report["check"]["passed"]:
        return EXIT_FAIL
    return EXIT_OK


def _send_all(ctx, client, say, flush) -> None:
    total = len(ctx.sends)
    say(f"sending {total} windows (infer=True) to org {ctx.org_id} / project {ctx.project_id}")
    transient_in_a_row = 0
    last_note = time.monotonic()
    for i, s in enumerate(ctx.sends, 1):
        if not s.messages:
            s.row.update(status="failed", detail="nothing sendable in the window")
            continue
        res = client.add(s.messages, user_id=s.user_id, app_id=ctx.app_id, metadata=s.metadata, infer=True,
                         allow_untyped=True)
        s.row["sent_at"] = rep.now_iso()
        s.sent_mono = time.monotonic()
        if res.ok:
            data = res.data if isinstance(res.data, dict) else {}
            s.row.update(status="in_flight", event_id=data.get("event_id"), event_status=data.get("status"))
            transient_in_a_row = 0
        else:
            # recorded with its user id: a send that timed out may still have landed
            s.row.update(status="failed", detail=f"send failed: {res.error}")
            if res.status in (401, 403):
                flush()
                raise Aborted(f"the platform refused the key or the override: {res.error}")
            if res.error is not None and res.error.transient:
                transient_in_a_row += 1
                if transient_in_a_row >= 3:
                    flush()
                    raise Aborted(f"platform unreachable while sending: {res.error}")
        flush()
        if time.monotonic() - last_note >= 5 or i == total:
            say(f"sent {i}/{total}")
            last_note = time.monotonic()

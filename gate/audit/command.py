"""`gate audit`'s body: resolve the rules and the source, run the audit, write the report, check it.

Exit codes: 0 the audit ran (and, with --check, the store is within its ceilings); 1 --check
found a share above its ceiling; 2 bad input, a source that cannot be read, or a --check that
cannot run because the revision sets no ceiling.
"""

from __future__ import annotations

import json
import os
import sys
import time
from dataclasses import dataclass

EXIT_OK, EXIT_CHECK_FAILED, EXIT_BAD_INPUT = 0, 1, 2


@dataclass
class LiveScope:
    user_id: str
    app_id: str | None
    project_id: str | None
    org_id: str | None
    base_url: str
    api_key_env: str
    page_size: int = 100
    timeout: float = 30.0


def run_audit(export: str | None, live: LiveScope | None, *, rules_path: str, level: str | None, role: str,
              drop_rules: bool,
              fmt: str, out_path: str | None, check: bool, similarity: float, top: int, jobs: int | None,
              echo, echo_err, environ=None) -> int:
    from gate.audit.check import check as check_ceilings
    from gate.audit.judge import Judge
    from gate.audit.run import AuditError, audit
    from gate.audit.sources import SourceError, read_export
    from gate.engine.cache import load_compiled_revision
    from gate.language.errors import GateError

    try:
        revision, _ = load_compiled_revision(rules_path)
    except GateError as error:
        for problem in error.problems:
            echo_err(str(problem))
        return EXIT_BAD_INPUT
    if level is not None and level not in revision.levels:
        echo_err(f"usage error: --level {level!r} is not a level of {rules_path} ({', '.join(revision.levels)})")
        return EXIT_BAD_INPUT
    judge = Judge(revision, level=level, role=role, drop_rules=drop_rules)
    rules = {"path": rules_path, "revision": revision.revision, "policy": revision.policy, "level": judge.level,
             "role": role, "drop_rules_judged": drop_rules, "marker_ids": judge.marker_ids}

    client = None
    try:
        if live is not None:
            client, parts, source = _live_source(live, environ)
        else:
            parts, source = read_export(export), export
        report = audit(parts, judge, source=source, rules=rules, jobs=jobs, similarity=similarity, top=top,
                       progress=_progress_line() if sys.stderr.isatty() else None)
        if sys.stderr.isatty():
            sys.stderr.write("\r\033[K")
    except (AuditError, SourceError) as exc:
        echo_err(f"error: {exc}")
        return EXIT_BAD_INPUT
    except _Usage as exc:
        echo_err(f"usage error: {exc}")
        return EXIT_BAD_INPUT
    finally:
        if client is not None:
            client.close()

    files = rules_files_of(rules_path, [p["policy"] for p in report["policies"]])
    for row in report["policies"]:
        row["revision"] = files.get(row["policy"])
    verdict = check_ceilings(report, revision.thresholds, rules_path)
    report["check"] = verdict
    try:
        _write(report, verdict if check else None, fmt, out_path, echo)
    except OSError as exc:
        echo_err(f"error: cannot write {out_path}: {exc.strerror or exc}")
        return EXIT_BAD_INPUT
    if check:
        if verdict["missing"]:
            for line in verdict["missing"]:
                echo_err(line)
            return EXIT_BAD_INPUT
        if not verdict["passed"]:
            return EXIT_CHECK_FAILED
    return EXIT_OK


class _Usage(Exception):
    pass


def _progress_line():
    """A progress line on a terminal's stderr, at most every half second."""
    last = [0.0]

    def show(memories: int) -> None:
        now = time.monotonic()
        if now - last[0] >= 0.5:
            last[0] = now
            sys.stderr.write(f"\r\033[Kread and judged {memories:,} memories")
            sys.stderr.flush()

    return show


def _live_source(live: LiveScope, environ):
    from gate.audit.sources import read_live
    from gate.platform.client import PlatformClient
    from gate.platform.contract import Scope, project_scope
    from gate.platform.errors import ContractViolation
    from gate.platform.secret import key_from_env, safe_url

    key = key_from_env(live.api_key_env, environ)
    if key is None:
        raise _Usage(f"set {live.api_key_env} to an API key to read a live scope (or pass an export file)")
    try:
        scope = Scope.of(live.project_id, live.org_id)
    except ContractViolation as exc:
        raise _Usage(str(exc)) from None
    # with an app id, the project scope; without, every memory of the user (user and project scoped)
    filters = project_scope(live.user_id, live.app_id) if live.app_id else {"user_id": live.user_id}
    client = PlatformClient(live.base_url, key, scope=scope, timeout=live.timeout)
    where = f"user {live.user_id}" + (f", app {live.app_id}" if live.app_id else "")
    if scope:
        where += f", project {scope.project_id}"
    return client, read_live(client, filters, page_size=live.page_size), f"live {safe_url(live.base_url)} ({where})"


def rules_files_of(rules_path: str, policies: list) -> dict:
    """policy id -> the rules file beside `rules_path` whose content has that id.

    A policy id starts with its revision's name (`v2.3+4b32449fe8f7`), so only the file of that
    name is loaded; a file that does not load, or whose content changed since, names nothing."""
    from gate.engine.cache import load_revision_cached
    from gate.language.errors import GateError

    folder = os.path.dirname(rules_path) or "."
    out = {}
    for policy in policies:
        name = policy.split("+", 1)[0]
        for suffix in (".yaml", ".yml"):
            path = os.path.join(folder, name + suffix)
            if not name or not os.path.isfile(path):
                continue
            try:
                if load_revision_cached(path).policy == policy:
                    out[policy] = path
            except (GateError, OSError, ValueError):
                pass
    return out


def _write(report: dict, check: dict | None, fmt: str, out_path: str | None, echo) -> None:
    if fmt == "json":
        text = json.dumps(report, indent=2, ensure_ascii=False)
    elif fmt == "html":
        from gate.audit.page import render as render_page

        text = render_page(report, check)
    else:
        from gate.audit.text import render as render_text

        text = render_text(report, check)
    if out_path:
        tmp = out_path + ".tmp"
        with open(tmp, "w", encoding="utf-8") as handle:
            handle.write(text if text.endswith("\n") else text + "\n")
        os.replace(tmp, out_path)
        echo(f"wrote {out_path}")
        if fmt != "text":
            from gate.audit.text import render as render_text

            echo(render_text(report, check))
    else:
        echo(text)

"""`gate hook claude-code`: after each reply, classify the session's new exchanges and spool
what the gate flags.

The editor waits for a hook, shows what it prints, and may inject it, so this never raises,
prints nothing, and stops classifying after BUDGET_S (saving where it got to; the next event
continues from there). Problems go to the capture log. Only flagged windows are written:
dropped and skipped ones leave nothing on disk but their shape id in the session's recent
shapes (a hash, so the next frame of the same progress output is recognised).
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import time
from collections import deque
from dataclasses import dataclass, field

from gate.capture.log import log_line
from gate.capture.spool import NewItem

BUDGET_S = 2.5  # of classification per event; the installed hook's timeout is 5 s
# Only at the end does the trailing exchange stop growing. A compaction can come in the middle
# of a reply, and the file keeps every line across it, so PreCompact waits like Stop does.
FINAL_EVENTS = frozenset({"SessionEnd"})
SENT_ROLES = ("user", "assistant")  # tool output is evidence for the rules, never a memory


@dataclass
class HookReport:
    event: str = ""
    exchanges: int = 0
    flagged: int = 0
    spooled: int = 0  # new in the spool (a flagged window already there is not added twice)
    dropped: int = 0
    skipped: int = 0
    unfinished: bool = False  # the time budget ran out; the rest waits for the next event
    offset: int = 0
    flush_started: bool = False
    continued: bool = False  # at SessionEnd, over budget: a background hook classifies the rest
    error: str | None = None
    skipped_lines: dict = field(default_factory=dict)

    def summary(self) -> str:
        text = (f"{self.event or 'event'}: {self.exchanges} exchange(s), {self.flagged} flagged "
                f"({self.spooled} new), {self.dropped} dropped, {self.skipped} skipped; offset {self.offset}")
        if self.unfinished and not self.continued:
            text += "; time budget reached, the rest waits for the next event"
        if self.continued:
            text += "; the rest continues in the background"
        elif self.flush_started:
            text += "; flush started"
        return text


def run_hook(stdin_text: str, *, environ=None, budget_s: float | None = BUDGET_S,
             start_flush: bool = True) -> HookReport:
    """Everything the hook does; never raises (a failure is logged and reported).
    `budget_s=None`: no time limit (the background continuation of a long SessionEnd)."""
    from gate.capture.paths import config_path, state_dir

    env = os.environ if environ is None else environ
    report = HookReport()
    state = state_dir(env)
    try:
        _run(stdin_text, env, state, config_path(env), report, budget_s, start_flush)
    except Exception as exc:  # a hook must never break the session
        report.error = f"{type(exc).__name__}: {exc}"
    if report.error:
        log_line(state, f"hook {report.event or '?'}: {report.error}")
    return report


def _run(stdin_text, env, state, config_file, report: HookReport, budget_s: float | None,
         start_flush: bool) -> None:
    from gate.capture.config import load_config
    from gate.capture.repository import repository_id
    from gate.capture.spool import Spool, SpoolError
    from gate.engine.cache import load_classifier
    from gate.language.errors import GateError
    from gate.transcripts import follow

    started = time.monotonic()
    event = _event(stdin_text)
    if event is None:
        report.error = "the hook input is not a JSON object with transcript_path; nothing read"
        return
    report.event = event["hook_event_name"]
    try:
        config = load_config(config_file)
    except GateError as exc:
        report.error = "; ".join(str(p) for p in exc.problems)
        return
    transcript = os.path.abspath(os.path.expanduser(event["transcript_path"]))
    session = _utf8(event["session_id"])
    key = _utf8(transcript)  # the spool's name for it: a path that is not UTF-8 cannot fail a write
    repository = repository_id(event["cwd"] or os.path.dirname(transcript))
    # the editor waits for a budgeted hook, so it waits a second at most for a flush or another
    # hook holding the spool; a background hook (no budget) waits as long as a flush does
    with Spool(state, busy_timeout=1.0 if budget_s is not None else 10.0) as spool:
        offset, shapes = spool.resume_point(key, session)
        try:
            followed = follow(transcript, offset, final=report.event in FINAL_EVENTS)
        except OSError as exc:
            report.error = f"cannot read {transcript}: {exc.strerror or exc}"
            return
        report.skipped_lines = dict(followed.reading.skipped)
        if followed.exchanges:  # nothing new finished: no need to load the rules
            try:
                classifier = load_classifier(config.rules)
            except GateError as exc:
                report.error = "; ".join(str(p) for p in exc.problems)
                return
            if config.level is not None and config.level not in classifier.levels:
                report.error = f"{config.path}: level: must be one of {', '.join(classifier.levels)}"
                return
        level = config.level
        recent = deque(shapes, maxlen=max(config.recent_shapes, 1))
        items: list[NewItem] = []
        resume = followed.offset
        for exchange in followed.exchanges:
            if budget_s is not None and report.exchanges and time.monotonic() - started > budget_s:
                resume = exchange.start  # classified up to here; the next event goes on
                report.unfinished = True
                break
            decision = classifier.classify(exchange.window, level=level,
                                           recent_shapes=tuple(recent) if config.recent_shapes else ())
            recent.append(decision.shape)
            report.exchanges += 1
            if decision.action == "flag":
                report.flagged += 1
                item = spool_item(decision, session_id=_utf8(exchange.session_id or session),
                                  repository=repository)
                if item is not None:
                    items.append(item)
            elif decision.action == "drop":
                report.dropped += 1
            else:
                report.skipped += 1
        report.offset = resume
        try:
            report.spooled = spool.record(transcript=key, offset=resume, read_from=offset, session_id=session,
                                          shapes=list(recent), items=items)
        except SpoolError as exc:
            if report.event != "SessionEnd" or budget_s is None or not start_flush:
                raise  # the offset stayed put: the next event reads these windows again
            # no event follows a session's end: a background hook with no budget reads them again
            report.offset = offset
            report.continued = start_detached(state, env, ["hook", "claude-code", "--no-budget"], stdin_text)
            report.error = (f"{exc}; nothing recorded, "
                            + ("a background hook reads these windows again" if report.continued
                               else "and no background hook could start"))
            return
    if report.event == "SessionEnd" and start_flush:
        if report.unfinished:  # no event will follow: the rest is classified in the background, then flushed
            report.continued = start_detached(state, env, ["hook", "claude-code", "--no-budget"], stdin_text)
        else:
            report.flush_started = start_detached(state, env, ["flush", "--quiet"])


def spool_item(decision, *, session_id: str, repository: str) -> NewItem | None:
    """The spool's item for a flagged decision: the kept turns a person or the assistant wrote."""
    messages = tuple({"role": m["role"], "content": _utf8(m["content"])} for m in decision.payload
                     if m.get("role") in SENT_ROLES and isinstance(m.get("content"), str) and m["content"].strip())
    if not messages or not decision.type:
        return None
    scope = "user" if decision.type == "preference" else f"app:{repository}"
    return NewItem(content_key=content_key(scope, messages), type=decision.type, policy=decision.policy,
                   level=decision.level, rule=decision.rule, shape=decision.shape, session_id=session_id,
                   repository=repository, messages=messages)


def content_key(scope: str, messages) -> str:
    """What makes two sends the same memory write: the same turns to the same place."""
    canonical = json.dumps([scope, [[m["role"], m["content"]] for m in messages]], ensure_ascii=False,
                           separators=(",", ":"))
    return hashlib.sha256(canonical.encode("utf-8", "surrogatepass")).hexdigest()[:32]


def _utf8(text: str) -> str:
    """Text that SQLite and JSON can carry (a lone surrogate would fail every later write)."""
    return text.encode("utf-8", "replace").decode("utf-8")


def start_detached(state: str, env, args: list, stdin_text: str | None = None) -> bool:
    """`gate ARGS` in its own session, so the editor neither waits for it nor stops it."""
    from gate.capture.log import LOG_FILE

    try:
        log = os.open(os.path.join(state, LOG_FILE), os.O_CREAT | os.O_APPEND | os.O_WRONLY, 0o600)
    except OSError:
        log = subprocess.DEVNULL
    try:
        child = subprocess.Popen([sys.executable, "-c", "from gate.cli import main; main()", *args],
                                 stdin=subprocess.DEVNULL if stdin_text is None else subprocess.PIPE,
                                 stdout=log, stderr=log, start_new_session=True, close_fds=True, env=dict(env))
        if stdin_text is not None:  # the pipe holds it after we are gone
            child.stdin.write(stdin_text.encode("utf-8", "surrogateescape"))
            child.stdin.close()
        return True
    except OSError:
        return False
    finally:
        if isinstance(log, int) and log >= 0:
            os.close(log)


def _event(text: str) -> dict | None:
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):
        return None
    if not isinstance(data, dict) or not isinstance(data.get("transcript_path"), str) or not data["transcript_path"]:
        return None
    name = data.get("hook_event_name")
    return {"transcript_path": data["transcript_path"],
            "session_id": data["session_id"] if isinstance(data.get("session_id"), str) else "",
            "hook_event_name": name if isinstance(name, str) else "",
            "cwd": data["cwd"] if isinstance(data.get("cwd"), str) else ""}

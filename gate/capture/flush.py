"""`gate flush`: send the spool's pending items to the platform, each marked sent only after
the platform accepted it.

One item at a time: claim it (atomically, so two flushes never send the same item), send it
with the contract-enforcing client (infer=True, metadata.type and metadata.policy, user scope
for preferences and the repository's app id for the rest), then record the event id. What a
failure does depends on whose fault it is:
- the platform answered 429/5xx (after the client's own retries) or did not answer in time:
  the item waits, doubling its wait, and is parked after `max_attempts` such failures;
- the platform refused the item itself (another 4xx) or the contract forbids it: parked now;
- the platform is unreachable, or refused the key (401/403): nothing is the item's fault, it
  stays pending as it was and the flush stops; so does it after any failure, rather than
  hammering a platform that is struggling.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from gate.capture.claims import ClaimLock, claimer_alive, forget
from gate.capture.config import CaptureConfig
from gate.capture.spool import Item, Spool, SpoolError

EDITOR = "claude-code"
_RECORD_TRIES = 3  # a commit that fails after the platform said yes is retried before giving up


@dataclass
class FlushReport:
    sent: int = 0
    deferred: int = 0  # failed this time, will be retried
    parked: int = 0
    reclaimed: int = 0  # orphans of a dead flush put back in the queue
    stopped: str | None = None  # why the flush stopped before the queue was empty
    events: list = field(default_factory=list)  # (item id, event id)

    @property
    def ok(self) -> bool:
        return self.stopped is None


def make_client(config: CaptureConfig, environ=None):
    """The platform client for `config`, or (None, why) when the key is not in the environment."""
    from gate.platform.client import PlatformClient
    from gate.platform.contract import Scope
    from gate.platform.secret import key_from_env

    key = key_from_env(config.platform.api_key_env, environ)
    if key is None:
        return None, f"{config.platform.api_key_env} is not set; the API key is read only from the environment"
    scope = Scope.of(config.platform.project_id or None, config.platform.org_id or None)
    client = PlatformClient(config.platform.base_url, key, scope=scope, timeout=config.platform.timeout,
                            max_retries=config.platform.retries, backoff=config.platform.retry_backoff)
    return client, None


def flush(spool: Spool, client, config: CaptureConfig, *, limit: int | None = None,
          echo=lambda line: None, clock=time.time) -> FlushReport:
    """Send due pending items until the queue is empty, `limit` items were handled, or the
    platform gives trouble. Raises nothing for platform trouble; SpoolError if the spool
    cannot be read or written before anything is sent."""
    report = FlushReport()
    if not config.user_id:
        report.stopped = f"{config.path or 'the configuration'}: user_id is not set; nothing was sent"
        return report
    report.reclaimed = reclaim_orphans(spool)
    with ClaimLock(spool.directory) as me:
        handled = 0
        while limit is None or handled < limit:
            try:
                item = spool.claim(me.name, clock())
            except SpoolError as exc:
                report.stopped = f"cannot claim an item from the spool: {exc}"
                break
            if item is None:
                break
            handled += 1
            try:
                outcome = _send(client, item, config)
            except Exception as exc:  # a bug of ours must not leave the item claimed for good
                outcome = _Outcome(False, error=f"internal error: {type(exc).__name__}: {exc}"[:300],
                                   counted=True, stop=True, in_doubt=True)
            if outcome.sent:
                if _record_sent(spool, item, me.name, outcome.event_id, clock, report, echo):
                    report.sent += 1
                    report.events.append((item.id, outcome.event_id))
                    continue
                break  # report.stopped says why
            report.stopped = _give_back(spool, item, me.name, outcome, config, report, clock)
            echo(f"item {item.id}: {outcome.error}")
            if report.stopped:
                break
    return report


def reclaim_orphans(spool: Spool) -> int:
    """Put back the items of flushes that died mid-send; each counts as a possible duplicate."""
    n = 0
    for name in spool.claimers():
        if not claimer_alive(spool.directory, name):
            n += spool.reclaim(name)
            forget(spool.directory, name)
    return n


@dataclass(frozen=True)
class _Outcome:
    sent: bool
    event_id: str | None = None
    error: str = ""
    counted: bool = False  # counts toward parking
    park: bool = False  # no point trying again
    in_doubt: bool = False  # the platform may have taken it without our knowing
    stop: bool = False  # the rest of the queue waits


def _send(client, item: Item, config: CaptureConfig) -> _Outcome:
    from gate.platform.errors import CONTRACT, DECODE, HTTP, TIMEOUT

    metadata = {"type": item.type, "policy": item.policy, "session_id": item.session_id,
                "editor": EDITOR, "content_key": item.content_key}
    app_id = None if item.type == "preference" else item.repository  # preferences follow the person
    try:
        messages = item.messages
    except ValueError:
        return _Outcome(False, error="the spooled payload is not JSON", park=True)
    result = client.add(messages, user_id=config.user_id, app_id=app_id, metadata=metadata, infer=True)
    if result.ok:
        data = result.data if isinstance(result.data, dict) else {}
        event = data.get("event_id")
        return _Outcome(True, event_id=str(event) if event else None)
    err = result.error
    text = str(err)
    if err.kind == DECODE:  # a 2xx whose body we cannot read: the platform took it
        return _Outcome(True, error=text)
    if err.kind == CONTRACT:
        return _Outcome(False, error=text, park=True)
    if err.kind == HTTP and err.status in (401, 403):
        return _Outcome(False, error=f"the platform refused the key ({err.status}); fix the key and flush again",
                        stop=True)
    if err.kind == HTTP and (err.status == 429 or err.status >= 500):
        return _Outcome(False, error=text, counted=True, stop=True, in_doubt=err.status >= 500)
    if err.kind == HTTP:
        return _Outcome(False, error=text, park=True)
    if err.kind == TIMEOUT:  # the request went out; the platform may have taken it
        return _Outcome(False, error=text, counted=True, stop=True, in_doubt=True)
    # network: refused connections never reached the platform; a dropped one may have
    return _Outcome(False, error=text, stop=True, in_doubt="ConnectError" not in text)


def _give_back(spool: Spool, item: Item, me: str, outcome: _Outcome, config: CaptureConfig,
               report: FlushReport, clock) -> str | None:
    attempts = item.attempts + int(outcome.counted)
    park = outcome.park or (outcome.counted and attempts >= config.flush.max_attempts)
    wait = 0.0
    if outcome.counted and not park:
        wait = min(config.flush.max_backoff_seconds, config.flush.backoff_seconds * 2 ** (attempts - 1))
    error = outcome.error if not park or outcome.park else f"{outcome.error} (failed {attempts} times)"
    try:
        spool.release(item.id, me, error=error, counted=outcome.counted, in_doubt=outcome.in_doubt,
                      retry_in=wait, park=park, now=clock())
    except SpoolError as exc:  # still claimed by us: the next flush takes it back when we are gone
        return f"cannot record a failed send in the spool: {exc}"
    if park:
        report.parked += 1
    else:
        report.deferred += 1
    return outcome.error if outcome.stop else None


def _record_sent(spool: Spool, item: Item, me: str, event_id, clock, report: FlushReport, echo) -> bool:
    for attempt in range(_RECORD_TRIES):
        try:
            spool.mark_sent(item.id, me, event_id, clock())
            return True
        except SpoolError as exc:
            last = exc
            time.sleep(0.2 * (attempt + 1))
    # The platform has it and the spool does not know: the next flush will send it once more.
    report.stopped = (f"item {item.id} was accepted by the platform (event {event_id}) but the spool could "
                      f"not record it ({last}); the next flush sends it again")
    echo(report.stopped)
    return False

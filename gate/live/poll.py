"""Waiting for extraction: poll, never sleep a fixed time.

The event status comes first where the platform reports it: a SUCCEEDED event with nothing
stored is a real suppression and needs no settle wait. Without event status, reads are
repeated with backoff until --timeout, and a zero read counts as suppression only once
--min-settle has passed since the send ("nothing stored" and "not stored yet" look the same).
"""

from __future__ import annotations

import time

from gate.platform.contract import project_scope

FINAL_EVENT = ("SUCCEEDED", "FAILED")
ABORT_AFTER_BAD_ROUNDS = 3  # consecutive rounds in which every call failed transiently


class Aborted(Exception):
    """The run cannot go on (network lost, key rejected); what was sent is still reported."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


def memory_view(m: dict) -> dict:
    meta = m.get("metadata") if isinstance(m.get("metadata"), dict) else {}
    return {"id": m.get("id"), "text": m.get("memory") or m.get("text") or "", "type": meta.get("type"),
            "categories": m.get("categories") or [], "fixture": meta.get("fixture"),
            "policy": meta.get("policy"), "created_at": m.get("created_at")}


def read_memories(client, user_id: str, app_id: str):
    """(memories, error): the fixture's memories through a latest_only read."""
    res = client.get_all(project_scope(user_id, app_id))
    if not res.ok:
        return None, res.error
    return [memory_view(m) for m in res.data if isinstance(m, dict)], None


class Poller:
    def __init__(self, client, sends, app_id: str, *, timeout: float, min_settle: float, echo,
                 on_change=None, clock=time.monotonic, sleep=time.sleep, initial_interval: float = 0.1,
                 max_interval: float = 15.0, progress_every: float | None = None):
        self.client = client
        self.sends = sends
        self.app_id = app_id
        self.timeout = timeout
        self.min_settle = min_settle
        self.echo = echo
        self.on_change = on_change or (lambda: None)
        self.clock = clock
        self.sleep = sleep
        self.interval = initial_interval
        self.max_interval = max_interval
        self.progress_every = progress_every if progress_every is not None else max(1.0, min(15.0, timeout / 24))
        self.events_supported: bool | None = None
        self._calls = 0
        self._errors = 0
        self._last_error = None

    # -- one fixture -------------------------------------------------------------------------

    def _conclude(self, s, status: str, detail: str | None, memories=None) -> None:
        s.row["status"] = status
        s.row["detail"] = detail
        if memories is not None:
            s.row["memories"] = memories
        s.row["concluded_after_s"] = round(self.clock() - s.sent_mono, 3)

    def _read(self, s):
        self._calls += 1
        mems, err = read_memories(self.client, s.user_id, self.app_id)
        if err is not None:
            self._errors += 1
            self._last_error = err
            if err.status == 401:
                raise Aborted(f"key rejected while reading: {err}")
        return mems, err

    def _check(self, s) -> None:
        age = self.clock() - s.sent_mono
        if age >= self.timeout:
            mems, err = self._read(s)
            if mems:
                self._conclude(s, "stored", "landed at the --timeout read", mems)
            elif err is None:
                note = s.row.get("detail") or f"nothing visible within --timeout {self.timeout:g}s"
                self._conclude(s, "timed_out", note, [])
            return
        if s.row.get("event_id") and self.events_supported is not False:
            self._calls += 1
            res = self.client.event(s.row["event_id"])
            if res.ok and isinstance(res.data, dict):
                self.events_supported = True
                status = str(res.data.get("status") or "").upper()
                s.row["event_status"] = status
                if status == "FAILED":
                    self._conclude(s, "failed", "extraction failed (event FAILED)", [])
                    return
                if status != "SUCCEEDED":
                    return
                results = res.data.get("results")
                reported = None if results is None else len(
                    [r for r in results if not isinstance(r, dict) or r.get("event", "ADD") != "NOOP"])
                mems, err = self._read(s)
                if err is not None:
                    return
                if mems:
                    self._conclude(s, "stored", "event SUCCEEDED", mems)
                elif reported == 0:
                    self._conclude(s, "suppressed", "event SUCCEEDED with nothing stored", [])
                elif age >= self.min_settle and reported is None:
                    self._conclude(s, "suppressed", "event SUCCEEDED; nothing visible after --min-settle", [])
                else:
                    s.row["detail"] = f"event SUCCEEDED reporting {reported} memories, none visible yet"
                return
            if res.status == 404 and self.events_supported is not True:
                self.events_supported = False
                self.echo("the platform does not report event status here: polling reads instead "
                          f"(a zero read counts as suppression after --min-settle {self.min_settle:g}s)")
            elif res.error is not None and res.error.transient:
                self._errors += 1
                self._last_error = res.error
                return
            elif res.status == 401:
                raise Aborted(f"key rejected while polling: {res.error}")
        mems, err = self._read(s)
        if err is not None:
            return
        if mems:
            self._conclude(s, "stored", "read", mems)
        elif age >= self.min_settle:
            self._conclude(s, "suppressed", f"nothing stored after --min-settle {self.min_settle:g}s", [])

    # -- the loop ----------------------------------------------------------------------------

    def in_flight(self):
        return [s for s in self.sends if s.row["status"] == "in_flight"]

    def progress_line(self) -> str:
        rows = [s.row for s in self.sends if s.row["status"] != "not_sent"]
        stored = sum(1 for r in rows if r["status"] == "stored")
        suppressed = sum(1 for r in rows if r["status"] == "suppressed")
        flying = [s for s in self.sends if s.row["status"] == "in_flight"]
        other = len(rows) - stored - suppressed - len(flying)
        now = self.clock()
        left = max((s.sent_mono + self.timeout - now for s in flying), default=0.0)
        memories = sum(len(r["memories"]) for r in rows)
        tail = f", {other} other" if other else ""
        return (f"waiting for extraction: {len(rows) - len(flying)}/{len(rows)} concluded "
                f"(stored {stored}, suppressed {suppressed}{tail}; {memories} memories landed), "
                f"{len(flying)} in flight, {max(0.0, left):.0f}s left")

    def run(self) -> None:
        bad_rounds = 0
        last_progress = None
        while True:
            flying = self.in_flight()
            if not flying:
                break
            self._calls = self._errors = 0
            before = [(s.row["status"], len(s.row["memories"])) for s in flying]
            for s in flying:
                self._check(s)
                if self._errors:  # retries are exhausted: the rest of this round would fail the same way
                    break
            if [(s.row["status"], len(s.row["memories"])) for s in flying] != before:
                self.on_change()
            if self._calls and self._errors == self._calls:
                bad_rounds += 1
                if bad_rounds >= ABORT_AFTER_BAD_ROUNDS:
                    raise Aborted(f"platform unreachable: {self._last_error}")
            else:
                bad_rounds = 0
            now = self.clock()
            still = self.in_flight()
            if last_progress is None or now - last_progress >= self.progress_every or not still:
                self.echo(self.progress_line())
                last_progress = now
            if not still:
                break
            # never sleep past the next moment something can conclude
            next_due = min(min(s.sent_mono + self.timeout, s.sent_mono + self.min_settle)
                           if s.sent_mono + self.min_settle > now else s.sent_mono + self.timeout
                           for s in still)
            wait = max(0.01, min(self.interval, next_due - now + 0.01))
            self.sleep(wait)
            self.interval = min(self.max_interval, self.interval * 1.5)

    def refresh_stored(self) -> None:
        """One last read of stored fixtures: more facts from one window may have landed since."""
        for s in self.sends:
            if s.row["status"] == "stored":
                mems, err = read_memories(self.client, s.user_id, self.app_id)
                if err is None and mems:
                    s.row["memories"] = mems

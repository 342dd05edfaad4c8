"""Entries -> exchanges: one exchange is one window for the classifier.

An exchange is the person's turn (or turns: a prompt queued while the agent worked joins the
exchange it arrived in) and everything the assistant did in reply, tool calls and results
included. A new prompt after a reply starts the next exchange; so does context that starts a
new agent turn (a slash command, a background task's notification), whose exchange then has no
person's turn at all. Each thread windows on its own: a session's main line, each subagent
(sidechain) and each earlier session a resumed file carries. Context itself is never a turn.

Turns are `{role, content}` as the classifier and the fixtures schema read them: the person's
words as a string, the assistant's reply as text and tool_use blocks (one turn per reply, its
lines merged by message id), tool results as a user turn of tool_result blocks. Sidechain turns
carry `sidechain: true`, so the rules can tell a subagent's scratch work from the main thread.
"""

from __future__ import annotations

from dataclasses import dataclass

from gate.transcripts.entries import ASSISTANT, CONTEXT, PROMPT, TOOL, TURN_STARTING_CONTEXT


@dataclass(frozen=True, slots=True)
class Exchange:
    window: list  # the turns, as the classifier takes them
    session_id: str
    key: str  # stable id: the uuid of the exchange's first entry
    timestamp: str | None  # of the first entry
    complete: bool  # False: the trailing exchange of a file still being written
    offset: int  # byte offset of the first entry's line: re-read from here to rebuild it whole
    end: int  # byte offset just past the last entry's line
    line: int  # line number of the first entry (0 when unknown)
    sidechain: bool = False
    agent_id: str | None = None
    prompts: int = 0  # how many turns are a person's words

    @property
    def start(self) -> int:
        """The same as `offset`."""
        return self.offset


class _Open:
    """An exchange being assembled."""

    __slots__ = ("first", "last", "turns", "by_message", "replied", "prompts")

    def __init__(self, first) -> None:
        self.first, self.last = first, first
        self.turns: list = []
        self.by_message: dict = {}  # message id -> its turn's block list
        self.replied = False
        self.prompts = 0

    def add(self, entry) -> None:
        self.last = entry
        if entry.kind == PROMPT:
            self.prompts += 1
            self.turns.append(_turn("user", entry.content, entry.sidechain))
            return
        if entry.kind == ASSISTANT:
            self.replied = True
            merged = self.by_message.get(entry.message_id) if entry.message_id else None
            if merged is not None:  # another line of a reply already begun
                merged.extend(entry.content)
                return
            content = list(entry.content)
            if entry.message_id:
                self.by_message[entry.message_id] = content
            self.turns.append(_turn("assistant", content, entry.sidechain))
            return
        if entry.kind == TOOL:
            self.replied = True
            self.turns.append(_turn("user", list(entry.content), entry.sidechain))

    def close(self, complete: bool) -> Exchange | None:
        if not self.turns:
            return None
        first = self.first
        return Exchange(window=self.turns, session_id=first.session_id, key=first.uuid, timestamp=first.timestamp,
                        complete=complete, offset=first.offset, end=self.last.end, line=first.line,
                        sidechain=first.sidechain, agent_id=first.agent_id, prompts=self.prompts)


def _turn(role: str, content, sidechain: bool) -> dict:
    return {"role": role, "content": content, "sidechain": True} if sidechain else {"role": role, "content": content}


def exchanges(entries, *, final: bool = True) -> list[Exchange]:
    """The exchanges of `entries`, in file order.

    With `final=False` the last exchange of each thread may still grow (the next prompt has not
    arrived): it is returned with `complete=False`. A hook keeps the offset of the first
    incomplete exchange and reads from there next time (see `follow`).
    """
    open_by_thread: dict = {}
    done: list = []
    for entry in entries:
        thread = entry.thread
        current = open_by_thread.get(thread)
        if entry.kind == CONTEXT:
            if entry.reason in TURN_STARTING_CONTEXT and (current is None or current.replied):
                if current is not None:
                    _finish(current, done, True)
                open_by_thread[thread] = _Open(entry)
            continue
        if current is None or (entry.kind == PROMPT and current.replied and entry.reason != "queued"):
            if current is not None:
                _finish(current, done, True)
            current = open_by_thread[thread] = _Open(entry)
        current.add(entry)
    for current in open_by_thread.values():
        _finish(current, done, final)
    done.sort(key=lambda e: e.offset)
    return done


def _finish(current: _Open, done: list, complete: bool) -> None:
    exchange = current.close(complete)
    if exchange is not None:
        done.append(exchange)


@dataclass(frozen=True, slots=True)
class Followed:
    exchanges: list  # exchanges completed since the offset, in file order
    offset: int  # where the next read starts: the first unfinished exchange's line, else the end
    reading: object  # the Reading (skipped counts, format, restarted)


def follow(path, offset: int = 0, *, final: bool = False) -> Followed:
    """What a hook calls after each reply: the exchanges completed since `offset`.

    The trailing exchange is held back until the next prompt shows it is over (or `final`,
    at session end), and the returned offset points at its first line, so the next call
    rebuilds it whole. Keys are stable across calls; where threads interleave in one file
    (a subagent's lines inside the main file, in old versions) an exchange can come back
    again, so a consumer keeps keys it has handled.
    """
    from gate.transcripts.reader import read_transcript

    reading = read_transcript(path, offset, final=final)
    found = exchanges(reading.entries, final=final)
    pending = [e.offset for e in found if not e.complete]
    resume = min(pending) if pending else reading.offset
    return Followed([e for e in found if e.complete and e.offset < resume], resume, reading)

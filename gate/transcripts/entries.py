"""What a transcript reading yields: entries (one conversational item each) and the reading's
bookkeeping. Plain frozen data; the readers build it, windowing consumes it."""

from __future__ import annotations

from dataclasses import dataclass, field

# Entry kinds.
PROMPT = "prompt"  # a person's words (in a sidechain: the parent agent's prompt to the subagent)
ASSISTANT = "assistant"  # the assistant's text and tool calls
TOOL = "tool"  # tool results
CONTEXT = "context"  # user-side text no person typed: kept for provenance, never a window turn

# Context that starts a new agent turn (so it ends the exchange before it), unlike a caveat or a
# compaction summary, which arrive in the middle of one.
TURN_STARTING_CONTEXT = frozenset({"command", "task-notification", "bash-notification"})


@dataclass(frozen=True, slots=True)
class Entry:
    kind: str  # prompt | assistant | tool | context
    content: object  # prompt, context: str; assistant, tool: tuple of blocks (dicts)
    session_id: str
    uuid: str  # the line's uuid, or "<session>@<byte offset>" where the format has none
    timestamp: str | None
    offset: int  # byte offset of the line it came from
    line: int  # line number of that line
    end: int  # byte offset just past that line
    sidechain: bool = False
    agent_id: str | None = None
    message_id: str | None = None  # assistant replies spanning several lines share it
    reason: str | None = None  # prompt: typed | queued | command-args; context: what it is

    @property
    def thread(self) -> tuple:
        """Entries of one thread form exchanges together: a session's main line, or one subagent."""
        return (self.session_id, self.sidechain, self.agent_id)


@dataclass(slots=True)
class Reading:
    entries: list
    offset: int  # byte offset just after the last complete line read: where the next read starts
    skipped: dict  # line type (e.g. 'progress', 'system:turn_duration', 'malformed') -> count
    format: str  # 'claude-code' | 'codex' ('claude-code' for a file with no telling line yet)
    lines: int = 0  # lines read
    unknown: dict = field(default_factory=dict)  # the part of `skipped` this reader does not know at all
    restarted: bool = False  # the given offset did not fit the file (shorter, or mid-line): read from 0

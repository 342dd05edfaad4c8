"""Builders for transcript lines in the shapes Claude Code and Codex write (our own wording).

A `ClaudeSession` or `CodexSession` collects lines as a real session file holds them: uuids
chained by parentUuid, timestamps that advance, replies split one block a line.
"""

from __future__ import annotations

import itertools
import json
import uuid as uuidlib
from datetime import datetime, timedelta, timezone

_START = datetime(2026, 3, 2, 9, 0, 0, tzinfo=timezone.utc)


def _stamp(tick: int) -> str:
    return (_START + timedelta(seconds=7 * tick)).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


class ClaudeSession:
    def __init__(self, session_id: str | None = None, *, sidechain: bool = False, agent_id: str | None = None,
                 seed: int = 0) -> None:
        self.session_id = session_id or str(uuidlib.UUID(int=seed + 1))
        self.sidechain, self.agent_id = sidechain, agent_id
        self.lines: list = []
        self._ids = itertools.count(seed * 10_000 + 1)
        self._parent = None
        self.tick = 0

    def _next_uuid(self) -> str:
        return str(uuidlib.UUID(int=(1 << 100) + next(self._ids)))

    def _entry(self, kind: str, **fields) -> dict:
        self.tick += 1
        line = {"parentUuid": self._parent, "isSidechain": self.sidechain, "userType": "external",
                "cwd": "/home/dev/shop", "sessionId": self.session_id, "version": "2.1.9",
                "gitBranch": "main", "type": kind, "uuid": self._next_uuid(), "timestamp": _stamp(self.tick)}
        if self.agent_id:
            line["agentId"] = self.agent_id
        line.update(fields)
        self._parent = line["uuid"]
        self.lines.append(line)
        return line

    def prompt(self, content, **fields) -> dict:
        """What a person typed: a string, or a list of blocks (text, image)."""
        return self._entry("user", message={"role": "user", "content": content}, **fields)

    def user_text(self, text: str, **fields) -> dict:
        """User-side text the editor wrote (caveats, command tags, notifications...)."""
        return self._entry("user", message={"role": "user", "content": text}, **fields)

    def reply(self, *blocks, thinking: bool = True) -> str:
        """One assistant message written one block a line, as Claude Code does; returns its id."""
        message_id = f"msg_{next(self._ids):024d}"
        request = f"req_{next(self._ids):024d}"
        content = ([{"type": "thinking", "thinking": "", "signature": "EqMBCkYIBxgCKkA" + "x" * 40}]
                   if thinking else []) + list(blocks)
        for block in content:
            self._entry("assistant", requestId=request, message={
                "model": "claude-sonnet-4-5", "id": message_id, "type": "message", "role": "assistant",
                "content": [block], "stop_reason": None, "stop_sequence": None,
                "usage": {"input_tokens": 3, "output_tokens": 12}})
        return message_id

    def tool_results(self, *results) -> dict:
        """(tool_use_id, text) pairs as one user line, with the structured copy beside it."""
        blocks = [{"tool_use_id": tid, "type": "tool_result", "content": text, "is_error": False}
                  for tid, text in results]
        return self._entry("user", message={"role": "user", "content": blocks},
                           toolUseResult={"stdout": results[0][1], "stderr": "", "interrupted": False})

    def bookkeeping(self, kind: str, **fields) -> dict:
        """A line of a type that holds no conversation (progress, system, snapshot...)."""
        line = {"type": kind, **fields}
        if kind in ("progress", "system"):
            self.tick += 1
            line.update({"sessionId": self.session_id, "uuid": self._next_uuid(), "timestamp": _stamp(self.tick)})
        self.lines.append(line)
        return line

    def queued(self, text: str) -> dict:
        return self._entry("attachment", attachment={"type": "queued_command", "prompt": text})

    def text(self) -> str:
        return "".join(json.dumps(line) + "\n" for line in self.lines)

    def write(self, path) -> str:
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(self.text())
        return str(path)


def text(value: str) -> dict:
    return {"type": "text", "text": value}


def tool_use(tool_id: str, name: str, tool_input: dict) -> dict:
    return {"type": "tool_use", "id": tool_id, "name": name, "input": tool_input}


class CodexSession:
    """A Codex rollout: {timestamp, type, payload} lines."""

    def __init__(self, session_id: str = "0199a213-81c0-7800-8aa1-bbab2a035a53") -> None:
        self.session_id = session_id
        self.lines: list = []
        self.tick = 0

    def add(self, kind: str, payload: dict) -> dict:
        self.tick += 1
        line = {"timestamp": _stamp(self.tick), "type": kind, "payload": payload}
        self.lines.append(line)
        return line

    def meta(self) -> None:
        self.add("session_meta", {"id": self.session_id, "timestamp": _stamp(0), "cwd": "/home/dev/shop",
                                  "originator": "codex_cli_rs", "cli_version": "0.58.0", "instructions": None,
                                  "git": {"branch": "main"}})

    def message(self, role: str, *texts: str) -> None:
        kind = "output_text" if role == "assistant" else "input_text"
        self.add("response_item", {"type": "message", "role": role,
                                   "content": [{"type": kind, "text": t} for t in texts]})

    def prompt(self, words: str) -> None:
        """A typed prompt, recorded twice as Codex does: the model's copy, then the UI event."""
        self.message("user", words)
        self.add("event_msg", {"type": "user_message", "message": words, "images": []})

    def call(self, call_id: str, name: str, arguments: dict) -> None:
        self.add("response_item", {"type": "function_call", "name": name, "arguments": json.dumps(arguments),
                                   "call_id": call_id})

    def output(self, call_id: str, text: str, kind: str = "function_call_output") -> None:
        self.add("response_item", {"type": kind, "call_id": call_id, "output": text})

    def text(self) -> str:
        return "".join(json.dumps(line) + "\n" for line in self.lines)

    def write(self, path) -> str:
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(self.text())
        return str(path)

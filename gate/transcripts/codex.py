"""Codex rollout lines -> entries.

A rollout is JSON Lines of `{timestamp, type, payload}`: `session_meta` (the session id),
`turn_context`, `response_item` (what the model saw and said: messages, tool calls, their
outputs, reasoning) and `event_msg` (what the UI showed). Each prompt is recorded twice, as a
`response_item` user message and as an `event_msg` `user_message`; the response items are the
conversation, so events are skipped. AGENTS.md and the environment are injected as user (or
developer) messages and are context. Tools are called as `function_call` (`shell`,
`exec_command`, `shell_command`) or, in other versions, freeform `custom_tool_call` (`exec`,
`apply_patch`). Early rollouts wrote the items bare, without the `{type, payload}` wrapper.
"""

from __future__ import annotations

import re

from gate.transcripts import blocks
from gate.transcripts.entries import ASSISTANT, CONTEXT, PROMPT, TOOL, Entry
from gate.transcripts.usertext import split_person_text

FORMAT = "codex"
WRAPPERS = frozenset({"session_meta", "response_item", "event_msg", "turn_context", "compacted"})
ITEMS = frozenset({
    "message", "function_call", "function_call_output", "custom_tool_call", "custom_tool_call_output",
    "local_shell_call", "web_search_call", "reasoning",
})
_CALLS = {"function_call": "arguments", "custom_tool_call": "input", "local_shell_call": "action",
          "web_search_call": "action"}
_OUTPUTS = frozenset({"function_call_output", "custom_tool_call_output"})
_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", re.I)


def looks_like_codex(obj: dict, first_line: bool) -> bool:
    kind = obj.get("type") if isinstance(obj.get("type"), str) else None
    if kind in WRAPPERS and "payload" in obj:
        return True
    if "record_type" in obj:
        return True
    if kind in ITEMS and "uuid" not in obj and "sessionId" not in obj:  # a bare early-rollout item
        return True
    return first_line and "instructions" in obj and "id" in obj and "type" not in obj


class CodexLines:
    def __init__(self, path: str) -> None:
        found = _UUID.findall(str(path))  # rollout-<time>-<uuid>.jsonl, until session_meta says
        self.session_id = found[-1] if found else ""

    def entries(self, obj: dict, offset: int, end: int, line: int):
        kind = obj.get("type")
        stamp = obj.get("timestamp") if isinstance(obj.get("timestamp"), str) else None
        if kind in WRAPPERS and "payload" in obj:
            payload = obj.get("payload")
            if not isinstance(payload, dict):
                return kind
            if kind == "session_meta":
                self._session(payload)
                return kind
            if kind == "event_msg":
                sub = payload.get("type")  # a string in every version; anything else is named by kind alone
                return f"event_msg:{sub}" if isinstance(sub, str) else kind
            if kind != "response_item":
                return kind
            return self._item(payload, stamp, offset, end, line)
        if "record_type" in obj:
            return f"record_type:{obj.get('record_type')}"
        if "instructions" in obj and "id" in obj and "type" not in obj:  # an early rollout's header
            self._session(obj)
            return "session_meta"
        if kind in ITEMS:
            return self._item(obj, stamp, offset, end, line)
        return None

    def _session(self, payload: dict) -> None:
        if isinstance(payload.get("id"), str) and payload["id"]:
            self.session_id = payload["id"]

    def _item(self, item: dict, stamp, offset, end, line):
        kind = item.get("type")
        if not isinstance(kind, str):
            return "response_item"
        base = {"session_id": self.session_id, "uuid": f"{self.session_id}@{offset}", "timestamp": stamp,
                "offset": offset, "end": end, "line": line}
        if kind == "message":
            return self._message(item, base)
        if kind in _CALLS:
            name = item.get("name") or ("local_shell" if kind == "local_shell_call" else
                                        "web_search" if kind == "web_search_call" else "tool")
            call_id = item.get("call_id") or item.get("id")
            tool_input = item.get(_CALLS[kind])
            if kind == "function_call":
                tool_input = blocks.parse_arguments(tool_input)
            return [Entry(ASSISTANT, (blocks.tool_use(call_id, name, tool_input),), **base)]
        if kind in _OUTPUTS:
            output = item.get("output")
            if isinstance(output, dict) and "content" in output:  # {content, success} in some versions
                output = output["content"]
            return [Entry(TOOL, (blocks.tool_result(item.get("call_id"), output),), **base)]
        return f"response_item:{kind}" if isinstance(kind, str) else "response_item"

    def _message(self, item: dict, base: dict):
        role = item.get("role")
        texts = _texts(item.get("content"))
        if role == "assistant":
            kept = tuple(blocks.text_block(t) for t in texts if t.strip())
            return [Entry(ASSISTANT, kept, **base)] if kept else "response_item:empty-message"
        if role in ("developer", "system"):
            return [Entry(CONTEXT, "", reason="developer", **base)]
        if role != "user":
            return f"response_item:message-{role}"
        words, context_reason = [], None
        for text in texts:
            said, reason = split_person_text(text)
            if said:
                words.append(said)
            elif reason:
                context_reason = context_reason or reason
        if words:
            return [Entry(PROMPT, "\n".join(words).strip(), reason="typed", **base)]
        return [Entry(CONTEXT, "", reason=context_reason or "empty", **base)]


def _texts(content) -> list[str]:
    if isinstance(content, str):
        return [content]
    if not isinstance(content, list):
        return []
    return [b["text"] for b in content if isinstance(b, dict) and isinstance(b.get("text"), str)]

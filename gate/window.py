"""Whatever a hook hands us -> a tuple of clean Turns. Never raises.

Windows come from many editors: content as a string or as a list of blocks,
roles spelled differently, missing fields, non-dict turns, lone surrogates.
Everything downstream sees only `Turn`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

ROLE_ALIASES = {
    "user": "user", "human": "user", "developer": "user",
    "assistant": "assistant", "ai": "assistant", "model": "assistant", "bot": "assistant",
    "system": "system",
    "tool": "tool", "function": "tool", "tool_result": "tool",
}
TOOL_BLOCKS = frozenset({"tool_use", "tool_result", "server_tool_use", "web_search_tool_result", "function_call"})
_JSON_PARSE_LIMIT = 200_000  # above this, a bracketed body is taken as JSON by its shape


@dataclass(frozen=True, slots=True)
class Turn:
    index: int
    role: str  # user | assistant | system | tool | other
    text: str
    flags: frozenset  # tool_only, sidechain, empty, json_only

    def as_message(self) -> dict:
        """The turn as it would be sent: role and plain text."""
        return {"role": self.role, "content": self.text}


def normalize_window(window) -> tuple[Turn, ...]:
    if isinstance(window, dict):
        for key in ("window", "messages", "turns"):
            if isinstance(window.get(key), list):
                window = window[key]
                break
        else:
            window = [window]
    elif isinstance(window, str):
        window = [{"role": "user", "content": window}]
    elif not isinstance(window, (list, tuple)):
        return ()
    return tuple(_turn(i, raw) for i, raw in enumerate(window))


def _turn(index: int, raw) -> Turn:
    if isinstance(raw, str):
        raw = {"role": "user", "content": raw}
    if not isinstance(raw, dict):
        return Turn(index, "other", "", frozenset({"empty"}))
    role = raw.get("role")
    role = ROLE_ALIASES.get(role.strip().lower(), "other") if isinstance(role, str) else "other"
    text, tool_blocks = _content_text(raw.get("content"))
    text = _clean(text)
    flags = set()
    if raw.get("sidechain") is True or raw.get("isSidechain") is True:
        flags.add("sidechain")
    stripped = text.strip()
    if (tool_blocks or role == "tool") and not stripped:
        flags.add("tool_only")
    elif role == "tool":
        flags.add("tool_only")
    if not stripped and not tool_blocks:
        flags.add("empty")
    if stripped and _looks_like_json(stripped):
        flags.add("json_only")
    return Turn(index, role, text, frozenset(flags))


def _content_text(content) -> tuple[str, int]:
    """Plain text of a turn's content, and how many tool blocks it carried."""
    if content is None:
        return "", 0
    if isinstance(content, str):
        return content, 0
    if isinstance(content, dict):
        content = [content]
    if not isinstance(content, (list, tuple)):
        return (str(content) if isinstance(content, (int, float)) else ""), 0
    parts, tools = [], 0
    for block in content:
        if isinstance(block, str):
            parts.append(block)
        elif isinstance(block, dict):
            kind = block.get("type")
            if kind in TOOL_BLOCKS:
                tools += 1
            elif isinstance(block.get("text"), str) and kind in (None, "text", "input_text", "output_text"):
                parts.append(block["text"])
    return "\n".join(parts), tools


def _clean(text: str) -> str:
    """Lone surrogates (invalid UTF-8 that slipped through) become "?"."""
    if text.isascii():
        return text
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        return text.encode("utf-8", "replace").decode("utf-8")


def _looks_like_json(stripped: str) -> bool:
    if not ((stripped[0] == "{" and stripped[-1] == "}") or (stripped[0] == "[" and stripped[-1] == "]")):
        return False
    if len(stripped) > _JSON_PARSE_LIMIT:
        return True
    try:
        json.loads(stripped)
    except (ValueError, RecursionError):
        return False
    return True

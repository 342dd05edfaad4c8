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
    tool_text: str = ""  # tool call inputs and tool results: never sent, but evidence (a file read, a secret)

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
    return Turn(index, *turn_facts(raw))


def turn_facts(raw) -> tuple[str, str, frozenset, str]:
    """(role, text, flags, tool text) of one turn as a hook hands it over, as its Turn holds
    them (for a caller that needs no Turn: building one costs more than reading the facts)."""
    if isinstance(raw, str):
        raw = {"role": "user", "content": raw}
    if not isinstance(raw, dict):
        return "other", "", frozenset({"empty"}), ""
    role = raw.get("role")
    role = ROLE_ALIASES.get(role.strip().lower(), "other") if isinstance(role, str) else "other"
    text, tool_blocks, tool_text = _content_text(raw.get("content"))
    text = _clean(text)
    if role == "tool":  # OpenAI-style tool messages carry their result as plain content
        tool_text = text
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
    return role, text, frozenset(flags), _clean(tool_text)


def _content_text(content) -> tuple[str, int, str]:
    """Plain text of a turn's content, how many tool blocks it carried, and their text."""
    if content is None:
        return "", 0, ""
    if isinstance(content, str):
        return content, 0, ""
    if isinstance(content, dict):
        content = [content]
    if not isinstance(content, (list, tuple)):
        return (str(content) if isinstance(content, (int, float)) else ""), 0, ""
    parts, tools, tool_parts = [], 0, []
    for block in content:
        if isinstance(block, str):
            parts.append(block)
        elif isinstance(block, dict):
            kind = block.get("type")
            if kind in TOOL_BLOCKS:
                tools += 1
                tool_parts.append(_tool_block_text(block))
            elif isinstance(block.get("text"), str) and kind in (None, "text", "input_text", "output_text"):
                parts.append(block["text"])
    return "\n".join(parts), tools, "\n".join(p for p in tool_parts if p)


def _tool_block_text(block: dict) -> str:
    """A tool call's name and input, or a tool result's content, as text."""
    pieces = []
    if isinstance(block.get("name"), str):
        pieces.append(block["name"])
    payload = block.get("input", block.get("content"))
    if isinstance(payload, str):
        pieces.append(payload)
    elif isinstance(payload, list):  # tool results may be a list of text blocks
        pieces += [b["text"] if isinstance(b, dict) and isinstance(b.get("text"), str) else (b if isinstance(b, str) else "")
                   for b in payload]
    elif payload is not None:
        try:
            pieces.append(json.dumps(payload, ensure_ascii=False, default=str)[:_JSON_PARSE_LIMIT])
        except (TypeError, ValueError, RecursionError):
            pass
    return "\n".join(p for p in pieces if p)


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

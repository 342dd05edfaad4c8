"""Content blocks in the one shape windows use: text, tool_use, tool_result (the Anthropic shape
the classifier and the fixtures schema read). Thinking and images are left out: reasoning is
never a memory, and an image's bytes are nothing a rule can judge."""

from __future__ import annotations

import json


def text_block(text: str) -> dict:
    return {"type": "text", "text": text}


def tool_use(call_id, name, tool_input) -> dict:
    return {"type": "tool_use", "id": call_id if isinstance(call_id, str) else "",
            "name": name if isinstance(name, str) else "tool", "input": tool_input}


def tool_result(call_id, content, is_error: bool = False) -> dict:
    block = {"type": "tool_result", "tool_use_id": call_id if isinstance(call_id, str) else "",
             "content": result_text(content)}
    if is_error is True:
        block["is_error"] = True
    return block


def result_text(content) -> str:
    """A tool result's content as text: strings kept, text blocks joined, images and the rest left out."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for item in content:
            if isinstance(item, str):
                parts.append(item)
            elif isinstance(item, dict) and isinstance(item.get("text"), str):
                parts.append(item["text"])
        return "\n".join(parts)
    if content is None:
        return ""
    if isinstance(content, dict) and isinstance(content.get("text"), str):
        return content["text"]
    try:
        return json.dumps(content, ensure_ascii=False, default=str)
    except (TypeError, ValueError, RecursionError):
        return ""


def parse_arguments(arguments):
    """A function call's arguments, as the JSON object they usually are, else the raw string."""
    if isinstance(arguments, str):
        try:
            return json.loads(arguments)
        except (ValueError, RecursionError):
            return arguments
    return arguments

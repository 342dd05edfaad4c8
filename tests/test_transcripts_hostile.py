"""The reader never raises on what a file holds: lines of every shape, however wrong."""

from __future__ import annotations

import json
import random

from gate.transcripts import exchanges, follow, read_transcript

_ATOMS = [None, True, 0, -1, 1.5, "", "x", "<command-name>", "[Request interrupted", [], {}, "user", "assistant",
          "attachment", "tool_result", "text", "tool_use", "queued_command", "response_item", "message",
          "function_call", "custom_tool_call", "function_call_output", "session_meta", "developer", "thinking"]
_KEYS = ["type", "message", "content", "role", "text", "id", "uuid", "sessionId", "timestamp", "isSidechain", "isMeta",
         "attachment", "prompt", "payload", "tool_use_id", "name", "input", "arguments", "call_id", "output",
         "agentId", "isCompactSummary", "model", "isApiErrorMessage", "instructions", "record_type"]


def _junk(rng, depth=0):
    roll = rng.random()
    if depth > 3 or roll < 0.4:
        return rng.choice(_ATOMS)
    if roll < 0.7:
        return [_junk(rng, depth + 1) for _ in range(rng.randrange(4))]
    return {rng.choice(_KEYS): _junk(rng, depth + 1) for _ in range(rng.randrange(6))}


def _almost_right(rng):
    """A line with the right outer shape and junk where the values go."""
    kind = rng.choice(["user", "assistant", "attachment", "response_item", "session_meta", "event_msg"])
    if kind in ("user", "assistant"):
        content = [_junk(rng) for _ in range(3)] if rng.random() < 0.7 else _junk(rng)
        return {"type": kind, "uuid": _junk(rng), "sessionId": rng.choice(["s1", _junk(rng)]), "timestamp": _junk(rng),
                "isSidechain": _junk(rng), "message": {"id": _junk(rng), "role": kind, "content": content}}
    if kind == "attachment":
        return {"type": kind, "attachment": {"type": rng.choice(["queued_command", _junk(rng)]), "prompt": _junk(rng)}}
    payload = {key: _junk(rng) for key in ("role", "content", "arguments", "output", "call_id", "name", "input", "id")}
    payload["type"] = rng.choice(["message", "function_call", "custom_tool_call", "function_call_output", _junk(rng)])
    return {"type": kind, "payload": payload}


def test_no_line_shape_breaks_the_reader(tmp_path):
    rng = random.Random(4)
    path = tmp_path / "hostile.jsonl"
    for _ in range(300):
        lines = [json.dumps(_almost_right(rng) if rng.random() < 0.6 else _junk(rng))
                 for _ in range(rng.randrange(1, 8))]
        path.write_text("\n".join(lines) + ("\n" if rng.random() < 0.8 else ""))
        reading = read_transcript(path, final=True)
        for exchange in exchanges(reading.entries):
            json.dumps(exchange.window)  # turns are plain JSON data
        follow(path, rng.randrange(0, 200))
        # the reader's last line of defence (a line it could not read) was never needed
        assert not any(name.startswith("unreadable") for name in reading.skipped), lines

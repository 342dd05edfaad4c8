"""The Codex rollout reader: double-recorded prompts, injected context, both tool-call styles."""

from __future__ import annotations

import json

from gate.transcripts import CONTEXT, exchanges, read_transcript
from transcriptkit import CodexSession


def _rollout() -> CodexSession:
    s = CodexSession()
    s.meta()
    s.message("developer", "<permissions instructions>Filesystem sandboxing: workspace-write.</permissions instructions>")
    s.message("user", "# AGENTS.md instructions for /home/dev/shop\n\n<INSTRUCTIONS>\nUse pnpm. Run `pnpm test` "
                      "before you commit.\n</INSTRUCTIONS>")
    s.message("user", "<environment_context>\n  <cwd>/home/dev/shop</cwd>\n  <shell>zsh</shell>\n"
                      "</environment_context>")
    s.add("turn_context", {"cwd": "/home/dev/shop", "approval_policy": "on-request", "model": "gpt-5-codex"})
    s.prompt("the price filter ignores the max bound, fix it")
    s.add("response_item", {"type": "reasoning", "summary": [], "content": None, "encrypted_content": "gAAAAB"})
    s.call("call_1", "exec_command", {"cmd": "rg -n maxPrice web/src", "workdir": "/home/dev/shop"})
    s.output("call_1", "web/src/filters.ts:18:  if (p.price > minPrice && maxPrice) {")
    s.add("response_item", {"type": "custom_tool_call", "status": "completed", "call_id": "call_2",
                            "name": "apply_patch",
                            "input": "*** Begin Patch\n*** Update File: web/src/filters.ts\n@@\n-  if (p.price > "
                                     "minPrice && maxPrice) {\n+  if (p.price >= minPrice && p.price <= maxPrice) {\n"
                                     "*** End Patch\n"})
    s.output("call_2", '{"output":"Success. Updated the following files:\\nM web/src/filters.ts\\n"}',
             kind="custom_tool_call_output")
    s.add("event_msg", {"type": "agent_message", "message": "Fixed the bound check."})
    s.message("assistant", "Fixed: the filter compared against the bound's truthiness, not the price.")
    s.add("event_msg", {"type": "token_count", "info": None})
    s.add("response_item", {"type": "ghost_snapshot", "ghost_commit": {"id": "4be1c0d"}})  # a newer item type
    s.add("compacted", {"message": "Summary of the work so far: the price filter bound is fixed."})
    s.prompt("thanks. add a test")
    s.call("call_3", "shell_command", {"command": "pnpm test filters"})
    s.output("call_3", "Tests: 14 passed")
    s.message("assistant", "Added a test for the upper bound.")
    return s


def test_a_rollout_reads_as_exchanges_of_typed_prompts(tmp_path):
    s = _rollout()
    reading = read_transcript(s.write(tmp_path / f"rollout-2026-03-02T09-00-00-{s.session_id}.jsonl"), final=True)
    found = exchanges(reading.entries)

    assert reading.format == "codex"
    assert [e.session_id for e in found] == [s.session_id, s.session_id]
    # each prompt once, although recorded twice; AGENTS.md, environment and developer text are context
    prompts = [t["content"] for e in found for t in e.window if isinstance(t["content"], str)]
    assert prompts == ["the price filter ignores the max bound, fix it", "thanks. add a test"]
    assert [e.reason for e in reading.entries if e.kind == CONTEXT] == ["developer", "agents-md", "environment"]
    first = found[0].window
    assert [t["role"] for t in first] == ["user", "assistant", "user", "assistant", "user", "assistant"]
    call, patch = first[1]["content"][0], first[3]["content"][0]
    assert call == {"type": "tool_use", "id": "call_1", "name": "exec_command",
                    "input": {"cmd": "rg -n maxPrice web/src", "workdir": "/home/dev/shop"}}
    assert patch["name"] == "apply_patch" and patch["input"].startswith("*** Begin Patch")
    assert first[4]["content"][0]["tool_use_id"] == "call_2"
    assert reading.skipped == {"session_meta": 1, "turn_context": 1, "event_msg:user_message": 2,
                               "response_item:reasoning": 1, "event_msg:agent_message": 1,
                               "event_msg:token_count": 1, "response_item:ghost_snapshot": 1, "compacted": 1}
    assert found[0].key == f"{s.session_id}@{found[0].offset}"


def test_reading_from_an_offset_still_knows_the_session(tmp_path):
    s = _rollout()
    path = s.write(tmp_path / "rollout.jsonl")
    whole = read_transcript(path, final=True)
    second = next(e for e in whole.entries if e.kind == "prompt" and e.content.startswith("thanks"))
    tail = read_transcript(path, second.offset, first_line=second.line)
    assert tail.format == "codex" and tail.entries[0].session_id == s.session_id
    assert tail.entries == [e for e in whole.entries if e.offset >= second.offset]


def test_an_early_rollout_without_the_wrapper(tmp_path):
    lines = [
        {"id": "5e1f0c4a-2b7d-4c1e-9a60-0d2f7f8e3b11", "timestamp": "2025-06-01T10:00:00.000Z",
         "instructions": "Be terse."},
        {"record_type": "state"},
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "why does make fail on arm64"}]},
        {"type": "function_call", "name": "shell", "arguments": '{"command": ["bash", "-lc", "make 2>&1 | tail -3"]}',
         "call_id": "call_9"},
        {"type": "function_call_output", "call_id": "call_9",
         "output": '{"output": "ld: unknown option -z", "metadata": {"exit_code": 2}}'},
        {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "The linker flag is GNU-only."}]},
    ]
    path = tmp_path / "old.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    reading = read_transcript(path, final=True)
    found = exchanges(reading.entries)
    assert reading.format == "codex"
    assert found[0].session_id == "5e1f0c4a-2b7d-4c1e-9a60-0d2f7f8e3b11"
    assert found[0].window[1]["content"][0]["input"] == {"command": ["bash", "-lc", "make 2>&1 | tail -3"]}
    assert reading.skipped == {"session_meta": 1, "record_type:state": 1}

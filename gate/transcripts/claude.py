"""Claude Code session lines -> entries.

A session file is JSON Lines. `user` lines carry a person's prompt, tool results (most of
them), or text the editor wrote (see usertext.py); `assistant` lines carry one content block
each, a reply spanning several lines that share `message.id`; `attachment` lines of type
`queued_command` carry what a person typed while the agent was busy. Everything else
(`progress`, `system`, `file-history-snapshot`, `queue-operation`, `summary`, ...) is
bookkeeping and is skipped by name. A file may repeat entries it already holds (a resumed or
re-recorded session); a block seen before is read once.
"""

from __future__ import annotations

from gate.transcripts import blocks
from gate.transcripts.entries import ASSISTANT, CONTEXT, PROMPT, TOOL, Entry
from gate.transcripts.usertext import split_person_text

FORMAT = "claude-code"

# Line types Claude Code writes that hold nothing a window needs.
BOOKKEEPING = frozenset({
    "summary", "file-history-snapshot", "progress", "queue-operation", "last-prompt",
    "permission-mode", "ai-title", "custom-title", "system", "tag", "agent-name",
})


class ClaudeLines:
    """Turns parsed lines of one file into entries; remembers what it saw to drop repeats."""

    def __init__(self) -> None:
        self._seen: set = set()
        self._caveat_stamp = None  # when the last local-command caveat was written

    def entries(self, obj: dict, offset: int, end: int, line: int):
        """The entries of one line, or a string naming why it holds none (for the skipped counts)."""
        kind = obj.get("type")
        if kind == "user":
            return self._user(obj, offset, end, line)
        if kind == "assistant":
            return self._assistant(obj, offset, end, line)
        if kind == "attachment":
            return self._attachment(obj, offset, end, line)
        if kind in BOOKKEEPING:
            sub = obj.get("subtype") if kind == "system" else None
            return f"{kind}:{sub}" if isinstance(sub, str) else kind
        return None  # not a line this reader knows

    # -- user lines ---------------------------------------------------------------------

    def _user(self, obj, offset, end, line):
        message = obj.get("message")
        content = message.get("content") if isinstance(message, dict) else None
        sidechain = obj.get("isSidechain") is True
        stamp = obj.get("timestamp") if isinstance(obj.get("timestamp"), str) else None
        forced = ("compaction-summary" if obj.get("isCompactSummary") is True
                  else "meta" if obj.get("isMeta") is True
                  else "transcript-only" if obj.get("isVisibleInTranscriptOnly") is True
                  # the caveat's companions: what local commands printed, written at its instant
                  else "local-command" if stamp is not None and stamp == self._caveat_stamp else None)
        if forced == "meta" and _is_local_caveat(content):
            self._caveat_stamp = stamp
        if isinstance(content, str):
            content = [{"type": "text", "text": content}]
        if not isinstance(content, list):
            return "user:no-content"
        results, words, repeats = [], [], 0
        context_reason = None  # what the text set aside was
        prompt_reason = None  # 'command-args' when the words are a slash command's arguments
        for block in content:
            if isinstance(block, str):
                block = {"type": "text", "text": block}
            if not isinstance(block, dict):
                continue
            if block.get("type") == "tool_result":
                key = ("tool_result", block.get("tool_use_id"))
                if isinstance(block.get("tool_use_id"), str) and self._repeat(key):
                    repeats += 1
                    continue
                results.append(blocks.tool_result(block.get("tool_use_id"), block.get("content"),
                                                  block.get("is_error") is True))
            elif block.get("type") == "text" and isinstance(block.get("text"), str):
                text = block["text"]
                if stamp is not None and self._repeat(("text", stamp, text)):
                    repeats += 1
                    continue
                if forced:
                    context_reason = split_person_text(text)[1] or forced
                    continue
                if sidechain:  # the parent agent's prompt to its subagent: no person typed it
                    words.append(text)
                    continue
                said, reason = split_person_text(text)
                if said:
                    words.append(said)
                    if reason == "command":
                        prompt_reason = "command-args"
                elif reason:
                    context_reason = context_reason or reason
        out = []
        base = self._base(obj, offset, end, line, stamp, sidechain)
        if results:
            out.append(Entry(TOOL, tuple(results), **base))
        if words:
            reason = "agent-prompt" if sidechain else prompt_reason or "typed"
            out.append(Entry(PROMPT, "\n".join(words).strip(), reason=reason, **base))
        elif context_reason:
            out.append(Entry(CONTEXT, "", reason=context_reason, **base))
        return out or ("user:repeat" if repeats else "user:no-text")

    # -- assistant lines ----------------------------------------------------------------

    def _assistant(self, obj, offset, end, line):
        if obj.get("isApiErrorMessage") is True:
            return "assistant:api-error"
        message = obj.get("message")
        if not isinstance(message, dict):
            return "assistant:no-content"
        if message.get("model") == "<synthetic>":  # the editor's own stand-in text, not a reply
            return "assistant:synthetic"
        content = message.get("content")
        if isinstance(content, str):
            content = [{"type": "text", "text": content}]
        if not isinstance(content, list):
            return "assistant:no-content"
        message_id = message.get("id") if isinstance(message.get("id"), str) else None
        out_blocks, repeats, thinking = [], 0, 0
        for block in content:
            if not isinstance(block, dict):
                continue
            kind = block.get("type")
            if kind == "text" and isinstance(block.get("text"), str) and block["text"].strip():
                if message_id and self._repeat((message_id, "text", block["text"])):
                    repeats += 1
                    continue
                out_blocks.append(blocks.text_block(block["text"]))
            elif kind in ("tool_use", "server_tool_use"):
                if isinstance(block.get("id"), str) and self._repeat(("tool_use", block["id"])):
                    repeats += 1
                    continue
                out_blocks.append(blocks.tool_use(block.get("id"), block.get("name"), block.get("input")))
            elif kind == "web_search_tool_result":
                out_blocks.append(blocks.tool_result(block.get("tool_use_id"), block.get("content")))
            elif kind in ("thinking", "redacted_thinking"):  # often empty, only a signature; never a memory
                thinking += 1
        if not out_blocks:
            return "assistant:repeat" if repeats else "assistant:thinking-only" if thinking else "assistant:no-text"
        stamp = obj.get("timestamp") if isinstance(obj.get("timestamp"), str) else None
        return [Entry(ASSISTANT, tuple(out_blocks), message_id=message_id,
                      **self._base(obj, offset, end, line, stamp, obj.get("isSidechain") is True))]

    # -- attachments --------------------------------------------------------------------

    def _attachment(self, obj, offset, end, line):
        attachment = obj.get("attachment")
        kind = attachment.get("type") if isinstance(attachment, dict) else None
        if kind != "queued_command":
            return f"attachment:{kind}" if isinstance(kind, str) else "attachment"
        text = _attachment_text(attachment)
        stamp = obj.get("timestamp") if isinstance(obj.get("timestamp"), str) else None
        if not text or (stamp is not None and self._repeat(("queued", stamp, text))):
            return "attachment:queued_command-empty" if not text else "attachment:repeat"
        said, reason = split_person_text(text)
        base = self._base(obj, offset, end, line, stamp, obj.get("isSidechain") is True)
        if not said:  # a queued notification, not a person's words
            return [Entry(CONTEXT, "", reason=reason or "queued-context", **base)]
        return [Entry(PROMPT, said, reason="queued", **base)]

    # -- shared -------------------------------------------------------------------------

    def _repeat(self, key) -> bool:
        if key in self._seen:
            return True
        self._seen.add(key)
        return False

    @staticmethod
    def _base(obj, offset, end, line, stamp, sidechain) -> dict:
        session = obj.get("sessionId") if isinstance(obj.get("sessionId"), str) else ""
        uuid = obj.get("uuid") if isinstance(obj.get("uuid"), str) else f"{session}@{offset}"
        agent = obj.get("agentId") if isinstance(obj.get("agentId"), str) else None
        return {"session_id": session, "uuid": uuid, "timestamp": stamp, "offset": offset, "end": end, "line": line,
                "sidechain": sidechain, "agent_id": agent}


def _is_local_caveat(content) -> bool:
    text = content if isinstance(content, str) else next(
        (b.get("text") for b in content if isinstance(b, dict) and isinstance(b.get("text"), str)), "") \
        if isinstance(content, list) else ""
    return split_person_text(text)[1] == "local-command-caveat"


def _attachment_text(attachment: dict) -> str:
    """A queued command's text: `prompt` in the versions seen, `content` or `text` tolerated."""
    for key in ("prompt", "content", "text", "message"):
        value = attachment.get(key)
        if isinstance(value, str) and value.strip():
            return value.strip()
        if isinstance(value, list):
            text = "\n".join(b["text"] for b in value if isinstance(b, dict) and isinstance(b.get("text"), str))
            if text.strip():
                return text.strip()
    return ""

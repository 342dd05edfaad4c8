"""Transcripts: editor session files (Claude Code, Codex) read into entries, entries into the
windows the classifier judges, and `replay` of whole archives through revisions.

Owns: the readers (incremental, from a byte offset), the windowing shared by the hook, replay
and the fixture export, and replay itself. Rank 3: imports gate.evaluation, gate.engine and
gate.language only; gate.capture builds on it.

    reading = read_transcript(path, offset)        # entries, next offset, skipped counts, format
    for exchange in exchanges(reading.entries):    # one window per exchange
        classifier.classify(exchange.window)
    followed = follow(path, offset)                # a hook: completed exchanges + next offset
"""

from gate.transcripts.entries import ASSISTANT, CONTEXT, PROMPT, TOOL, Entry, Reading
from gate.transcripts.reader import read_transcript
from gate.transcripts.windows import Exchange, Followed, exchanges, follow

__all__ = ["ASSISTANT", "CONTEXT", "PROMPT", "TOOL", "Entry", "Exchange", "Followed", "Reading",
           "exchanges", "follow", "read_transcript"]

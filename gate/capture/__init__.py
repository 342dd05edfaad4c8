"""Capture: the editor's write path. A hook classifies each new window of a session and
spools what is flagged; `gate flush` sends the spool to the platform, at least once and
at most once more per lost answer.

Owns: config (one TOML file), the spool (SQLite, WAL), the Claude Code hook and its
installer, the flush. May import transcripts, evaluation, engine, language and platform;
nothing imports capture but the CLI.
"""

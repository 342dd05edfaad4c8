"""Reading a growing file from a byte offset, as a hook does after every reply."""

from __future__ import annotations

from gate.transcripts import exchanges, follow, read_transcript
from transcriptkit import ClaudeSession, text, tool_use


def _session() -> ClaudeSession:
    s = ClaudeSession()
    s.prompt("the nightly export job times out after the schema change")
    s.reply(tool_use("toolu_1", "Bash", {"command": "kubectl logs job/export --tail=20"}))
    s.tool_results(("toolu_1", "ERROR statement timeout after 300000ms"))
    s.reply(text("The new index is missing on orders.created_at, so the export scans the table."))
    s.prompt("we always add indexes in a separate migration, never in the schema change itself")
    s.reply(text("Noted; I'll add the index in its own migration."))
    s.prompt("ship it")
    s.reply(text("Opened the PR."))
    return s


def test_a_partial_last_line_is_not_consumed(tmp_path):
    full = _session().text().encode()
    cut = full.index(b"\n", len(full) // 2) + 40  # in the middle of a line
    path = tmp_path / "s.jsonl"
    path.write_bytes(full[:cut])
    first = read_transcript(path)
    assert first.offset == full.rindex(b"\n", 0, cut) + 1
    path.write_bytes(full)
    rest = read_transcript(path, first.offset)
    whole = read_transcript(path)
    assert rest.offset == len(full)
    assert [e.uuid for e in first.entries + rest.entries] == [e.uuid for e in whole.entries]
    assert first.lines + rest.lines == whole.lines


def test_follow_holds_back_the_trailing_exchange_until_the_next_prompt(tmp_path):
    s = _session()
    lines = s.text().splitlines(keepends=True)
    path = tmp_path / "s.jsonl"
    keys = []

    def grow(count):
        path.write_text("".join(lines[:count]))

    # after the first reply (Stop): nothing is complete yet; the offset stays at the first prompt
    grow(6)
    step = follow(path, 0)
    assert step.exchanges == [] and step.offset == 0
    # the second prompt arrives: the first exchange is complete, whole
    grow(9)
    step = follow(path, step.offset)
    assert [len(e.window) for e in step.exchanges] == [4]
    keys += [e.key for e in step.exchanges]
    step = follow(path, step.offset)  # nothing new: nothing returned twice
    assert step.exchanges == []
    grow(len(lines))
    step = follow(path, step.offset)
    keys += [e.key for e in step.exchanges]
    step = follow(path, step.offset, final=True)  # the session ended
    keys += [e.key for e in step.exchanges]
    assert step.offset == path.stat().st_size
    assert keys == [e.key for e in exchanges(read_transcript(path).entries)]
    assert len(keys) == 3


def test_an_offset_that_does_not_fit_the_file_reads_it_from_the_start(tmp_path):
    path = _session().write(tmp_path / "s.jsonl")
    size = (tmp_path / "s.jsonl").stat().st_size
    beyond = read_transcript(path, size + 100)
    mid_line = read_transcript(path, 5)
    assert beyond.restarted and mid_line.restarted
    assert len(beyond.entries) == len(read_transcript(path).entries) == len(mid_line.entries)
    assert not read_transcript(path, size).restarted


def test_complete_flags_with_final_false(tmp_path):
    path = _session().write(tmp_path / "s.jsonl")
    found = exchanges(read_transcript(path).entries, final=False)
    assert [e.complete for e in found] == [True, True, False]
    # byte ranges: each exchange ends just past its last line, where the next one's first line starts
    assert [e.start for e in found] == [e.offset for e in found]
    assert [e.end for e in found[:-1]] == [e.offset for e in found[1:]]
    assert found[-1].end == (tmp_path / "s.jsonl").stat().st_size


def test_final_reads_a_last_line_without_newline_but_does_not_pass_it(tmp_path):
    body = _session().text()
    last_start = body.rstrip("\n").rindex("\n") + 1
    path = tmp_path / "s.jsonl"
    path.write_text(body.rstrip("\n"))  # the writer stopped before the newline
    final = read_transcript(path, final=True)
    assert final.entries[-1].offset == last_start and final.offset == last_start
    path.write_text(body + body.splitlines(keepends=True)[0])  # it finished the line, and went on
    later = read_transcript(path, final.offset)
    assert not later.restarted
    assert [e.offset for e in later.entries][:1] == [last_start]

"""tool_io: what tools read and printed is evidence about the window, even
though tool turns are stripped and never sent."""

from enginekit import assistant, classifier, drop_rule, revision_doc, user

READ_CLAUDE_MD = {"role": "assistant", "content": [
    {"type": "tool_use", "name": "Read", "input": {"file_path": "/src/app/CLAUDE.md"}}]}
ENV_DUMP = {"role": "user", "content": [
    {"type": "tool_result", "content": [{"type": "text", "text": "DB_PASSWORD=Xk29fjq81LmzQ"}]}]}
OPENAI_TOOL_MESSAGE = {"role": "tool", "content": "DB_PASSWORD=Xk29fjq81LmzQ"}


def _gate():
    rule = drop_rule("tool-evidence", {"tool_io": {"pattern": r"CLAUDE\.md|PASSWORD=\S+", "keywords": ["claude.md", "password"]}},
                     match=[[READ_CLAUDE_MD, assistant("Got it, amounts are int64 minor units.")]],
                     no_match=["amounts are int64 minor units"])
    return classifier(revision_doc(drop_rules=[rule]))


def test_a_tool_read_of_an_instruction_file_drops_the_paraphrase_beside_it():
    decision = _gate().classify([READ_CLAUDE_MD, assistant("Got it: amounts are int64 minor units; I'll follow that.")])
    assert decision.action == "drop" and decision.rule == "tool-evidence"


def test_tool_results_as_blocks_and_as_tool_messages_are_both_seen():
    gate = _gate()
    for tool_turn in (ENV_DUMP, OPENAI_TOOL_MESSAGE):
        decision = gate.classify([tool_turn, assistant("Staging points at the managed Postgres.")])
        assert decision.rule == "tool-evidence", tool_turn


def test_the_same_words_in_ordinary_text_are_not_tool_evidence():
    decision = _gate().classify([user("Read CLAUDE.md before you start; PASSWORD=hunter2 is a joke.")])
    assert decision.rule != "tool-evidence"


def test_a_window_without_tools_never_matches():
    assert _gate().classify([user("We deploy from main.")]).rule != "tool-evidence"

"""`spare` (line_share, repeated_shape): a turn rule that fires on a person's turn keeps only the
person's lines when one is left (a question above pasted log lines) and cuts the paste, instead of
taking the whole turn with their words (v2.22)."""

from __future__ import annotations

import pytest

from enginekit import assistant, classifier, contents, drop_rule, revision_doc, signal, user, write_rules
from gate.evaluation.lint import lint_file
from gate.language.errors import GateError

LOG_LINE = r"^\d{4}-\d\d-\d\d[ T]\d\d:\d\d|^(?-i:ERROR|WARN|INFO)\b"
SENTENCE = r"^(?>[^\n]*?\b(?:the|is|we|to|of|so|never|it)\b){3}"
LOGS = ("2025-03-02 10:14:07 ERROR worker-3 task=sync retry=4\n"
        "2025-03-02 10:14:09 ERROR worker-1 task=sync retry=5\n"
        "2025-03-02 10:14:12 WARN worker-3 backoff=32s")
ASK = "prod is throwing these again, never restart the pool by hand so look at it first"


def log_rule(**share):
    spec = {"pattern": LOG_LINE, "min_share": 0.6, **share}
    return drop_rule("logs", {"line_share": spec}, scope="turn", match=[LOGS], no_match=[ASK])


# A signal that would fire on the pasted lines' own words: it must not once they are cut.
SAW_ERROR = signal("saw-error", {"match": {"pattern": r"\bretry=\d"}}, {"all_types": 5.0},
                   match=["retry=4"], no_match=["retry later"])
SPARED = log_rule(spare=SENTENCE)


def test_the_pasted_lines_are_cut_and_the_persons_words_are_judged_and_sent():
    decision = classifier(revision_doc([SPARED], [SAW_ERROR])).classify([user(f"{ASK}\n{LOGS}"), assistant("On it.")])
    assert contents(decision) == [ASK, "On it."]
    assert "turn 0 (user): paste cut out by logs, the person's lines kept" in decision.trace
    assert decision.action == "skip", decision.trace  # 'saw-error' saw only the person's words


def test_without_spare_the_person_goes_with_the_paste():
    decision = classifier(revision_doc([log_rule()], [SAW_ERROR])).classify([user(f"{ASK}\n{LOGS}")])
    assert (decision.action, decision.rule) == ("drop", "logs")


@pytest.mark.parametrize("text", [LOGS, f"latest from prod:\n{LOGS}", f"{LOGS}\nok"])
def test_a_paste_with_no_line_of_the_persons_still_goes_whole(text):
    decision = classifier(revision_doc([SPARED])).classify([user(text)])
    assert (decision.action, decision.rule) == ("drop", "logs")


def test_only_a_persons_turn_is_spared():
    decision = classifier(revision_doc([SPARED])).classify([user("what now"), assistant(f"{ASK}\n{LOGS}")])
    assert contents(decision) == ["what now"]


def test_only_the_persons_lines_outside_the_paste_and_their_lead_ins_stay():
    rule = log_rule(spare=SENTENCE, miss=SENTENCE, ignore=r":$")
    printed = "2025-03-02 10:15:00 so the cache is cold, we expect it to warm up"  # a tool's sentence, inside
    loose = "Caused by: java.net.SocketTimeoutException"  # pasted too, though the rule's pattern misses it
    after = "that is all of it, so it is the pool"
    text = f"{ASK}\n\nhere is the log:\n{LOGS}\n{printed}\n\n{LOGS}\n{loose}\n\n\n{after}"
    decision = classifier(revision_doc([rule])).classify([user(text)])
    assert contents(decision) == [f"{ASK}\n\nhere is the log:\n\n{after}"]


def test_a_rule_below_its_level_spares_nothing_because_it_takes_nothing():
    rule = {**SPARED, "min_level": "aggressive"}
    compiled = classifier(revision_doc([rule]))
    assert contents(compiled.classify([user(f"{ASK}\n{LOGS}")], "balanced")) == [f"{ASK}\n{LOGS}"]
    assert contents(compiled.classify([user(f"{ASK}\n{LOGS}")], "aggressive")) == [ASK]


@pytest.mark.parametrize("where, make", [
    ("inside any", lambda rule: {**rule, "when": {"any": [rule["when"], {"chars": {"min": 10}}]}}),
    ("window scope", lambda rule: {**rule, "scope": "window"}),
])
def test_spare_belongs_to_a_turn_rules_whole_when(tmp_path, where, make):
    rule = make(SPARED)
    with pytest.raises(GateError) as error:
        classifier(revision_doc([rule]))
    assert "spare" in str(error.value), where
    problems = [str(p) for p in lint_file(str(write_rules(tmp_path, revision_doc([rule]))))]
    assert any("spare" in p and ".yaml:" in p for p in problems), problems


@pytest.mark.parametrize("text", [ASK + "\n" + "2025-03-02 10:14:07 ERROR " + "a" * 200_000,
                                  ("2025-03-02 10:14:07 ERROR x\n" * 20_000) + ASK, "\x00" + ASK + "\ud800\n" + LOGS])
def test_spare_never_raises_on_hostile_turns(text):
    decision = classifier(revision_doc([SPARED])).classify([user(text)])
    assert decision.error is None or "timeout" in decision.error


JSON_LOGS = "\n".join(f'{{"ts":"2025-04-01T10:00:0{i}Z","level":"error","msg":"db timeout"}}' for i in range(4))
REPEATS = drop_rule("repeats", {"repeated_shape": {"unit": "line", "min": 3, "min_share": 0.6, "spare": SENTENCE}},
                    scope="turn", match=[JSON_LOGS], no_match=[ASK])


def test_a_repeated_line_shape_spares_the_person_the_same_way():
    compiled = classifier(revision_doc([REPEATS]))
    assert contents(compiled.classify([user(f"{JSON_LOGS}\n{ASK}")])) == [ASK]
    alone = compiled.classify([user(JSON_LOGS)])
    assert (alone.action, alone.rule) == ("drop", "repeats")
    unspared = {**REPEATS, "when": {"repeated_shape": {"unit": "line", "min": 3, "min_share": 0.6}}}
    assert classifier(revision_doc([unspared])).classify([user(f"{JSON_LOGS}\n{ASK}")]).action == "drop"


def test_spare_on_whole_turn_shapes_is_an_error():
    rule = {**REPEATS, "when": {"repeated_shape": {"unit": "turn", "min": 3, "spare": SENTENCE}}}
    with pytest.raises(GateError) as error:
        classifier(revision_doc([rule]))
    assert "unit: line" in str(error.value)


def test_inside_the_paste_a_line_is_theirs_only_with_spare_within():
    personal = r"\b(?:we|fyi|dont)\b"
    printed = "Deprecated features were used in this build, so it is not the same as it was"
    theirs = "fyi it is the reindex, we see it every night at 3"
    text = f"{LOGS}\n{printed}\n{theirs}\n{LOGS}"
    within = classifier(revision_doc([log_rule(spare=SENTENCE, spare_within=personal)])).classify([user(text)])
    assert contents(within) == [theirs]
    without = classifier(revision_doc([SPARED])).classify([user(text)])
    assert (without.action, without.rule) == ("drop", "logs")  # inside the paste, nothing is theirs


def test_spare_within_needs_spare():
    with pytest.raises(GateError) as error:
        classifier(revision_doc([log_rule(spare_within=r"\bwe\b")]))
    assert "needs spare" in str(error.value)


def test_with_continuations_a_line_indented_under_the_paste_is_the_pastes():
    # the last log line's message runs on, indented, in words that read as the person's
    runs_on = "    so it is the end of the retries, the pool is gone"
    text = f"{ASK}\n{LOGS}\n{runs_on}"
    plain = classifier(revision_doc([log_rule(spare=SENTENCE)])).classify([user(text)])
    assert contents(plain) == [f"{ASK}\n{runs_on}"]  # after the paste's last counted line: theirs
    continued = classifier(revision_doc([log_rule(spare=SENTENCE, continuations=True)])).classify([user(text)])
    assert contents(continued) == [ASK]  # it continues a counted line: the paste's, and cut with it
    flush = f"{ASK}\n{LOGS}\n{runs_on.strip()}"  # not indented: it continues nothing
    assert contents(classifier(revision_doc([log_rule(spare=SENTENCE, continuations=True)])).classify(
        [user(flush)])) == [f"{ASK}\n{runs_on.strip()}"]


def test_continuations_never_raise_on_a_staircase_of_indents():
    # each line one space deeper than the last: a chain of heads thousands long
    stair = "\n".join(" " * depth + "2025-03-02 10:14:07 ERROR x" for depth in range(3000))
    for text in (f"{ASK}\n{stair}\n{' ' * 3000}so it is the end of it, we think", stair):
        decision = classifier(revision_doc([log_rule(spare=SENTENCE, continuations=True)])).classify([user(text)])
        assert decision.error is None, decision.error
        assert decision.action in ("drop", "skip")

"""Span rules: what a harness wrote into the person's turn is cut out before anything judges
the turn, and never sent; the person's words around it stay (v2.6)."""

from __future__ import annotations

import pytest

from enginekit import assistant, classifier, contents, drop_rule, match, revision_doc, signal, user, write_rules
from gate.evaluation.lint import lint_file
from gate.language.errors import GateError

NOTICE = ("<ide_opened_file>The user opened the file /srv/app/README.md in the IDE. This may or may not be "
          "related to the current task.</ide_opened_file>")


def span_rule(**extra):
    rule = drop_rule("harness-markup", match(r"<ide_[a-z_]+>[\s\S]*?</ide_[a-z_]+>", case_sensitive=True),
                     scope="span", role="user", mandatory=True, match=[NOTICE + "\nship it"], no_match=["ship it"])
    rule.update(extra)
    return rule


# A signal that would fire on the notice's own words: it must not once they are cut.
LONG = signal("long", {"prose_words": {"min": 12}}, {"all_types": 5.0}, role="user",
              match=["one two three four five six seven eight nine ten eleven twelve"], no_match=["short"])


def test_the_notice_is_cut_and_the_persons_words_are_judged_and_sent_alone():
    decision = classifier(revision_doc([span_rule()], [LONG])).classify([user(NOTICE + "\ncommit!"), assistant("Done.")])
    assert contents(decision) == ["commit!", "Done."]
    assert "turn 0 (user): spans cut out by harness-markup" in decision.trace
    assert decision.action == "skip", decision.trace  # 'long' saw only "commit!"


def test_without_the_span_rule_the_notice_counts_as_the_persons_words():
    decision = classifier(revision_doc([], [LONG])).classify([user(NOTICE + "\ncommit!"), assistant("Done.")])
    assert decision.action == "flag" and NOTICE in contents(decision)[0]


def test_a_turn_of_nothing_but_notices_goes_and_an_empty_window_drops_by_the_rule():
    window = [user(NOTICE)]
    decision = classifier(revision_doc([span_rule()], [LONG])).classify(window)
    assert (decision.action, decision.rule) == ("drop", "harness-markup")
    window = [user(NOTICE), assistant("I see the README is open.")]
    decision = classifier(revision_doc([span_rule()], [LONG])).classify(window)
    assert contents(decision) == ["I see the README is open."]


def test_the_role_limits_what_is_cut():
    decision = classifier(revision_doc([span_rule()], [LONG])).classify([user("ok"), assistant(NOTICE + " noted")])
    assert NOTICE in contents(decision)[1]


def test_a_span_rule_below_its_level_cuts_nothing():
    rule = span_rule(min_level="aggressive", mandatory=False)
    compiled = classifier(revision_doc([rule], [LONG]))
    assert NOTICE in contents(compiled.classify([user(NOTICE + "\ncommit!")], "balanced"))[0]
    assert contents(compiled.classify([user(NOTICE + "\ncommit!")], "aggressive")) == ["commit!"]


def test_a_span_rule_must_be_one_match(tmp_path):
    rule = span_rule()
    rule["when"] = {"any": [match("a"), match("b")]}
    with pytest.raises(GateError) as error:
        classifier(revision_doc([rule]))
    assert "a span rule's when is one match" in str(error.value)
    path = write_rules(tmp_path, revision_doc([rule]))
    problems = [str(p) for p in lint_file(str(path))]
    assert any("span rule's when is one match" in p and ".yaml:" in p for p in problems), problems


@pytest.mark.parametrize("text", ["<ide_x>" + "a" * 200_000, "<ide_x>" * 20_000 + "</ide_x>", "\x00<ide_y>\ud800</ide_y>"])
def test_span_rules_never_raise_on_hostile_turns(text):
    decision = classifier(revision_doc([span_rule()], [LONG])).classify([user(text)])
    assert decision.error is None or "timeout" in decision.error


@pytest.mark.parametrize("notice", ["Caveat: the messages below came from a local command.",
                                    "CAVEAT: THE MESSAGES BELOW CAME FROM A LOCAL COMMAND."])
def test_a_span_whose_literals_start_with_a_letter_is_cut_in_any_case(notice):
    # Turns without the first character of any literal skip the search; that shortcut holds
    # only for punctuation, which has no case: a letter must not stand in for its other case.
    rule = drop_rule("caveat", match(r"^caveat:[^\n]*$"), scope="span", role="user", mandatory=True,
                     match=["caveat: x"], no_match=["ship it"])
    decision = classifier(revision_doc([rule], [LONG])).classify([user(notice + "\nship it")])
    assert contents(decision) == ["ship it"], decision.trace

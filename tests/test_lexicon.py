"""The lexicon condition kind: token-boundary matching in one pass, the scores and trace
of the signal that holds it, its schema branch and its lint checks."""

from __future__ import annotations

import random

import pytest

from enginekit import classifier, dump, match, revision_doc, signal, user, write_rules
from gate.engine.conditions import lexicon as lexicon_kind
from gate.engine.conditions.lexicon import Lexicon
from gate.evaluation.lint import lint_file
from gate.language.errors import GateError
from gate.language.loader import load_revision

TERMS = {"switched": {"decision": 1.0}, "instead": {"decision": 0.4, "convention": 0.1},
         "instead of": {"decision": 0.3}, "always": {"preference": 0.8, "convention": 0.5},
         "user": {"insight": 0.2}}


def words_signal(terms=TERMS, weights=None, **extra):
    return signal("learned-words", {"lexicon": {"terms": terms}}, weights or {"all_types": 0.5}, role="user",
                  match=("we switched",), no_match=("ok",), **extra)


def test_terms_match_on_token_boundaries_only():
    lex = Lexicon(TERMS)
    found = lambda text: {lex.terms[i] for i in lex.find(text)}  # noqa: E731
    assert found("we switched to uv instead of pip") == {"switched", "instead", "instead of"}
    assert found("the switch is unswitched; insteadof") == set()  # inside words: never
    assert found("user_id and users") == set()  # '_' and letters are word characters
    assert found("(user) always,") == {"user", "always"}
    assert found("instead  of") == {"instead"}  # a phrase is two words one separator apart
    assert found("instead-of, switched\nalways") == {"instead", "instead of", "switched", "always"}
    assert found("café user—always") == {"user", "always"}  # separators beyond ASCII too
    assert found("") == set() and lex.find("") == ()


def test_the_one_pass_and_the_plain_search_agree(monkeypatch):
    rng = random.Random(7)
    pieces = ["switched", "instead", "of", "always", "user", "_", "-", " ", "  ", "x", "é", "\n", "9", "insteads"]
    texts = ["".join(rng.choice(pieces) for _ in range(rng.randint(0, 30))) for _ in range(400)]
    fast = [Lexicon(TERMS).find(t) for t in texts]
    monkeypatch.setattr(lexicon_kind, "_ahocorasick", None)
    assert [Lexicon(TERMS).find(t) for t in texts] == fast


def test_text_beyond_ascii_finds_what_a_unicode_word_boundary_finds():
    """Non-ASCII characters are read as '_' (a word character) or a space: every term is
    ASCII, so the terms found must be those of Python's own \\W separation, in any script."""
    import re

    def by_unicode_words(lex, lower):
        text = " " + re.sub(r"\W", " ", lower) + " "
        return tuple(i for i, term in enumerate(lex.terms) if f" {term} " in text)

    rng = random.Random(11)
    pieces = ["switched", "instead", "of", "always", "user", " ", "-", "_", "é", "ß", "ǆ", "\u0301", "—", "’",
              "日志", "٣", "\u00a0", "\u2028", "K", "ſ", "x", "\n", "insteadé", "éuser"]
    lex = Lexicon(TERMS)
    for _ in range(600):
        lower = "".join(rng.choice(pieces) for _ in range(rng.randint(1, 25))).lower()
        assert lex.find(lower) == by_unicode_words(lex, lower), repr(lower)


def test_the_signal_scores_its_weights_plus_the_terms_found_and_names_them_in_the_trace():
    clf = classifier(revision_doc(signals=[words_signal()]))
    decision = clf.classify([user("We switched to uv instead of pip, and we always pin it")], "balanced")
    assert decision.scores["decision"] == pytest.approx(0.5 + 1.0 + 0.4 + 0.3)
    assert decision.scores["preference"] == pytest.approx(0.5 + 0.8)
    line = next(t for t in decision.trace if t.startswith("signal learned-words"))
    assert line.startswith("signal learned-words lexicon decision+2.2 ")
    assert line.endswith(": switched, instead, instead of")  # the heaviest toward the leading type
    nothing = clf.classify([user("thanks, looks fine")], "balanced")
    assert not any(t.startswith("signal learned-words") for t in nothing.trace)  # no term: it does not fire


def test_the_lexicon_counts_in_eval_as_a_signal_that_boosts(tmp_path):
    from gate.evaluation.evaluate import rules_at

    clf = classifier(revision_doc(signals=[words_signal(weights={"all_types": 0})]))
    assert dict((r[0], r[4]) for r in rules_at(clf, "balanced"))["learned-words"] == 1


def test_schema_branch_rejects_terms_that_are_not_lowercase_words(tmp_path):
    for bad in ("Switched", "switched to uv", "v2", "a", "two  spaces"):
        path = write_rules(tmp_path, revision_doc(signals=[words_signal({bad: {"decision": 1}})]))
        with pytest.raises(GateError) as error:
            load_revision(str(path))
        assert "signal 'learned-words'" in str(error.value.problems[0])
    for first_person in ("i", "i want", "what i"):  # "i" is the one word of one letter
        load_revision(str(write_rules(tmp_path, revision_doc(signals=[words_signal({first_person: {"preference": 1}})]))))
    first = Lexicon({"i": {}, "i want": {}})
    assert {first.terms[i] for i in first.find("i want it; i.e. mine")} == {"i", "i want"}
    path = write_rules(tmp_path, revision_doc(signals=[words_signal({"switched": {"all_types": 1}})]))
    with pytest.raises(GateError):  # a term weighs named types, not all_types
        load_revision(str(path))


def test_lint_places_a_lexicon_only_as_a_signals_whole_when(tmp_path):
    nested = signal("nested", {"all": [match("x"), {"lexicon": {"terms": {"switched": {"decision": 1}}}}]},
                    {"decision": 1}, match=("x switched",), no_match=("y",))
    path = write_rules(tmp_path, revision_doc(signals=[nested]))
    problems = [str(p) for p in lint_file(str(path))]
    assert any("a lexicon must be the whole `when` of a signal" in p for p in problems), problems


def test_lint_flags_terms_that_weigh_nothing_or_a_type_not_in_categories(tmp_path):
    doc = revision_doc(signals=[words_signal({"switched": {"decision": 0}, "always": {"runbook": 1}})])
    del doc["categories"]["runbook"]
    text = dump(doc)
    path = write_rules(tmp_path, text)
    problems = [str(p) for p in lint_file(str(path))]
    zero = next(p for p in problems if "'switched'" in p)
    assert "every weight is 0" in zero
    line = text.splitlines().index(next(li for li in text.splitlines() if li.strip().startswith("switched:"))) + 1
    assert zero.startswith(f"{path}:{line}:")  # at the term's own line
    assert any("'always' weighs 'runbook', which is not in categories" in p for p in problems)
    clean = write_rules(tmp_path, revision_doc(signals=[words_signal()]), name="clean.yaml")
    assert lint_file(str(clean)) == []

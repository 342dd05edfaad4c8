"""The classifier: turn stripping, window rules, scored signals, levels, recent shapes."""

import pytest

from enginekit import (CATEGORIES, MINI, assistant, classifier, contents, drop_rule, match, revision_doc,
                       signal, user)

HEARTBEAT_RULE = drop_rule("heartbeat", {"line_share": {"pattern": r"\b{{hb_terms}}\b.*{{num}}",
                                                        "keywords": ["{{hb_terms}}"], "min_share": 0.6}},
                           scope="turn")
PREFER = signal("prefer", match(r"\bi prefer\b", keywords=["prefer"]), {"preference": 2})
ALWAYS = signal("always", match(r"\balways\b", keywords=["always"]), {"preference": 2})
DECIDED = signal("decided", match(r"\bwe decided\b", keywords=["decided"]), {"decision": 3})
REMEMBER = signal("remember", match(r"\bremember\b", keywords=["remember"]), {"all_types": 2, "preference": 1})
ONE_OFF = signal("one-off", match(r"\b(?:this time|for now)\b"), {"all_types": -3})


def judge(window, *, drop_rules=(), signals=(), level=None, recent_shapes=(), **top):
    return classifier(revision_doc(drop_rules, signals, **top)).classify(window, level=level,
                                                                       recent_shapes=recent_shapes)


def test_a_phrase_keyword_does_not_hide_a_match_across_other_whitespace():
    """A pattern spells the space of a phrase as \\s+; its keyword 'heads up' must not stop the
    optimized classifier where the words sit two spaces or a line separator apart (the
    unoptimized one, which reads no keywords, finds the match there)."""
    heads_up = signal("heads-up", match(r"\bheads\s+up\b", keywords=["heads up"]), {"insight": 3})
    doc = revision_doc(signals=[heads_up])
    for text in ("heads up: staging db is down", "heads  up: staging db is down", "heads\x85up: staging db is down"):
        window = [user(text)]
        optimized = classifier(doc).classify(window)
        reference = classifier(doc, prefilter=False, optimize=False).classify(window)
        assert optimized.action == reference.action == "flag", text


# -- scoring ----------------------------------------------------------------

def test_weights_are_summed_per_type():
    one = judge([user("I prefer rebase")], signals=[PREFER, ALWAYS])
    assert one.action == "skip" and one.scores["preference"] == 2  # 2 < balanced threshold 3
    both = judge([user("I prefer rebase, always")], signals=[PREFER, ALWAYS])
    assert both.action == "flag" and both.type == "preference"
    assert both.scores["preference"] == 4
    assert both.policy.startswith("t1+")
    assert any("prefer" in line for line in both.trace) and any("always" in line for line in both.trace)


def test_all_types_spreads_to_every_type():
    decision = judge([user("remember: we decided on gRPC")], signals=[REMEMBER, DECIDED])
    assert decision.scores == {"preference": 3, "decision": 5, "convention": 2, "insight": 2, "runbook": 2}


def test_type_refinement_generic_cue_plus_decision_cue_is_a_decision():
    signals = [REMEMBER, DECIDED]
    refined = judge([user("remember that we decided to keep the monorepo")], signals=signals)
    assert (refined.action, refined.type, refined.rule) == ("flag", "decision", "decided")
    generic = judge([user("remember to keep PRs small")], signals=signals)
    assert (generic.action, generic.type, generic.rule) == ("flag", "preference", "remember")


def test_negative_weights_count_against():
    signals = [PREFER, ALWAYS, ONE_OFF]
    assert judge([user("I prefer tabs, always")], signals=signals).action == "flag"
    counted = judge([user("I prefer tabs, always, but only this time")], signals=signals)
    assert counted.action == "skip"
    assert counted.scores["preference"] == 1
    assert counted.scores["decision"] == -3
    assert any("one-off" in line for line in counted.trace)


def test_negative_only_window_is_skipped_even_with_a_zero_threshold():
    thresholds = {"conservative": 0, "balanced": 0, "aggressive": 0}
    decision = judge([user("for now, skip it")], signals=[ONE_OFF], flag={"thresholds": thresholds})
    assert decision.action == "skip"


@pytest.mark.parametrize("level, action", [("conservative", "skip"), ("balanced", "flag"), ("aggressive", "flag")])
def test_thresholds_per_level(level, action):
    # preference scores 4: conservative needs 5, balanced 3, aggressive 2
    decision = judge([user("I prefer tabs, always")], signals=[PREFER, ALWAYS], level=level)
    assert decision.action == action
    assert decision.level == level


def test_default_level_is_the_revisions():
    decision = judge([user("I prefer tabs, always")], signals=[PREFER, ALWAYS], default_level="conservative")
    assert decision.level == "conservative" and decision.action == "skip"


def test_ties_are_broken_by_categories_order():
    pref = signal("pref", match(r"\bprefer\b"), {"preference": 3})
    dec = signal("dec", match(r"\bdecided\b"), {"decision": 3})
    window = [user("we decided, and I prefer it")]
    assert judge(window, signals=[pref, dec]).type == "preference"
    assert judge(window, signals=[dec, pref]).type == "preference"  # not the signals' order
    reordered = {name: CATEGORIES[name] for name in ("decision", "preference", "convention", "insight", "runbook")}
    assert judge(window, signals=[pref, dec], categories=reordered).type == "decision"


def test_the_deciding_signal_is_the_heaviest_toward_the_type():
    light = signal("light", match(r"\bdeploy\b"), {"runbook": 1})
    heavy = signal("heavy", match(r"\bthen run\b"), {"runbook": 3})
    other = signal("other", match(r"\bdeploy\b"), {"insight": 9, "runbook": -1})
    decision = judge([user("to deploy, build then run the migration")], signals=[light, heavy])
    assert (decision.type, decision.rule) == ("runbook", "heavy")
    decision = judge([user("to deploy, build then run the migration")], signals=[light, heavy, other])
    assert (decision.type, decision.rule) == ("insight", "other")


def test_session_state_is_never_a_flag_type():
    categories = dict(CATEGORIES, session_state="what is going on right now")
    status = signal("status", match(r"\bstatus\b"), {"all_types": 5})
    decision = judge([user("status: green")], signals=[status], categories=categories)
    assert decision.action == "flag" and decision.type == "preference"
    assert "session_state" not in decision.scores


# -- role scopes of signals -------------------------------------------------

def test_user_scoped_signal_ignores_assistant_text():
    every_time = signal("every-time", match(r"\bevery time\b"), {"preference": 4}, role="user")
    assert judge([assistant("I will run the linter every time I edit")], signals=[every_time]).action == "skip"
    said = judge([user("run the linter every time you edit"), assistant("Okay.")], signals=[every_time])
    assert said.action == "flag" and said.type == "preference"
    assert contents(said) == ["run the linter every time you edit", "Okay."]  # the payload keeps both


def test_assistant_scoped_signal_ignores_user_text():
    narration = signal("narration", match(r"^i(?:'ll| will) now\b"), {"all_types": -5}, role="assistant")
    pref = signal("pref", match(r"\bprefer\b"), {"preference": 5}, role="any")
    assert judge([user("I will now say: I prefer tabs")], signals=[narration, pref]).action == "flag"
    assert judge([assistant("I will now apply what you prefer")], signals=[narration, pref]).action == "skip"


# -- levels and mandatory rules ---------------------------------------------

def test_signals_of_every_role_are_traced_and_tied_in_file_order():
    # Signals of every role scope are reported, and tie-broken, in the order the file gives them.
    first = signal("first-any", match(r"\bredis\b"), {"decision": 2})
    second = signal("second-user", match(r"\bredis\b"), {"decision": 2}, role="user")
    third = signal("third-assistant", match(r"\bredis\b"), {"decision": 2}, role="assistant")
    fourth = signal("fourth-any", match(r"\bcache\b"), {"decision": 2})
    window = [user("we picked redis for the cache"), assistant("redis it is")]
    for signals in ([first, second, third, fourth], [third, fourth, second, first]):
        decision = judge(window, signals=signals)
        fired = [line.split()[1] for line in decision.trace if line.startswith("signal ")]
        assert fired == [s["id"] for s in signals]
        assert decision.rule == signals[0]["id"]  # equal weights: the first written decides

def test_min_level_gates_signals():
    late = signal("late", match(r"\bprefer\b"), {"preference": 5}, min_level="aggressive")
    window = [user("I prefer tabs")]
    assert judge(window, signals=[late], level="balanced").action == "skip"
    assert judge(window, signals=[late], level="aggressive").action == "flag"


def test_min_level_gates_drop_rules():
    chatter = drop_rule("chatter", match(r"^(?:ok|thanks)\b"), min_level="balanced")
    assert judge([user("ok thanks")], drop_rules=[chatter], level="conservative").action == "skip"
    assert judge([user("ok thanks")], drop_rules=[chatter], level="balanced").action == "drop"
    assert judge([user("ok thanks")], drop_rules=[chatter], level="aggressive").action == "drop"


@pytest.mark.parametrize("level", ["conservative", "balanced", "aggressive"])
def test_mandatory_rule_applies_at_every_level_and_beats_any_score(level):
    secret = drop_rule("secret", match(r"\bsk-[a-z0-9]{16,}"), mandatory=True)
    strong = signal("strong", match(r"\bwe decided\b"), {"decision": 50})
    decision = judge([user("we decided the key is sk-abcdef0123456789abcd")], drop_rules=[secret],
                     signals=[strong], level=level)
    assert (decision.action, decision.rule, decision.payload) == ("drop", "secret", ())


def test_mini_revision_mandatory_secret_rule():
    decision = classifier(MINI.read_text()).classify([user("I prefer sk-abcdefghijklmnopqrstuvwx keys")],
                                                      level="aggressive")
    assert (decision.action, decision.rule) == ("drop", "secret")


def test_unknown_level_is_an_error_not_a_send():
    decision = judge([user("I prefer tabs, always")], signals=[PREFER, ALWAYS], level="reckless")
    assert decision.action == "skip" and "reckless" in decision.error


# -- mixed windows ----------------------------------------------------------

FACT = "The staging database only accepts connections from the VPN, because of the audit."
CONSTRAINT = signal("constraint", match(r"\b(?:only|never|must)\b"), {"convention": 2, "insight": 1}, role="user")
REASON = signal("reason", match(r"\bbecause\b"), {"all_types": 1.5}, role="user")


def test_fact_between_two_noise_turns_is_flagged_without_the_noise():
    window = [assistant("Epoch 3/10 loss 0.41 ETA 5m"), user(FACT), assistant("Epoch 4/10 loss 0.39 ETA 4m")]
    decision = judge(window, drop_rules=[HEARTBEAT_RULE], signals=[CONSTRAINT, REASON])
    assert decision.action == "flag" and decision.type == "convention"
    assert decision.payload == ({"role": "user", "content": FACT},)
    assert sum("stripped by heartbeat" in line for line in decision.trace) == 2


def test_every_turn_noise_is_dropped():
    window = [assistant("Epoch 3/10 loss 0.41 ETA 5m"), assistant("Epoch 4/10 loss 0.39 ETA 4m")]
    decision = judge(window, drop_rules=[HEARTBEAT_RULE], signals=[CONSTRAINT, REASON])
    assert (decision.action, decision.rule, decision.payload) == ("drop", "heartbeat", ())


def test_window_rules_judge_only_what_is_left():
    mentions_loss = drop_rule("mentions-loss", match(r"\bloss\b"))
    window = [assistant("Epoch 3/10 loss 0.41 ETA 5m"), user(FACT)]
    assert judge(window, drop_rules=[mentions_loss]).action == "drop"
    assert judge(window, drop_rules=[HEARTBEAT_RULE, mentions_loss]).action != "drop"


def test_signals_judge_only_what_is_left():
    loss_is_insight = signal("loss", match(r"\bloss\b"), {"insight": 5})
    window = [assistant("Epoch 3/10 loss 0.41 ETA 5m"), user("ok")]
    assert judge(window, signals=[loss_is_insight]).action == "flag"
    assert judge(window, drop_rules=[HEARTBEAT_RULE], signals=[loss_is_insight]).action == "skip"


def test_empty_window_is_dropped():
    assert judge([]).action == "drop"


# -- recent shapes ----------------------------------------------------------

RECENT = drop_rule("recent", {"recent_shape": True})


def test_recent_shape_drops_a_window_seen_recently():
    window = [user("Deploy 42 finished in 13 minutes, 0 errors")]
    first = judge(window, drop_rules=[RECENT])
    assert first.action == "skip" and first.shape
    again = judge(window, drop_rules=[RECENT], recent_shapes=[first.shape])
    assert (again.action, again.rule) == ("drop", "recent")
    assert judge(window, drop_rules=[RECENT], recent_shapes=["0123456789abcdef"]).action == "skip"


def test_numbers_changing_keep_the_shape():
    first = judge([user("Deploy 42 finished in 13 minutes, 0 errors")], drop_rules=[RECENT])
    later = judge([user("Deploy 43 finished in 9 minutes, 2 errors")], drop_rules=[RECENT],
                  recent_shapes=[first.shape])
    assert later.shape == first.shape and later.action == "drop"
    other = judge([user("Rollback 43 finished in 9 minutes, 2 errors")], drop_rules=[RECENT],
                  recent_shapes=[first.shape])
    assert other.shape != first.shape and other.action == "skip"


def test_recent_shape_uses_the_shape_the_decision_reported_when_noise_was_stripped():
    # The caller passes back the shape it was given; the same window must then be recognised,
    # even though the window rules judge only the turns left after stripping.
    window = [assistant("Epoch 3/10 loss 0.41 ETA 5m"), user("Deploy 42 finished in 13 minutes")]
    first = judge(window, drop_rules=[HEARTBEAT_RULE, RECENT])
    assert first.action == "skip"
    again = judge(window, drop_rules=[HEARTBEAT_RULE, RECENT], recent_shapes=[first.shape])
    assert (again.action, again.rule) == ("drop", "recent")


def test_recent_shape_with_a_role_scoped_rule():
    recent_user = drop_rule("recent-user", {"recent_shape": True}, role="user")
    window = [user("status?"), assistant("All 12 jobs green")]
    first = judge(window, drop_rules=[recent_user])
    again = judge(window, drop_rules=[recent_user], recent_shapes=[first.shape])
    assert (again.action, again.rule) == ("drop", "recent-user")


# -- determinism ------------------------------------------------------------

def test_classify_is_deterministic_and_does_not_mutate_its_input():
    window = [assistant("Epoch 3/10 loss 0.41 ETA 5m"), user(FACT)]
    snapshot = [dict(turn) for turn in window]
    judge_ = classifier(revision_doc([HEARTBEAT_RULE], [CONSTRAINT, REASON])).classify
    first, second = judge_(window), judge_(window)
    assert first == second
    assert window == snapshot


# -- what a turn must have, checked before a turn rule runs --------------------

@pytest.mark.parametrize("when, window, stripped", [
    # any: a flag OR a pattern; a turn without the flag can still match the pattern
    ({"any": [{"turn_flag": "empty"}, match(r"\bsaved checkpoint\b")]},
     [user("saved checkpoint 4"), user("keep this")], [0]),
    # all: the flag AND a length; neither alone is enough
    ({"all": [{"turn_flag": "sidechain"}, {"chars": {"min": 10}}]},
     [{"role": "assistant", "sidechain": True, "content": "short"},
      {"role": "assistant", "sidechain": True, "content": "long enough to strip"}, user("keep")], [1]),
    # a turn shape repeats only in a window with enough turns
    ({"repeated_shape": {"unit": "turn", "min": 3}},
     [assistant("step 1 done"), assistant("step 2 done"), user("fine")], []),
    ({"repeated_shape": {"unit": "turn", "min": 3}},
     [assistant("step 1 done"), assistant("step 2 done"), assistant("step 3 done"), user("fine")], [0, 1, 2]),
])
def test_turn_rule_prechecks_never_hide_a_match(when, window, stripped):
    rules = revision_doc([drop_rule("noise", when, scope="turn")])
    fast, reference = classifier(rules), classifier(rules, optimize=False, prefilter=False)
    for judge_ in (fast, reference):
        decision = judge_.classify(window)
        gone = [i for i in range(len(window)) if f"turn {i} " in " ".join(decision.trace)]
        assert gone == stripped, decision.trace


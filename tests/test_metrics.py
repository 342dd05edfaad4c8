"""Metrics against hand-computed values. Decisions are built as data (Result is a plain
tuple: what the classifier's Decision carries minus its payload); the last tests run the
real classifier on a real rules file."""


import pytest

from evalkit import rules_text
from gate.evaluation import metrics
from gate.evaluation.evaluate import Result, classify_all, load_compiled, rules_at
from gate.evaluation.fixtures import Fixture


def fx(id_, label, expect_type=None, tags=(), todo=None):
    return Fixture(id_, [{"role": "user", "content": id_}], label, expect_type, "guards something", tuple(tags), todo)


def res(action, type_=None, rule=None, trace=(), error=None):
    return Result(action, type_, rule, tuple(trace), error)


STRIP = "turn 0 (tool) stripped by heartbeat"
NOISY = "signal noisy all_types+1"
SKIP = "skip: best score 1 < 3 (balanced)"

# (fixture, decision, what happened) — every outcome the scorecard names, hand-labelled.
CASES = [
    (fx("d1", "drop", tags=["heartbeat", "near_duplicate"]),
     res("drop", rule="heartbeat", trace=[STRIP, "every turn is noise"]), "dropped"),
    (fx("d2", "drop", tags=["heartbeat", "near_duplicate"]), res("skip", trace=[NOISY, SKIP]), "held_by_luck"),
    (fx("d3", "drop"), res("flag", "preference", "prefer", ["signal prefer preference+4"]), "leaked"),
    (fx("d4", "drop", tags=["secret"]), res("drop", rule="secret", trace=["window dropped by secret"]), "dropped"),
    (fx("x1", "exclude"), res("drop", rule="heartbeat", trace=[STRIP, "every turn is noise"]), "dropped"),
    (fx("x2", "exclude"), res("skip", trace=[NOISY, SKIP]), "held_back"),
    (fx("x3", "exclude"), res("flag", "decision", "decided", ["signal decided decision+4"]), "sent"),
    (fx("e1", "extract", "preference"), res("flag", "preference", "prefer", ["signal prefer preference+4"]),
     "flagged"),
    (fx("e2", "extract", "decision"),
     res("flag", "preference", "prefer", ["signal prefer preference+4", "signal decided decision+4"]), "mistyped"),
    (fx("e3", "extract", "decision"), res("flag", "decision", "decided", ["signal decided decision+4"]), "flagged"),
    (fx("e4", "extract", "convention", tags=["mixed"]),
     res("skip", trace=["turn 1 (tool) stripped by heartbeat", NOISY, SKIP]), "skipped"),
    (fx("e5", "extract", "insight", tags=["mixed", "hard_negative"]),
     res("drop", rule="heartbeat", trace=[STRIP, "every turn is noise"]), "hard_dropped"),
]
RULES = [("heartbeat", "drop", "turn", True, 1), ("secret", "drop", "window", True, 1),
         ("prefer", "signal", "window", True, 1), ("decided", "signal", "window", True, 1),
         ("noisy", "signal", "window", True, 1), ("dead", "signal", "window", True, 1),
         ("later", "signal", "window", False, 1)]


@pytest.fixture(scope="module")
def scores():
    return metrics.score([c[0] for c in CASES], [c[1] for c in CASES], RULES)


def test_outcome_names_each_case():
    for fixture, result, expected in CASES:
        assert metrics.outcome(fixture.label, result.action, result.type, fixture.expect_type) == expected


def test_headline_ratios_hand_computed(scores):
    # drop: 4 fixtures, 2 dropped by a rule, 1 skipped, 1 flagged.
    assert scores["hard_drop_recall"] == pytest.approx(3 / 4)
    assert scores["hard_drop_explicit"] == pytest.approx(2 / 4)
    # hard drops: d1, d4, x1 (exclude: safe, not counted against), e5 (extract: unsafe).
    assert scores["hard_drop_precision"] == pytest.approx(3 / 4)
    assert scores["fractions"]["hard_drop_precision"] == [3, 4]
    # extract: 5 fixtures, 3 flagged (e1, e2, e3).
    assert scores["extract_recall"] == pytest.approx(3 / 5)
    # flagged: d3, x3, e1, e2, e3.
    assert scores["flag_precision"] == pytest.approx(3 / 5)
    assert scores["extract_skipped"] == 1
    assert scores["extract_hard_dropped"] == 1
    # exclude: 3 fixtures, x3 flagged.
    assert scores["exclude_suppressed_early"] == pytest.approx(2 / 3)
    # flagged extract: e1 right, e2 wrong, e3 right.
    assert scores["type_accuracy"] == pytest.approx(2 / 3)
    # the contract's type_coverage: extract windows that got a type (e1, e2, e3) / extract windows.
    assert scores["type_coverage"] == pytest.approx(3 / 5)
    assert scores["fractions"]["type_coverage"] == [3, 5]
    # expected types: preference, decision, convention, insight; produced right: preference, decision.
    assert scores["types_produced"] == pytest.approx(2 / 4)
    assert scores["drop_leaked"] == 1 and scores["drop_held_by_luck"] == 1 and scores["errors"] == 0


def test_confusion_per_label(scores):
    assert scores["confusion"] == {
        "drop": {"drop": 2, "skip": 1, "flag": 1},
        "exclude": {"drop": 1, "skip": 1, "flag": 1},
        "extract": {"drop": 1, "skip": 1, "flag": 3},
    }


def test_per_type(scores):
    per_type = scores["per_type"]
    assert list(per_type) == ["preference", "decision", "convention", "insight"]
    assert per_type["preference"] == {"fixtures": 1, "flagged": 1, "right": 1, "recall": 1.0, "accuracy": 1.0,
                                      "predicted": 3, "precision": pytest.approx(1 / 3), "mistyped_as": {}}
    assert per_type["decision"] == {"fixtures": 2, "flagged": 2, "right": 1, "recall": 1.0, "accuracy": 0.5,
                                    "predicted": 2, "precision": 0.5, "mistyped_as": {"preference": 1}}
    # Nothing flagged: recall is a measured 0, accuracy and precision have no denominator.
    assert per_type["convention"]["recall"] == 0.0
    assert per_type["convention"]["accuracy"] is None
    assert per_type["convention"]["precision"] is None


def test_per_rule_confusion(scores):
    rules = scores["per_rule"]
    heartbeat = rules["heartbeat"]
    assert heartbeat["decided"] == {"drop": 1, "exclude": 1, "extract": 1}
    assert (heartbeat["right"], heartbeat["wrong"]) == (2, 1)
    # It stripped a turn in d1, x1, e5 and in the mixed window e4 it did not decide.
    assert heartbeat["stripped"] == {"drop": 1, "exclude": 1, "extract": 2}
    assert rules["secret"]["decided"] == {"drop": 1, "exclude": 0, "extract": 0}
    prefer = rules["prefer"]
    assert prefer["decided"] == {"drop": 1, "exclude": 0, "extract": 2}
    assert (prefer["right"], prefer["wrong"], prefer["mistyped"]) == (1, 1, 1)
    assert (rules["decided"]["right"], rules["decided"]["wrong"]) == (1, 1)
    none = rules["(none)"]
    assert none["decided"] == {"drop": 1, "exclude": 1, "extract": 1}
    assert (none["right"], none["wrong"], none["lucky"]) == (2, 1, 1)
    # Rules that decided nothing still have a row, so a dead rule is visible.
    assert rules["dead"]["decided"] == {"drop": 0, "exclude": 0, "extract": 0}
    assert rules["later"]["active"] is False


def test_per_signal_rates_among_windows_that_reached_signals(scores):
    signals = scores["per_signal"]
    # Not dropped: d2 d3 x2 x3 (rest: 4) and e1 e2 e3 e4 (extract: 4).
    prefer = signals["prefer"]
    assert (prefer["fired_extract"], prefer["seen_extract"], prefer["fired_rest"], prefer["seen_rest"]) == (2, 4, 1, 4)
    assert prefer["extract_rate"] == 0.5 and prefer["rest_rate"] == 0.25 and prefer["lift"] == 2.0
    assert prefer["decided"] == 3 and prefer["note"] == ""
    noisy = signals["noisy"]
    assert (noisy["extract_rate"], noisy["rest_rate"]) == (0.25, 0.5)
    assert "weighs nothing" in noisy["note"]
    assert signals["dead"]["note"] == "never fired"
    assert signals["dead"]["extract_rate"] == 0.0
    assert signals["later"]["note"] == "inactive at this level"


def test_suppressor_signals_are_judged_the_other_way_round():
    fixtures = [fx("x1", "exclude"), fx("x2", "exclude"),
                fx("e1", "extract", "decision"), fx("e2", "extract", "insight")]
    one_off = "signal one-off all_types-3"
    results = [res("skip", trace=[one_off]), res("skip", trace=[one_off]), res("skip"), res("skip", trace=[one_off])]
    rules = [("one-off", "signal", "window", True, -1), ("hedge", "signal", "window", True, -1)]
    signals = metrics.score(fixtures, results, rules)["per_signal"]
    # Fires on half the knowledge and all the rest: as a suppressor that is working.
    assert signals["one-off"]["role"] == "suppress"
    assert (signals["one-off"]["extract_rate"], signals["one-off"]["rest_rate"]) == (0.5, 1.0)
    assert signals["one-off"]["note"] == ""
    hedge = ["signal hedge all_types-2"]
    results = [res("skip"), res("skip", trace=hedge), res("skip", trace=hedge), res("skip", trace=hedge)]
    hedge = metrics.score(fixtures, results, rules)["per_signal"]["hedge"]
    assert (hedge["extract_rate"], hedge["rest_rate"]) == (1.0, 0.5)
    assert hedge["note"] == "suppressor fires as often on extract windows as on the rest: weighs nothing"


def test_per_tag(scores):
    tags = scores["per_tag"]
    assert tags["heartbeat"] == {"fixtures": 2, "right": 2, "rate": 1.0, "labels": {"drop": 2},
                                 "outcomes": {"dropped": 1, "held_by_luck": 1}}
    assert tags["mixed"]["rate"] == 0.0
    assert tags["mixed"]["outcomes"] == {"skipped": 1, "hard_dropped": 1}
    assert list(tags) == sorted(tags)


def test_empty_classes_are_not_measured_never_one_or_zero():
    fixtures = [fx("x1", "exclude"), fx("x2", "exclude")]
    results = [res("skip"), res("skip")]
    scores = metrics.score(fixtures, results)
    for name in ("hard_drop_recall", "hard_drop_explicit", "hard_drop_precision", "extract_recall",
                 "flag_precision", "type_accuracy", "type_coverage", "types_produced"):
        assert scores[name] is None, name
        assert scores["fractions"][name][1] == 0
    assert scores["exclude_suppressed_early"] == 1.0
    assert scores["extract_skipped"] == 0 and scores["extract_hard_dropped"] == 0
    assert scores["per_type"] == {}


def test_no_fixtures_at_all():
    scores = metrics.score([], [])
    assert all(scores[name] is None for name in metrics.OFFLINE_RATIOS)
    assert scores["confusion"]["extract"] == {"drop": 0, "skip": 0, "flag": 0}


def test_extract_never_flagged_is_a_measured_zero_but_accuracy_is_unmeasured():
    fixtures = [fx("e1", "extract", "decision"), fx("e2", "extract", "runbook")]
    scores = metrics.score(fixtures, [res("skip"), res("skip")])
    assert scores["extract_recall"] == 0.0
    assert scores["type_coverage"] == 0.0
    assert scores["types_produced"] == 0.0
    assert scores["type_accuracy"] is None
    assert scores["flag_precision"] is None


def test_errors_are_counted_and_kept_out_of_signal_rates():
    fixtures = [fx("e1", "extract", "decision"), fx("d1", "drop")]
    results = [res("skip", rule="slow", trace=["slow: pattern timed out; window not sent"],
                   error="timeout in rule 'slow'"), res("skip", trace=[NOISY, SKIP])]
    scores = metrics.score(fixtures, results,
                           [("slow", "drop", "window", True, 1), ("noisy", "signal", "window", True, 1)])
    assert scores["errors"] == 1
    assert scores["per_rule"]["slow"]["errors"] == 1
    assert scores["per_signal"]["noisy"]["seen_extract"] == 0
    assert scores["per_signal"]["noisy"]["extract_rate"] is None
    assert scores["per_signal"]["noisy"]["rest_rate"] == 1.0


def test_trace_rules():
    stripped, fired = metrics.trace_rules(("turn 0 (tool) stripped by heartbeat", "turn 2 (user) stripped by ci-status",
                                           "signal prefer preference+4 all_types+1", "flag preference: 5 >= 3"))
    assert stripped == ["heartbeat", "ci-status"]
    assert fired == ["prefer"]


def test_check_floors():
    scores = {"hard_drop_recall": 0.95, "extract_recall": 0.79, "type_accuracy": None,
              "fractions": {"extract_recall": [79, 100]}}
    failures = metrics.check_floors(scores, {"hard_drop_recall": 0.95, "extract_recall": 0.8, "type_accuracy": 0.5,
                                             "live_extract_recall": 0.9})
    assert len(failures) == 2  # equal to the floor passes; the live floor is not checked offline
    assert failures[0].startswith("extract_recall: 0.790 (79/100) is below the floor 0.8")
    assert failures[1].startswith("type_accuracy: not measured")


def test_regressed_direction():
    assert metrics.regressed("extract_recall", 0.9, 0.85)
    assert not metrics.regressed("extract_recall", 0.85, 0.9)
    assert metrics.regressed("extract_hard_dropped", 1, 2)  # counts: more is worse
    assert not metrics.regressed("extract_hard_dropped", 2, 1)
    assert metrics.regressed("extract_recall", 0.9, None)
    assert not metrics.regressed("extract_recall", None, 0.1)


RULES_YAML = rules_text({"hard_drop_recall": 0.95, "extract_recall": 0.8}, revision="m1")


def test_scores_from_the_real_classifier(tmp_path):
    path = tmp_path / "rules.yaml"
    path.write_text(RULES_YAML)
    revision, classifier = load_compiled(str(path))

    def turn(text, role="user"):
        return [{"role": role, "content": text}]

    fixtures = [
        Fixture("hb", turn("Epoch 3/10 loss 0.41 ETA 5m", "tool"), "drop", None, "a heartbeat frame"),
        Fixture("hb-luck", turn("still running, will check again"), "drop", None, "no drop rule for it"),
        Fixture("pref", turn("I prefer small PRs"), "extract", "preference", "a preference"),
        Fixture("mixed", turn("Epoch 4/10 loss 0.39") + turn("I prefer rebase over merge")
                + turn("Epoch 5/10 loss 0.37", "tool"), "extract", "preference", "fact between heartbeats"),
        Fixture("dec", turn("We moved billing to Postgres for good."), "extract", "decision", "no cue word"),
    ]
    results = classify_all(classifier, [f.window for f in fixtures], ["balanced"])["balanced"]
    scores = metrics.score(fixtures, results, rules_at(classifier, "balanced"))
    assert [r.action for r in results] == ["drop", "skip", "flag", "flag", "skip"]
    assert scores["hard_drop_recall"] == 1.0
    assert scores["hard_drop_explicit"] == 0.5
    assert scores["extract_recall"] == pytest.approx(2 / 3)
    assert scores["type_accuracy"] == 1.0
    assert scores["type_coverage"] == pytest.approx(2 / 3)  # pref and mixed got a type; dec was skipped
    assert scores["types_produced"] == 0.5
    assert scores["per_rule"]["heartbeat"]["stripped"] == {"drop": 1, "exclude": 0, "extract": 1}
    assert scores["per_signal"]["prefer"]["fired_extract"] == 2


def test_parallel_classification_matches_sequential(tmp_path):
    path = tmp_path / "rules.yaml"
    path.write_text(RULES_YAML)
    _, classifier = load_compiled(str(path))
    windows = [[{"role": "user", "content": text}] for text in
               ("Epoch 3/10 loss 0.41 ETA 5m", "I prefer small PRs", "nothing to see", "")] * 1100
    sequential = classify_all(classifier, windows, ["balanced", "aggressive"], jobs=1)
    parallel = classify_all(classifier, windows, ["balanced", "aggressive"], jobs=2)
    assert parallel == sequential


def test_a_drop_window_whose_paste_a_rule_cut_is_contained_not_held_by_luck():
    # The rule cut the paste; the one-off words left are skipped. The noise is gone by a rule,
    # whatever flag rule later matches the words: it counts toward hard_drop_explicit. A span
    # rule's cut (harness markup) is not the window's noise going: still held by luck.
    cut = res("skip", trace=["turn 0 (user): paste cut out by logs, the person's lines kept", SKIP])
    spans = res("skip", trace=["turn 0 (user): spans cut out by harness-markup", SKIP])
    untouched = res("skip", trace=[NOISY, SKIP])
    fixtures = [fx("cut", "drop"), fx("spans", "drop"), fx("lucky", "drop")]
    scores = metrics.score(fixtures, [cut, spans, untouched])
    assert [metrics.outcome("drop", r.action, None, None, r.trace) for r in (cut, spans, untouched)] == [
        "contained", "held_by_luck", "held_by_luck"]
    assert scores["hard_drop_explicit"] == pytest.approx(1 / 3)
    assert scores["drop_held_by_luck"] == 2 and scores["hard_drop_recall"] == 1.0
    # the same cut under a window that holds knowledge is still the signals' miss
    assert metrics.outcome("extract", "skip", None, "decision", cut.trace) == "skipped"


def test_a_pasted_turn_a_rule_stripped_whole_is_contained_but_a_tool_result_is_not(tmp_path):
    # The person pastes progress frames, then says "look" in a message of its own: the rule
    # strips the pasted turn, the remark is skipped. That is the cut above with the remark in
    # another turn: contained. A tool's result stripped removes nothing that would be sent (tool
    # results never are), so a command beside it skipped is still held back by luck.
    path = tmp_path / "rules.yaml"
    path.write_text(RULES_YAML)
    _, classifier = load_compiled(str(path))
    frames = "Epoch 3/10 loss 0.41 ETA 5m\nEpoch 4/10 loss 0.39 ETA 4m"
    tool_run = [{"role": "user", "content": "rerun it"},
                {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "Bash",
                                                   "input": {"command": "python train.py"}}]},
                {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": frames}]}]
    fixtures = [
        Fixture("pasted-then-look", [{"role": "user", "content": frames}, {"role": "user", "content": "look"}],
                "drop", None, "a paste, then a bare remark"),
        Fixture("tool-result-only", tool_run, "drop", None, "the noise is only in a tool's result"),
        Fixture("knowledge-after-paste", [{"role": "user", "content": frames},
                                          {"role": "user", "content": "we should cache the dataset"}],
                "extract", "decision", "the signals' miss, not containment"),
    ]
    results = classify_all(classifier, [f.window for f in fixtures], ["balanced"])["balanced"]
    assert [r.action for r in results] == ["skip", "skip", "skip"]
    assert any("turn 0 (user) stripped by heartbeat" == line for line in results[0].trace)
    names = [metrics.outcome(f.label, r.action, r.type, f.expect_type, r.trace, f.window)
             for f, r in zip(fixtures, results)]
    assert names == ["contained", "held_by_luck", "skipped"]
    # without the window the evaluator cannot tell the person's turn from a tool's: luck, as before
    assert metrics.outcome("drop", "skip", None, None, results[0].trace) == "held_by_luck"
    scores = metrics.score(fixtures, results)
    assert scores["hard_drop_explicit"] == 0.5 and scores["drop_held_by_luck"] == 1

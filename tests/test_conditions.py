"""Every condition kind, true and false, at turn and at window scope where they differ.

A condition is judged through a one-rule revision: a window rule drops the
window when it holds; a turn rule strips the turns it holds for.
"""

import pytest

from enginekit import assistant, classifier, contents, drop_rule, match, revision_doc, user
from gate.language.errors import GateError


def window_fires(condition, window, *, role="any", **top) -> bool:
    decision = classifier(revision_doc([drop_rule("r", condition, scope="window", role=role)], **top)).classify(window)
    assert decision.error is None, decision.error
    return decision.action == "drop" and decision.rule == "r"


def kept(condition, window, *, role="any", **top) -> list:
    """What a turn rule with this condition leaves of the window ([] when every turn is noise)."""
    decision = classifier(revision_doc([drop_rule("r", condition, scope="turn", role=role)], **top)).classify(window)
    assert decision.error is None, decision.error
    if decision.action == "drop":
        assert decision.rule == "r"
        return []
    return contents(decision)


def fires(condition, text, **top) -> bool:
    return window_fires(condition, [user(text)], **top)


HEARTBEAT = "Epoch 3/10 loss 0.41 ETA 5m\nEpoch 4/10 loss 0.39 ETA 4m"
FACT = "We moved the cache to Redis because Memcached dropped keys under load.\nIt must stay that way."


# -- match ------------------------------------------------------------------

@pytest.mark.parametrize("condition, text, expected", [
    (match(r"\bdeploy\b"), "we deploy on fridays", True),
    (match(r"\bdeploy\b"), "the redeployment failed", False),
    (match(r"\bdeploy\b"), "DEPLOY now", True),  # case-insensitive by default
    (match(r"\bdeploy\b", case_sensitive=True), "DEPLOY now", False),
    (match(r"\bdeploy\b", case_sensitive=True), "deploy now", True),
    (match([r"\bfoo\b", r"\bbar\b"]), "a bar here", True),  # any of several patterns
    (match([r"\bfoo\b", r"\bbar\b"]), "a baz here", False),
    (match(r"^done$"), "first line\ndone\nlast line", True),  # ^ and $ are line anchors
    (match(r"^done$"), "not done yet", False),
    (match(r"\b{{hb_terms}}\b"), "ETA 5m", True),  # a vocabulary reference
    (match(r"\b{{hb_terms}}\b"), "beta release", False),
    (match(r"\b{{hb_terms}}\b"), "throughput 12 it/s", True),  # a term with a slash, escaped literally
    (match(r"^{{num}} files changed$"), "12 files changed", True),  # a fragment reference
    (match(r"^{{num}} files changed$"), "many files changed", False),
])
def test_match(condition, text, expected):
    assert fires(condition, text) is expected


def test_match_keywords_gate_the_regex():
    condition = match(r"a.c", keywords=["abc"])
    assert fires(condition, "the abc case")
    # the regex alone would match "axc"; the prefilter says a keyword must be present
    assert not fires(condition, "the axc case")


def test_vocabulary_terms_with_spaces_match_any_whitespace():
    vocabularies = {"progress": {"description": "p", "terms": ["chunks processed"]}}
    condition = match(r"{{progress}}", keywords=["{{progress}}"])
    assert fires(condition, "42 chunks\n   processed so far", vocabularies=vocabularies)
    assert not fires(condition, "42 chunks were not processed", vocabularies=vocabularies)


def test_match_at_turn_scope_strips_only_the_matching_turn():
    window = [assistant("Build finished in 12s"), user(FACT)]
    condition = match(r"^build finished in {{num}}s$")
    assert kept(condition, window) == [FACT]
    assert window_fires(condition, window)  # the same condition at window scope drops it all


# -- count ------------------------------------------------------------------

@pytest.mark.parametrize("bounds, text, expected", [
    ({"min": 3}, "TODO a\nTODO b\nTODO c", True),
    ({"min": 3}, "TODO a\nTODO b", False),
    ({"max": 0}, "nothing to do", True),
    ({"max": 0}, "TODO one", False),
    ({"min": 2, "max": 3}, "TODO TODO", True),
    ({"min": 2, "max": 3}, "TODO TODO TODO TODO", False),  # past max, even when counting stops early
])
def test_count(bounds, text, expected):
    assert fires({"count": {"pattern": r"\btodo\b", **bounds}}, text) is expected


def test_count_with_absent_keyword_counts_zero():
    condition = {"count": {"pattern": r"\?", "keywords": ["?"], "max": 0}}
    assert fires(condition, "a plain statement")
    assert not fires(condition, "is it?")
    assert not fires({"count": {"pattern": r"\?", "keywords": ["?"], "min": 1}}, "a plain statement")


def test_count_sums_turns_at_window_scope_but_not_at_turn_scope():
    window = [user("retry the job"), assistant("retry scheduled")]
    condition = {"count": {"pattern": r"\bretry\b", "min": 2}}
    assert window_fires(condition, window)
    assert kept(condition, window) == ["retry the job", "retry scheduled"]


# -- line_share -------------------------------------------------------------

HB_LINE = {"pattern": r"\b{{hb_terms}}\b.*{{num}}", "keywords": ["{{hb_terms}}"]}


@pytest.mark.parametrize("spec, text, expected", [
    ({"min_share": 0.6}, "Epoch 1 loss 0.5\nEpoch 2 loss 0.4\nstill going", True),  # 2 of 3 lines
    ({"min_share": 0.6}, "Epoch 1 loss 0.5\nwe changed the optimizer\nbecause it diverged", False),  # 1 of 3
    ({"min_share": 0.5, "min_lines": 3}, "Epoch 1 loss 0.5\nEpoch 2 loss 0.4", False),  # too few lines
    ({"min_share": 0.5, "min_lines": 2}, "Epoch 1 loss 0.5\nEpoch 2 loss 0.4", True),
    ({"max_share": 0.2}, "Epoch 1 loss 0.5\nprose\nmore prose", False),
    ({"max_share": 0.4}, "Epoch 1 loss 0.5\nprose\nmore prose", True),
    ({"max_share": 0.2}, "no heartbeat words at all", True),  # keyword absent: share 0
    ({"min_share": 0.6}, "\n\nEpoch 1 loss 0.5\n\n\nEpoch 2 loss 0.4\n\nok\n", True),  # blank lines do not count
])
def test_line_share(spec, text, expected):
    assert fires({"line_share": {**HB_LINE, **spec}}, text) is expected


def test_line_share_ignore_lines_count_neither_way():
    text = "Latest from the training log:\nEpoch 1 loss 0.5\nEpoch 2 loss 0.4"
    plain = {"line_share": {**HB_LINE, "min_share": 0.9}}
    assert not fires(plain, text)  # 2 of 3 lines
    lead_in = {"line_share": {**HB_LINE, "min_share": 0.9, "ignore": r"^latest from .*:$"}}
    assert fires(lead_in, text)  # 2 of 2 once the lead-in is set aside
    assert not fires(lead_in, "Latest from the training log:")  # nothing left to judge


def test_line_share_miss_lines_count_as_lines_that_do_not_match():
    sentence = r"^(?>[^\n]*?\b(?:the|so|we|to|of|is)\b){3}"
    frame = "Epoch 1 loss 0.5"
    prose = "the epoch 9 checkpoint is the one we ship, loss 0.31"  # matches the pattern, reads as a sentence
    plain = {"line_share": {**HB_LINE, "min_share": 0.6}}
    guarded = {"line_share": {**HB_LINE, "min_share": 0.6, "miss": sentence}}
    assert fires(plain, prose) and not fires(guarded, prose)  # one line of one, until it reads as a sentence
    assert fires(guarded, f"{frame}\nEpoch 2 loss 0.4")  # frames still count
    # a miss line still counts as a line (unlike ignore): 1 frame of 2 lines is below 0.6
    assert not fires(guarded, f"{frame}\n{prose}")
    assert fires({"line_share": {**HB_LINE, "min_share": 0.6, "ignore": sentence}}, f"{frame}\n{prose}")
    # with max_share, a miss line lowers the share
    assert fires({"line_share": {**HB_LINE, "max_share": 0.0, "miss": sentence}}, prose)


def test_line_share_is_per_turn_at_turn_scope():
    window = [assistant(HEARTBEAT), user(FACT)]
    condition = {"line_share": {**HB_LINE, "min_share": 0.6}}
    assert not window_fires(condition, window)  # 2 of 4 lines in the window
    assert kept(condition, window) == [FACT]  # the heartbeat turn alone is all progress


# A traceback: its frames and exception count by themselves; the code under a frame and the
# message below the exception are indented under them, and count only as their continuations.
FRAME = r'^(?:File "[^"]+", line \d+|(?:\w+\.)*\w*(?:Error|Timeout):)'
TRACE = ('  File "app.py", line 3, in main\n'
         '    return run(job)\n'
         '  File "jobs.py", line 9, in run\n'
         '    raise Timeout(job.id)\n'
         'jobs.Timeout: job 41 timed out\n'
         '    after 3 retries')
UNOPTIMIZED = {"optimize": False, "prefilter": False}


def fires_each_way(condition, window) -> bool:
    """The judgement of the optimized classifier, asserted to be the unoptimized one's too."""
    rule = [drop_rule("r", condition, scope="window")]
    found = classifier(revision_doc(rule)).classify(window).action == "drop"
    assert found is (classifier(revision_doc(rule), **UNOPTIMIZED).classify(window).action == "drop")
    return found


@pytest.mark.parametrize("case_sensitive", [False, True])
def test_line_share_continuations_count_the_lines_indented_under_a_counted_line(case_sensitive):
    share = {"pattern": FRAME, "min_share": 0.6, "case_sensitive": case_sensitive}
    assert not fires_each_way({"line_share": share}, [user(TRACE)])  # 3 of 6 lines
    assert fires_each_way({"line_share": {**share, "continuations": True}}, [user(TRACE)])  # 6 of 6


def test_line_share_continuations_need_a_deeper_indent_under_a_line_that_counts():
    share = {"pattern": FRAME, "min_share": 0.6, "continuations": True}
    # the same lines, flush left: nothing continues anything (2 of 4)
    flush = "\n".join(line.strip() for line in TRACE.splitlines()[:4])
    assert not fires_each_way({"line_share": share}, [user(flush)])
    # indented under a line that does not count, a line counts only by itself (1 of 4)
    under_prose = 'we saw this twice\n    return run(job)\n    raise Timeout(job.id)\n  File "app.py", line 3'
    assert not fires_each_way({"line_share": {**share, "min_share": 0.5}}, [user(under_prose)])
    assert fires_each_way({"line_share": {**share, "min_share": 0.25}}, [user(under_prose)])


def test_line_share_continuations_leave_a_sentence_and_an_ignored_head_alone():
    sentence = r"^(?>[^\n]*?\b(?:the|so|we|to|of|is)\b){3}"
    trace = 'jobs.Timeout: job 41 timed out\n    so we think it is the proxy\n    after 3 retries'
    share = {"pattern": FRAME, "min_share": 0.9, "continuations": True}
    assert fires_each_way({"line_share": share}, [user(trace)])
    assert not fires_each_way({"line_share": {**share, "miss": sentence}}, [user(trace)])  # 2 of 3
    # a head that counts neither way (ignored) passes nothing on: 1 of 2 once it is set aside
    led = 'latest:\n    return run(job)\n  File "app.py", line 3'
    assert not fires_each_way({"line_share": {**share, "ignore": r":$", "min_share": 0.6}}, [user(led)])


def test_line_share_continuations_stop_at_a_turns_end():
    frame, code = '  File "app.py", line 3, in main', "    return run(job)"
    share = {"pattern": FRAME, "min_share": 0.6, "continuations": True}
    assert fires_each_way({"line_share": share}, [user(f"{frame}\n{code}")])  # 2 of 2
    assert not fires_each_way({"line_share": share}, [user(frame), user(code)])  # 1 of 2: no line continues another turn


# -- prose_words, chars, turns ----------------------------------------------

CODE_HEAVY = "see:\n```python\ndef compute(values):\n    return sum(values) / len(values)\n```"


@pytest.mark.parametrize("bounds, text, expected", [
    ({"max": 3}, CODE_HEAVY, True),  # only "see" is prose; the fenced code is not
    ({"max": 3}, "see: def compute values return sum values len values", False),
    ({"min": 5}, "we always squash commits before merging", True),
    ({"min": 5}, "ok thanks", False),
    ({"min": 1}, "42 17 3.5", False),  # numbers are not words
])
def test_prose_words(bounds, text, expected):
    assert fires({"prose_words": bounds}, text) is expected


@pytest.mark.parametrize("bounds, text, expected", [
    ({"min": 10}, "short", False),
    ({"min": 10}, "a longer message", True),
    ({"max": 5}, "short", True),
    ({"max": 4}, "short", False),
])
def test_chars(bounds, text, expected):
    assert fires({"chars": bounds}, text) is expected


def test_turns_at_window_scope():
    condition = {"turns": {"min": 3}}
    assert window_fires(condition, [user("a"), assistant("b"), user("c")])
    assert not window_fires(condition, [user("a"), assistant("b")])
    assert window_fires({"turns": {"max": 1}}, [user("a")])


def test_turns_at_turn_scope_counts_one():
    window = [user("a"), assistant("b")]
    assert kept({"turns": {"min": 2}}, window) == ["a", "b"]
    assert kept({"turns": {"max": 1}}, window) == []  # every turn is noise: the window is dropped


# -- role -------------------------------------------------------------------

def test_role_condition():
    assert window_fires({"role": "assistant"}, [assistant("a"), assistant("b")])
    assert not window_fires({"role": "assistant"}, [assistant("a"), user("b")])
    assert window_fires({"role": ["assistant", "tool"]}, [assistant("a"), {"role": "tool", "content": "b"}])
    assert window_fires({"role": "other"}, [{"role": "narrator", "content": "a"}])  # unknown roles are 'other'
    assert kept({"role": "assistant"}, [assistant("a"), user("b"), assistant("c")]) == ["b"]


def test_role_aliases_are_normalized():
    assert window_fires({"role": "user"}, [{"role": "Human", "content": "a"}, {"role": "developer", "content": "b"}])


# -- turn_flag --------------------------------------------------------------

TOOL_USE = {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "bash", "input": {"cmd": "ls"}}]}
TOOL_RESULT = {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "a.txt"}]}
TOOL_WITH_TEXT = {"role": "assistant", "content": [{"type": "text", "text": "Listing files because the build needs them."},
                                                   {"type": "tool_use", "id": "t2", "name": "bash", "input": {}}]}


@pytest.mark.parametrize("flag, turn, expected", [
    ("tool_only", TOOL_USE, True),
    ("tool_only", TOOL_RESULT, True),
    ("tool_only", {"role": "tool", "content": "exit 0"}, True),
    ("tool_only", TOOL_WITH_TEXT, False),
    ("tool_only", user("run the tests"), False),
    ("sidechain", {"role": "assistant", "content": "subagent notes", "isSidechain": True}, True),
    ("sidechain", {"role": "assistant", "content": "subagent notes", "sidechain": True}, True),
    ("sidechain", assistant("main thread"), False),
    ("empty", user(""), True),
    ("empty", {"role": "user", "content": None}, True),
    ("empty", {"role": "user"}, True),
    ("empty", user("   \n "), True),
    ("empty", user("x"), False),
    ("json_only", assistant('{"status": "ok", "count": 3}'), True),
    ("json_only", assistant('  [1, 2, {"a": null}]  '), True),
    ("json_only", assistant('the status is {"ok": true}'), False),
    ("json_only", assistant("{not json at all}"), False),
])
def test_turn_flag(flag, turn, expected):
    assert window_fires({"turn_flag": flag}, [turn]) is expected


def test_turn_flag_needs_every_turn_at_window_scope():
    window = [TOOL_USE, user("run the tests"), TOOL_RESULT]
    assert not window_fires({"turn_flag": "tool_only"}, window)
    assert kept({"turn_flag": "tool_only"}, window) == ["run the tests"]


# -- structure --------------------------------------------------------------

README = "# Project\n\nSome intro.\n\n## Setup\n\n- install it\n- run it\n- test it\n"
CONFIG = "host: db.internal\nport: 5432\nuser: app\n"
TABLE = "| name | value |\n|------|-------|\n| a | 1 |\n"
FENCED = "here:\n```\n# not a heading\n- not a bullet\nline three\n```\n"


@pytest.mark.parametrize("counts, text, expected", [
    ({"headings": {"min": 2}}, README, True),
    ({"headings": {"min": 2}}, "# One heading\nand prose", False),
    ({"headings": {"min": 1}}, FENCED, False),  # a '#' line inside a fence is code, not a heading
    ({"bullets": {"min": 3}}, README, True),
    ({"bullets": {"min": 3}}, FENCED, False),
    ({"numbered": {"min": 2}}, "1. build\n2. deploy\n", True),
    ({"numbered": {"min": 2}}, "1. build only", False),
    ({"code_fences": {"min": 1}}, FENCED, True),
    ({"code_fences": {"min": 1}}, README, False),
    ({"fenced_lines": {"min": 3}}, FENCED, True),
    ({"fenced_lines": {"min": 4}}, FENCED, False),
    ({"table_rows": {"min": 3}}, TABLE, True),
    ({"table_rows": {"min": 3}}, "a | b", False),
    ({"config_lines": {"min": 3}}, CONFIG, True),
    ({"config_lines": {"min": 3}}, "Note: we pin the port because the proxy expects it.", False),
    ({"lines": {"max": 1}}, "one line", True),
    ({"lines": {"max": 1}}, "one\n\ntwo", False),
    ({"headings": {"min": 1}, "bullets": {"min": 3}}, README, True),  # every count must hold
    ({"headings": {"min": 1}, "bullets": {"min": 4}}, README, False),
])
def test_structure(counts, text, expected):
    assert fires({"structure": counts}, text) is expected


# -- repeated_shape ---------------------------------------------------------

def chunks(*numbers):
    return [assistant(f"Processing chunk {n} of 40 ({n * 2.5:.1f}%)") for n in numbers]


def test_repeated_turn_shape():
    condition = {"repeated_shape": {"unit": "turn", "min": 3}}
    assert window_fires(condition, chunks(3, 4, 5))  # numbers change, the shape does not
    assert not window_fires(condition, chunks(3, 4))
    different = [assistant("Processing chunk 3 of 40"), assistant("Uploading chunk 4 of 40"),
                 assistant("Verifying chunk 5 of 40")]
    assert not window_fires(condition, different)


def test_repeated_turn_shape_min_share():
    window = chunks(1, 2, 3) + [user("why is it slow"), user("check the disk"), user("and the network")]
    assert window_fires({"repeated_shape": {"unit": "turn", "min": 3}}, window)
    assert not window_fires({"repeated_shape": {"unit": "turn", "min": 3, "min_share": 0.6}}, window)
    assert window_fires({"repeated_shape": {"unit": "turn", "min": 3, "min_share": 0.5}}, window)


def test_repeated_shape_ignores_ids_and_hashes():
    window = [assistant(f"pushed commit {sha} to origin") for sha in ("a1b2c3d4e5f", "0f9e8d7c6b5", "1234abcd987")]
    assert window_fires({"repeated_shape": {"unit": "turn", "min": 3}}, window)


def test_repeated_line_shape_at_turn_scope():
    condition = {"repeated_shape": {"unit": "line", "min": 3}}
    lines = "\n".join(f"wrote shard {i} in {i * 3}ms" for i in range(1, 5))
    assert kept(condition, [assistant(lines), user(FACT)]) == [FACT]
    assert not window_fires({"repeated_shape": {"unit": "turn", "min": 2}}, [assistant(lines)])


def frames(count):
    """A load tester's frame of two lines, printed again with new numbers."""
    return "\n".join(f"running ({i}.0s), {i * 3}/120 VUs, {i * 40} complete\nramp [ {i}% ] {i * 3}/120 VUs {i}.0s/300s"
                     for i in range(1, count + 1))


def test_every_shape_counts_each_line_of_a_repeated_frame():
    # each of the frame's two lines is half the paste: the most repeated shape alone covers 0.5
    top_only = {"repeated_shape": {"unit": "line", "min": 3, "min_share": 0.6}}
    every = {"repeated_shape": {"unit": "line", "min": 3, "min_share": 0.6, "every_shape": True}}
    assert not window_fires(top_only, [user(frames(4))])
    assert window_fires(every, [user(frames(4))])
    assert not window_fires(every, [user(frames(2))])  # no shape seen three times


def test_every_shape_counts_no_line_repeated_word_for_word():
    # a person's steps per host, each followed by the same check: only the steps' shape is a frame
    steps = "\n".join(f"ssh db-{i} && restart pgbouncer\nwatch the lag panel until it is green" for i in (1, 2, 3))
    every = {"repeated_shape": {"unit": "line", "min": 3, "min_share": 0.6, "every_shape": True}}
    assert not window_fires(every, [user(steps)])  # 3 of 6 lines, not the 6 of a frame
    half = {"repeated_shape": {**every["repeated_shape"], "min_share": 0.5}}
    assert window_fires(half, [user(steps)])  # the steps' own shape is counted


def test_every_shape_spares_the_person_beside_a_frame():
    every = {"repeated_shape": {"unit": "line", "min": 3, "min_share": 0.6, "every_shape": True, "spare": r"\?$"}}
    ask = "why does the ramp stall at 40 VUs?"
    assert kept(every, [user(f"{ask}\n{frames(4)}")]) == [ask]


def test_a_line_miss_matches_is_in_no_repeated_shape():
    # a person's steps, one line per host: one shape, three times, with new numbers
    steps = "\n".join(f"ssh db-{i}, restart pgbouncer, wait till lag < 5s" for i in (1, 2, 3))
    repeated = {"repeated_shape": {"unit": "line", "min": 3, "min_share": 0.6}}
    assert window_fires(repeated, [user(steps)])
    missed = {"repeated_shape": {**repeated["repeated_shape"], "miss": r",[ ]restart\b"}}
    assert not window_fires(missed, [user(steps)])
    assert window_fires(missed, [user("\n".join(f"wrote shard {i} in {i * 3}ms" for i in range(1, 5)))])


def test_every_shape_needs_lines():
    with pytest.raises(GateError) as error:
        classifier(revision_doc([drop_rule("frames", {"repeated_shape": {"unit": "turn", "min": 3, "every_shape": True}})]))
    assert "unit: line" in str(error.value)
    with pytest.raises(GateError) as error:
        classifier(revision_doc([drop_rule("frames", {"repeated_shape": {"unit": "turn", "min": 3, "miss": "x"}})]))
    assert "unit: line" in str(error.value)


# -- all / any / not / unless -----------------------------------------------

A, B = match(r"\balpha\b"), match(r"\bbeta\b")


@pytest.mark.parametrize("condition, text, expected", [
    ({"all": [A, B]}, "alpha and beta", True),
    ({"all": [A, B]}, "alpha only", False),
    ({"any": [A, B]}, "beta only", True),
    ({"any": [A, B]}, "gamma only", False),
    ({"not": A}, "gamma", True),
    ({"not": A}, "alpha", False),
    ({"all": [{"any": [A, B]}, {"not": match(r"\bgamma\b")}]}, "beta here", True),
    ({"all": [{"any": [A, B]}, {"not": match(r"\bgamma\b")}]}, "beta and gamma", False),
    ({"not": {"not": A}}, "alpha", True),
])
def test_combinators(condition, text, expected):
    assert fires(condition, text) is expected


def test_keyword_prefilter_does_not_hide_not_or_keywordless_any():
    # A `not` of a keyword-gated leaf is true exactly when the keyword is absent.
    assert fires({"not": match(r"\bsecret\b", keywords=["secret"])}, "nothing to hide")
    # `any` with a part that needs no keyword must not be prefiltered by the other part's keywords.
    assert fires({"any": [match(r"\bfoo\b", keywords=["foo"]), {"chars": {"min": 5}}]}, "hello world")
    # `all` needs every part, so one part's keywords are a valid prefilter.
    assert not fires({"all": [match(r"\bfoo\b", keywords=["foo"]), {"chars": {"min": 5}}]}, "hello world")


def test_unless_spares_a_window():
    rule = drop_rule("r", match(r"\bdeploy\b"), unless=[match(r"\bnever\b"), {"prose_words": {"min": 8}}])
    judge = classifier(revision_doc([rule])).classify
    assert judge([user("deploy now")]).action == "drop"
    assert judge([user("never deploy now")]).action != "drop"  # the first unless
    assert judge([user("deploy now because the freeze ends at noon today")]).action != "drop"  # the second


# -- role scope of a rule ---------------------------------------------------

def test_turn_rule_role_scope():
    window = [user("ping the server"), assistant("ping the server again")]
    assert kept(match(r"\bping\b"), window, role="assistant") == ["ping the server"]
    assert kept(match(r"\bping\b"), window, role="user") == ["ping the server again"]


def test_window_rule_role_scope_judges_only_that_role():
    window = [user("what does the log say"), assistant("the log says TOKEN-LEAK")]
    assert not window_fires(match(r"TOKEN-LEAK"), window, role="user")
    assert window_fires(match(r"TOKEN-LEAK"), window, role="assistant")
    assert not window_fires(match(r"TOKEN-LEAK"), [user("TOKEN-LEAK")], role="assistant")  # no such turns

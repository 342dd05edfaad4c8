"""Whatever a hook hands the classifier, it returns a Decision, quickly, and never raises."""

import json
import time

import pytest

from enginekit import MINI, assistant, classifier, drop_rule, match, revision_doc, signal, user
from gate.engine.decision import ACTIONS

BOUND = 2.0  # seconds; generous on purpose: this checks "bounded", not "fast"

# One rule per condition kind, so hostile input reaches every feature the conditions compute.
KITCHEN_SINK = revision_doc(
    drop_rules=[
        drop_rule("heartbeat", {"line_share": {"pattern": r"\b{{hb_terms}}\b.*{{num}}", "keywords": ["{{hb_terms}}"],
                                               "min_share": 0.6}}, scope="turn"),
        drop_rule("tool-only", {"turn_flag": "tool_only"}, scope="turn"),
        drop_rule("json-only", {"turn_flag": "json_only"}, scope="turn"),
        drop_rule("frames", {"repeated_shape": {"unit": "line", "min": 5, "min_share": 0.8}}, scope="turn"),
        drop_rule("repo-file", {"all": [{"structure": {"headings": {"min": 2}, "bullets": {"min": 3}}},
                                        {"prose_words": {"max": 400}}]}, mandatory=True),
        drop_rule("secret", match(r"\bsk-[A-Za-z0-9]{20,}", keywords=["sk-"]), mandatory=True),
        drop_rule("repeats", {"repeated_shape": {"unit": "turn", "min": 3}}),
        drop_rule("recent", {"recent_shape": True}),
        drop_rule("huge", {"all": [{"chars": {"min": 10_000_000}}, {"turns": {"min": 1}}, {"role": "user"}]}),
    ],
    signals=[
        signal("prefer", match(r"\bi prefer\b", keywords=["prefer"]), {"preference": 4}, role="user"),
        signal("questions", {"count": {"pattern": r"\?", "min": 2}}, {"all_types": -2}),
        signal("not-narration", {"not": match(r"^i(?:'ll| will)\b")}, {"insight": 0.5}, role="assistant"),
    ],
)


@pytest.fixture(scope="module")
def judge():
    return classifier(KITCHEN_SINK).classify


def check(decision, *, allow_error=False):
    """A well-formed decision whose JSON can be written as UTF-8."""
    assert decision.action in ACTIONS
    assert "+" in decision.policy
    json.dumps(decision.to_json(), ensure_ascii=False).encode("utf-8")  # no lone surrogates survive
    if not allow_error:
        assert decision.error is None, decision.error
    return decision


def timed(judge, window, **options):
    started = time.perf_counter()
    decision = judge(window, **options)
    elapsed = time.perf_counter() - started
    assert elapsed < BOUND, f"{elapsed:.2f}s"
    return decision


TOOL_USE = {"type": "tool_use", "id": "t1", "name": "bash", "input": {"command": "pytest -q"}}

HOSTILE = {
    "none": None,
    "str": "I prefer rebase over merge",
    "int": 42,
    "float": 1.5,
    "bytes": b"I prefer tabs",
    "dict turn": {"role": "user", "content": "I prefer tabs"},
    "dict messages": {"messages": [{"role": "user", "content": "I prefer tabs"}]},
    "dict without turns": {"foo": "bar"},
    "empty list": [],
    "non-dict turns": [1, None, 2.5, [], ["nested"], True, b"x", "a plain string turn"],
    "unknown roles": [{"role": "narrator", "content": "hello"}, {"role": 7, "content": "x"},
                      {"role": None, "content": "y"}, {"role": ["user"], "content": "z"}, {"content": "no role"}],
    "content blocks": [{"role": "user", "content": [{"type": "text", "text": "I prefer tabs"},
                                                    {"type": "image", "source": {}}, "loose", 3, None,
                                                    {"type": "text", "text": None}, {"text": ["x"]}]}],
    "content dict": [{"role": "assistant", "content": {"type": "text", "text": "done"}}],
    "content int": [{"role": "user", "content": 12345}],
    "content None": [{"role": "user", "content": None}],
    "content bool": [{"role": "user", "content": False}],
    "content nested dicts": [{"role": "user", "content": {"content": {"content": {"text": "deep"}}}}],
    "missing content": [{"role": "user"}],
    "tool_use only": [{"role": "assistant", "content": [TOOL_USE]}, {"role": "assistant", "content": [TOOL_USE]}],
    "tool_result only": [{"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": None}]}],
    "lone surrogates": [{"role": "user", "content": "I prefer \ud800 tabs \udfff"},
                        {"role": "assistant\ud800", "content": [{"type": "text", "text": "ok \udc80"}]}],
    "surrogate-escaped bytes": [{"role": "user", "content": b"caf\xe9 \xff".decode("utf-8", "surrogateescape")}],
    "nul and controls": [{"role": "user", "content": "I prefer\x00 tabs\x1b[31m red \r\n\x0b"}],
    "json-only turn": [{"role": "assistant", "content": '{"status": "ok", "items": [1, 2, 3]}'}],
    "deeply nested json text": [{"role": "user", "content": "[" * 100_000 + "]" * 100_000}],
    "deeply nested json, huge": [{"role": "user", "content": "{\"a\":" * 150_000 + "1" + "}" * 150_000}],
    "unbalanced brackets": [{"role": "user", "content": "[" * 200_000}],
    "sidechain flags of odd types": [{"role": "assistant", "content": "x", "isSidechain": "yes", "sidechain": 1}],
    "many tiny turns": [{"role": "user", "content": f"turn {i}"} for i in range(20_000)],
}


@pytest.mark.parametrize("name", HOSTILE)
def test_hostile_window(judge, name):
    check(timed(judge, HOSTILE[name]))


def test_hostile_windows_against_the_mini_revision():
    judge = classifier(MINI.read_text()).classify
    for name, window in HOSTILE.items():
        check(timed(judge, window))


def test_hostile_arguments(judge):
    window = [user("I prefer tabs, and I prefer spaces")]
    for recent in (None, (), "abcdef", ["0123456789abcdef", 7, None], frozenset({"x"})):
        check(timed(judge, window, recent_shapes=recent))
    for level in (None, "balanced"):
        check(timed(judge, window, level=level))
    for level in ("nonsense", 5, "\ud800"):  # an unknown level is reported, not raised
        decision = check(timed(judge, window, level=level), allow_error=True)
        assert decision.action == "skip" and decision.error
    decision = judge(window, recent_shapes=[["unhashable"]])  # still a Decision, never an exception
    assert decision.action in ACTIONS


def test_content_shapes_are_read_as_text(judge):
    blocks = judge([{"role": "user", "content": [{"type": "text", "text": "I prefer tabs"}, TOOL_USE]}])
    assert blocks.action == "flag" and blocks.payload == ({"role": "user", "content": "I prefer tabs"},)
    as_dict = judge({"role": "user", "content": {"type": "text", "text": "I prefer tabs"}})
    assert as_dict.action == "flag"
    tools = judge([{"role": "assistant", "content": [TOOL_USE]}, user("I prefer tabs")])
    assert tools.action == "flag" and [t["content"] for t in tools.payload] == ["I prefer tabs"]
    assert judge([{"role": "assistant", "content": [TOOL_USE]}]).action == "drop"


def test_lone_surrogates_are_replaced_in_the_payload(judge):
    decision = check(judge([user("I prefer \ud800 tabs")]))
    assert decision.action == "flag"
    assert "\ud800" not in decision.payload[0]["content"]
    assert decision.payload[0]["content"].startswith("I prefer ")


def test_json_only_turn_is_stripped_not_crashed(judge):
    decision = check(judge([assistant('{"status": "ok"}'), user("I prefer tabs")]))
    assert decision.action == "flag" and len(decision.payload) == 1


FIVE_MB = 5 * 1024 * 1024


@pytest.mark.parametrize("kind", ["one line", "progress lines", "prose lines", "markdown"])
def test_five_megabyte_message(judge, kind):
    unit = {
        "one line": "x",
        "progress lines": "Epoch 12/100 step 4410 loss 0.4183 ETA 3:12 41.2 it/s\n",
        "prose lines": "We keep the retry budget low because the upstream rate limits us hard.\n",
        "markdown": "## Section\n- item one\n- item two\n```\ncode line\n```\n| a | b |\n",
    }[kind]
    text = unit * (FIVE_MB // len(unit) + 1)
    decision = check(timed(judge, [user(text), user("I prefer tabs")]), allow_error=True)
    # A 5 MB turn either decides normally or, if a pattern ran out of time, is held back and says so.
    assert decision.error is None or decision.error.startswith("timeout in rule")


def test_five_megabyte_secret_is_still_found():
    judge = classifier(revision_doc([drop_rule("secret", match(r"\bsk-[A-Za-z0-9]{20,}", keywords=["sk-"]))])).classify
    text = "filler line of an enormous paste\n" * (FIVE_MB // 33) + "key = sk-" + "a" * 40 + "\n"
    decision = timed(judge, [user(text)])
    assert (decision.action, decision.rule) == ("drop", "secret")


def test_huge_line_that_makes_a_pattern_backtrack_is_bounded(judge):
    # One megabyte of heartbeat words with no number: the heartbeat pattern backtracks over the
    # whole line from every word. The regex timeout bounds it; the window is held back, not sent.
    decision = timed(judge, [user("epoch " * 170_000)])
    assert decision.action in ("skip", "drop") and decision.action != "flag"


# -- a catastrophic pattern -------------------------------------------------

# The lookahead keeps it out of the exact pattern set (gate/engine/patternset.py), so `regex`
# must run it: RE2 alone would prove in one linear pass that "(x+x+)+y" cannot match.
CATASTROPHIC = r"(x+x+)+(?=y)"


@pytest.mark.parametrize("where", ["window rule", "turn rule", "signal", "unless"])
def test_catastrophic_pattern_times_out_and_is_recorded(where):
    slow = match(CATASTROPHIC)
    drop_rules, signals = [], []
    if where == "window rule":
        drop_rules = [drop_rule("slow", slow)]
    elif where == "turn rule":
        drop_rules = [drop_rule("slow", slow, scope="turn")]
    elif where == "signal":
        signals = [signal("slow", slow, {"insight": 9})]
    else:
        drop_rules = [drop_rule("slow", match(r"x"), unless=[slow])]
    judge = classifier(revision_doc(drop_rules, signals)).classify
    adversarial = [user("x" * 2000)]  # (x+x+)+ backtracks without end over a long run of x
    started = time.perf_counter()
    decision = judge(adversarial)
    assert time.perf_counter() - started < BOUND
    assert (decision.action, decision.rule) == ("skip", "slow")
    assert decision.payload == ()  # the window is not sent
    assert "slow" in decision.error and "timeout" in decision.error
    # judged once more before it is held back: a timeout can be a pause of the process, not the pattern
    assert any("timed out twice" in line for line in decision.trace)
    # the same rule on ordinary text decides normally
    assert judge([user("xxy is fine")]).error is None

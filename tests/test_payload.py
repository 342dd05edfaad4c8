"""The payload rule: what leaves the machine is judged, not what a tool read.

A payload-scope window rule drops the window only when the person's own turns
carry the evidence; evidence seen only in tool calls and results, or in the
assistant's turns, strips those turns and the person's words are still sent.
Engine behaviour is shown on small revisions built here; the shipped revisions
from v2.4 on are checked on the windows issue 12 describes.
"""

from __future__ import annotations

import glob
import os

import pytest

from enginekit import (assistant, classifier, contents, drop_rule, match, revision_doc, revision_spread, revision_version, signal,
                       user, write_rules)
from gate.engine.compiler import compile_revision
from gate.evaluation.diff import _structural
from gate.evaluation.lint import lint_file
from gate.language.loader import load_revision

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


# v2.0-v2.3 predate the payload rule and keep their behaviour (their policy ids say so).
PAYLOAD_REVISIONS = revision_spread([p for p in glob.glob(os.path.join(ROOT, "rules", "v*.yaml"))
                                     if revision_version(p) >= (2, 4)], 12, newest=4)  # see enginekit.revision_spread

SECRET = r"\bsk_live_[A-Za-z0-9]{16,}"
FAKE_KEY = "sk_live_FAKE4eC39HqLyjWDarjtT1zd"


def tool_read(path, result, name="Read"):
    """A tool call reading `path` and its result, as Claude Code writes them (two turns)."""
    return [
        {"role": "assistant", "content": [{"type": "tool_use", "id": "tu_1", "name": name,
                                           "input": {"file_path": path}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "tu_1", "content": result}]},
    ]


def secret_rule(scope="payload", role="any"):
    return drop_rule("secret", {"any": [match(SECRET), {"tool_io": {"pattern": SECRET}}]},
                     scope=scope, role=role, mandatory=True, match=[FAKE_KEY], no_match=["no key here"])


def revision_with(*rules):
    """Tool turns are stripped first, as in every shipped revision; then the rules under test."""
    tool_only = drop_rule("tool-only-turn", {"turn_flag": "tool_only"}, scope="turn")
    return revision_doc([tool_only, *rules])


INSTRUCTION = "when the scan finds a key in a staged file, redact it instead of blocking the push"
WINDOW = [user(INSTRUCTION), *tool_read("/app/.env", f"STRIPE_KEY={FAKE_KEY}"),
          assistant("The scanner flagged the Stripe key; I'll make the hook redact it.")]


def test_tool_evidence_strips_the_assistant_and_keeps_the_person():
    decision = classifier(revision_with(secret_rule())).classify(WINDOW)
    assert decision.action != "drop", decision.trace
    assert contents(decision) == [INSTRUCTION]
    assert "turn 3 (assistant) stripped by secret" in decision.trace
    assert not any(FAKE_KEY in text for text in contents(decision))


def test_the_same_rule_at_window_scope_still_drops_the_window():
    # What v2.0-v2.3 do: the scope field is the only difference.
    decision = classifier(revision_with(secret_rule(scope="window"))).classify(WINDOW)
    assert (decision.action, decision.rule) == ("drop", "secret")


def test_evidence_in_the_persons_own_words_drops_the_window():
    window = [user(f"use {FAKE_KEY} for the staging run from now on"), assistant("Will do.")]
    decision = classifier(revision_with(secret_rule())).classify(window)
    assert (decision.action, decision.rule) == ("drop", "secret")
    assert "window dropped by secret" in decision.trace


def test_evidence_in_the_assistants_text_takes_only_the_assistant():
    window = [user(INSTRUCTION), assistant(f"Found {FAKE_KEY} in tests/fixtures.json; moving it.")]
    decision = classifier(revision_with(secret_rule())).classify(window)
    assert decision.action != "drop"
    assert contents(decision) == [INSTRUCTION]


def test_tool_evidence_with_only_the_persons_turn_left_keeps_it_and_says_why():
    window = [user(INSTRUCTION), *tool_read("/app/.env", f"STRIPE_KEY={FAKE_KEY}")]
    decision = classifier(revision_with(secret_rule())).classify(window)
    assert contents(decision) == [INSTRUCTION]
    assert "secret: evidence only in tool calls and results; the person's turns are kept" in decision.trace


def test_nothing_of_the_person_left_drops_the_window():
    window = [*tool_read("/app/.env", f"STRIPE_KEY={FAKE_KEY}"), assistant("Production uses the live Stripe key.")]
    decision = classifier(revision_with(secret_rule())).classify(window)
    assert (decision.action, decision.rule) == ("drop", "secret")


def test_a_person_only_payload_rule_is_blind_to_tool_evidence():
    decision = classifier(revision_with(secret_rule(role="user"))).classify(WINDOW)
    assert decision.action != "drop"
    assert contents(decision)[0] == INSTRUCTION


def test_later_window_rules_judge_what_the_payload_rule_left():
    # A second rule that would fire on the assistant's text must no longer see it.
    echo = drop_rule("echo", match(r"\bscanner flagged\b"), match=["the scanner flagged it"], no_match=["no"])
    decision = classifier(revision_with(secret_rule(), echo)).classify(WINDOW)
    assert decision.action != "drop", decision.trace


@pytest.mark.parametrize("key, value", [("spare_above_file", {"opens": "^# x$", "keeps": "."}),
                                        ("spare_continuations", "wrapped"), ("strip", "evidence")])
def test_diff_names_a_spare_option_added_removed_or_changed(key, value):
    old = {"min_level": "conservative", "scope": "payload", "role": "user", "spare": "."}
    assert _structural(old, dict(old, **{key: value}), ["conservative"], ["conservative"])[2] == [f"`{key}` added"]
    assert _structural(dict(old, **{key: value}), old, ["conservative"], ["conservative"])[2] == [f"`{key}` removed"]
    changed = dict(old, **{key: {"opens": "^# y$", "keeps": "."} if isinstance(value, dict) else "x"})
    assert _structural(dict(old, **{key: value}), changed, ["conservative"], ["conservative"])[2] == [f"`{key}` changed"]


def test_diff_reads_window_to_payload_as_matching_less():
    old = {"min_level": "conservative", "scope": "window", "role": "any"}
    new = dict(old, scope="payload")
    less, more, _ = _structural(old, new, ["conservative"], ["conservative"])
    assert less and not more
    less, more, _ = _structural(new, old, ["conservative"], ["conservative"])
    assert more and not less


@pytest.mark.parametrize("role, flagged", [("user", True), ("any", False)])
def test_lint_names_tool_io_a_person_only_payload_rule_can_never_act_on(tmp_path, role, flagged):
    rule = secret_rule(role=role)
    rule["examples"]["match"] = [FAKE_KEY]
    path = write_rules(tmp_path, revision_doc([rule]))
    problems = [str(p) for p in lint_file(str(path)) if "never acts on tool_io" in str(p)]
    assert bool(problems) == flagged, problems
    if flagged:
        assert "rule 'secret'" in problems[0] and ".yaml:" in problems[0]


# --- strip: evidence (v2.6): only the turns whose sent text holds the evidence go ----------

FINDING = "The scanner flagged the Stripe key; I'll make the hook redact it."


def evidence_rule():
    rule = secret_rule()
    rule["strip"] = "evidence"
    return rule


def test_strip_evidence_keeps_an_assistant_finding_beside_a_secret_a_tool_printed():
    decision = classifier(revision_with(evidence_rule())).classify(WINDOW)
    assert contents(decision) == [INSTRUCTION, FINDING], decision.trace
    assert "secret: evidence only in tool calls and results; the person's turns are kept" in decision.trace


def test_strip_evidence_still_takes_the_assistant_turn_that_writes_the_secret():
    leak = f"Moved {FAKE_KEY} out of tests/fixtures.json."
    window = [user(INSTRUCTION), assistant(FINDING), assistant(leak)]
    decision = classifier(revision_with(evidence_rule())).classify(window)
    assert contents(decision) == [INSTRUCTION, FINDING]
    assert not any(FAKE_KEY in text for text in contents(decision))


def test_strip_evidence_in_the_persons_words_still_drops_the_window():
    window = [user(f"use {FAKE_KEY} for the staging run"), assistant(FINDING)]
    decision = classifier(revision_with(evidence_rule())).classify(window)
    assert (decision.action, decision.rule) == ("drop", "secret")


def test_strip_evidence_without_the_person_drops_as_before():
    # Only a tool read of a secrets file and the assistant's summary of it: no person to spare.
    window = [*tool_read("/app/.env", f"STRIPE_KEY={FAKE_KEY}"), assistant("Production uses the live Stripe key.")]
    decision = classifier(revision_with(evidence_rule())).classify(window)
    assert (decision.action, decision.rule) == ("drop", "secret")


def test_strip_evidence_spread_over_turns_takes_all_of_them():
    # A rule that needs two turns' text together: no single turn carries it, so all go.
    rule = drop_rule("pair", match(r"alpha[\s\S]*omega"), scope="payload", match=["alpha omega"], no_match=["no"])
    rule["strip"] = "evidence"
    window = [user(INSTRUCTION), assistant("alpha part"), assistant("omega part")]
    decision = classifier(revision_with(rule)).classify(window)
    assert contents(decision) == [INSTRUCTION]


def test_lint_names_strip_outside_a_payload_rule(tmp_path):
    rule = secret_rule(scope="window")
    rule["strip"] = "evidence"
    rule["examples"]["match"] = [FAKE_KEY]
    path = write_rules(tmp_path, revision_doc([rule]))
    problems = [str(p) for p in lint_file(str(path)) if "strip applies to scope payload only" in str(p)]
    assert problems and ".yaml:" in problems[0] and "rule 'secret'" in problems[0]


# --- spare: the person's own lines beside a paste the rule took ---------------------

PLAIN_SENTENCE = r"^[a-z][a-z ,']{20,}$"  # no '=', no digits: never a line of a pasted .env
ALWAYS = signal("always", match(r"\balways\b"), {"convention": 5}, match=["always"], no_match=["never"])
RULE_OF_THEIRS = "we always rotate the stripe key after a client demo"


def spared_secret(spare=PLAIN_SENTENCE, spare_unflagged=None, spare_outside_fence=None, spare_continuations=None,
                  spare_above_file=None, **rule_keys):
    rule = secret_rule(**rule_keys)
    rule["spare"] = spare
    if spare_unflagged is not None:
        rule["spare_unflagged"] = spare_unflagged
    if spare_outside_fence is not None:
        rule["spare_outside_fence"] = spare_outside_fence
    if spare_continuations is not None:
        rule["spare_continuations"] = spare_continuations
    if spare_above_file is not None:
        rule["spare_above_file"] = spare_above_file
    tool_only = drop_rule("tool-only-turn", {"turn_flag": "tool_only"}, scope="turn")
    return revision_doc([tool_only, rule], [ALWAYS])


def test_spare_sends_the_persons_flagged_line_without_the_paste():
    window = [user(f"APP_ENV=staging\nSTRIPE_KEY={FAKE_KEY}\n\n{RULE_OF_THEIRS}"), assistant("Noted, rotating it.")]
    decision = classifier(spared_secret()).classify(window)
    assert (decision.action, decision.type) == ("flag", "convention"), decision.trace
    assert contents(decision) == [RULE_OF_THEIRS, "Noted, rotating it."]
    assert "turn 0 (user): cut by secret to the person's own lines" in decision.trace


def test_spare_drops_the_window_when_what_is_left_is_not_flagged():
    # a one-off remark under the paste: judged again it is not knowledge, so the window goes as before
    window = [user(f"STRIPE_KEY={FAKE_KEY}\nwhy does the staging checkout fail with this")]
    decision = classifier(spared_secret()).classify(window)
    assert (decision.action, decision.rule) == ("drop", "secret"), decision.trace


def test_spare_drops_the_window_when_the_kept_line_still_carries_the_evidence():
    spare_any_line = r"\S"
    window = [user(f"we always use {FAKE_KEY} for staging runs")]
    decision = classifier(spared_secret(spare_any_line)).classify(window)
    assert (decision.action, decision.rule) == ("drop", "secret"), decision.trace


def test_spare_drops_the_window_when_no_line_is_the_persons():
    window = [user(f"STRIPE_KEY={FAKE_KEY}\nAPP_ENV=staging")]
    decision = classifier(spared_secret()).classify(window)
    assert (decision.action, decision.rule) == ("drop", "secret")


def test_without_spare_the_persons_line_goes_with_the_paste():
    window = [user(f"STRIPE_KEY={FAKE_KEY}\n{RULE_OF_THEIRS}")]
    doc = spared_secret()
    del doc["drop_rules"][1]["spare"]
    assert classifier(doc).classify(window).action == "drop"


def test_spare_unflagged_skip_skips_what_is_left_unflagged_instead_of_dropping():
    # The same one-off remark: the paste is cut either way, and nothing is sent. With
    # spare_unflagged: skip the person's words are the signals' miss, not the rule's drop.
    window = [user(f"STRIPE_KEY={FAKE_KEY}\nwhy does the staging checkout fail with this")]
    decision = classifier(spared_secret(spare_unflagged="skip")).classify(window)
    assert (decision.action, decision.rule) == ("skip", None), decision.trace
    assert contents(decision) == ["why does the staging checkout fail with this"]
    assert "secret keeps the person's lines: skipped, not dropped" in decision.trace
    # what is flagged is sent as before, and a kept line that still carries the evidence drops
    flagged = classifier(spared_secret(spare_unflagged="skip")).classify([user(f"STRIPE_KEY={FAKE_KEY}\n{RULE_OF_THEIRS}")])
    assert flagged.action == "flag" and contents(flagged) == [RULE_OF_THEIRS]
    evidence = classifier(spared_secret(r"\S", spare_unflagged="skip")).classify([user(f"we always use {FAKE_KEY} here")])
    assert (evidence.action, evidence.rule) == ("drop", "secret")


TERSE_RULE = "always pin to v2."  # a digit and a period: no PLAIN_SENTENCE, so spare alone keeps nothing
FENCED_KEY = f"```\nSTRIPE_KEY={FAKE_KEY}\n```"


@pytest.mark.parametrize("text, kept", [
    (f"{TERSE_RULE}\n{FENCED_KEY}", True),  # the paste is fenced: the line outside is theirs
    (f"{FENCED_KEY}\n{TERSE_RULE}", True),
    (f"{TERSE_RULE}\n```\nSTRIPE_KEY={FAKE_KEY}", False),  # an unclosed fence: no fenced paste
    (f"# notes\n{TERSE_RULE}\n{FENCED_KEY}", False),  # a heading outside: a document with its own code
    ("\n".join(["x1 = 1", "x2 = 2", "x3 = 3", "x4 = 4", TERSE_RULE, FENCED_KEY]), False),  # five lines outside
])
def test_spare_outside_fence_keeps_the_persons_line_around_a_fenced_paste(text, kept):
    decision = classifier(spared_secret(spare_outside_fence=r"\w+ \w+ \w+")).classify([user(text)])
    if kept:
        assert (decision.action, decision.type) == ("flag", "convention"), decision.trace
        assert contents(decision) == [TERSE_RULE]
    else:
        assert (decision.action, decision.rule) == ("drop", "secret"), decision.trace
    # without the key, spare alone keeps nothing of it
    assert classifier(spared_secret()).classify([user(text)]).action == "drop"


# A pasted file whose wrapped lines open in lowercase, as a person types: PLAIN_SENTENCE reads
# each alone as the person's.
WRAPPED_ITEM = "- Rotate STRIPE_KEY after each demo, then\n  we always tell the ops channel in writing"
WRAPPED_PARAGRAPH = "Keys live in vault 2 for staging and prod,\nwe always rotate them after a client demo"


@pytest.mark.parametrize("paste", [WRAPPED_ITEM, WRAPPED_PARAGRAPH])
def test_spare_continuations_keep_a_files_wrapped_line_with_the_file(paste):
    window = [user(f"STRIPE_KEY={FAKE_KEY}\n{paste}")]
    # each wrapped line alone reads as the person's: cut to it, the window is flagged
    assert classifier(spared_secret()).classify(window).action == "flag"
    # it continues a line of the file (indented deeper, or after a comma): it goes with the file
    decision = classifier(spared_secret(spare_continuations=True)).classify(window)
    assert (decision.action, decision.rule) == ("drop", "secret"), decision.trace


def test_spare_continuations_keep_a_persons_wrapped_sentence_whole():
    wrapped = "we always rotate the stripe key after a client demo,\nand we tell the ops channel in writing"
    decision = classifier(spared_secret(spare_continuations=True)).classify([user(f"STRIPE_KEY={FAKE_KEY}\n\n{wrapped}")])
    assert decision.action == "flag" and contents(decision) == [wrapped], decision.trace
    # a line of theirs right under the file, after a line that ends its sentence, is theirs alone
    under = f"STRIPE_KEY={FAKE_KEY}\nAPP_ENV=staging.\n{RULE_OF_THEIRS}"
    below = classifier(spared_secret(spare_continuations=True)).classify([user(under)])
    assert below.action == "flag" and contents(below) == [RULE_OF_THEIRS], below.trace


# A paragraph hard-wrapped at its column breaks after any word: no comma, no joining word.
WRAPPED_AT_COLUMN = ("Keys for staging and prod live in vault 2 and nowhere else on the build hosts\n"
                     "we always rotate them after a client demo")


def test_spare_continuations_wrapped_keep_a_paragraphs_line_broken_at_its_column_with_the_file():
    window = [user(f"STRIPE_KEY={FAKE_KEY}\n{WRAPPED_AT_COLUMN}")]
    # true reads only a sentence that runs on: the rest stands alone as the person's and is sent
    assert classifier(spared_secret(spare_continuations=True)).classify(window).action == "flag"
    decision = classifier(spared_secret(spare_continuations="wrapped")).classify(window)
    assert (decision.action, decision.rule) == ("drop", "secret"), decision.trace


@pytest.mark.parametrize("above", [
    "Keys for staging and prod live in vault 2",  # short: a line that ends, not one the column broke
    "2026-11-30T08:14:02Z WARN pool exhausted after waiting 30000 ms for a free connection",  # a log line
    "Keys for staging and prod live in vault 2 and nowhere else on the build hosts.",  # a sentence that ends
])
def test_spare_continuations_wrapped_leave_a_persons_line_under_what_is_no_paragraph_theirs(above):
    decision = classifier(spared_secret(spare_continuations="wrapped")).classify(
        [user(f"STRIPE_KEY={FAKE_KEY}\n{above}\n{RULE_OF_THEIRS}")])
    assert decision.action == "flag" and contents(decision) == [RULE_OF_THEIRS], decision.trace


# A file opens at its name as a title; a capitalized sentence above it is the person's, which
# PLAIN_SENTENCE (lowercase only, as beside a file whose own sentences are capitalized) never keeps.
ABOVE_FILE = {"opens": r"^# [A-Z]+\.md$", "keeps": r"^[A-Z][a-z ,']{20,}\.$"}
CAPITALIZED_RULE = "Always rotate the stripe key after a client demo, ops asked for it."
KEYS_FILE = f"# KEYS.md\nSTRIPE_KEY={FAKE_KEY}\nAPP_ENV=staging"


def test_spare_above_file_keeps_a_persons_capitalized_line_above_the_files_title():
    window = [user(f"{CAPITALIZED_RULE}\n\n{KEYS_FILE}")]
    assert classifier(spared_secret()).classify(window).action == "drop"
    decision = classifier(spared_secret(spare_above_file=ABOVE_FILE)).classify(window)
    assert (decision.action, decision.type) == ("flag", "convention"), decision.trace
    assert contents(decision) == [CAPITALIZED_RULE]


@pytest.mark.parametrize("text", [
    f"STRIPE_KEY={FAKE_KEY}\n{CAPITALIZED_RULE}",  # no title: the line may be the file's
    f"# KEYS.md\nSTRIPE_KEY={FAKE_KEY}\n{CAPITALIZED_RULE}",  # below the title: the file's
    "\n".join([f"STRIPE_KEY={FAKE_KEY}", "A=1", "B=2", "C=3", CAPITALIZED_RULE, KEYS_FILE]),  # a title further down
], ids=["no-title", "below-title", "title-after-five-lines"])
def test_spare_above_file_leaves_a_line_that_is_not_above_the_files_opening(text):
    decision = classifier(spared_secret(spare_above_file=ABOVE_FILE)).classify([user(text)])
    assert (decision.action, decision.rule) == ("drop", "secret"), decision.trace


@pytest.mark.parametrize("part", ["opens", "keeps"])
def test_a_spare_above_file_that_does_not_compile_is_named_with_its_line(tmp_path, part):
    path = write_rules(tmp_path, spared_secret(spare_above_file={**ABOVE_FILE, part: "^(unclosed"}))
    lines, line = problem_lines_of(path, "^(unclosed")
    assert lines == [line]


@pytest.mark.parametrize("option, value", [("spare_continuations", True), ("spare_above_file", ABOVE_FILE)])
@pytest.mark.parametrize("scope, spare, expected", [
    ("window", True, "{option} applies to scope payload only"),
    ("payload", False, "{option} says what a spare keeps or what becomes of it; add a spare"),
])
def test_lint_names_a_spare_option_without_a_payload_spare(tmp_path, option, value, scope, spare, expected):
    doc = spared_secret(scope=scope, **{option: value})
    if not spare:
        del doc["drop_rules"][1]["spare"]
    expected = expected.format(option=option)
    problems = [str(p) for p in lint_file(str(write_rules(tmp_path, doc))) if expected in str(p)]
    assert problems and ".yaml:" in problems[0] and "rule 'secret'" in problems[0]


@pytest.mark.parametrize("scope, spare, expected", [
    ("window", True, "spare_unflagged applies to scope payload only"),
    ("window", True, "spare_outside_fence applies to scope payload only"),
    ("payload", False, "spare_unflagged says what a spare keeps or what becomes of it; add a spare"),
    ("payload", False, "spare_outside_fence says what a spare keeps or what becomes of it; add a spare"),
])
def test_lint_names_spare_unflagged_without_a_payload_spare(tmp_path, scope, spare, expected):
    doc = spared_secret(scope=scope, spare_unflagged="skip", spare_outside_fence=r"\w+")
    if not spare:
        del doc["drop_rules"][1]["spare"]
    problems = [str(p) for p in lint_file(str(write_rules(tmp_path, doc))) if expected in str(p)]
    assert problems and ".yaml:" in problems[0] and "rule 'secret'" in problems[0]


def test_lint_names_spare_outside_a_payload_rule(tmp_path):
    doc = spared_secret(scope="window")
    path = write_rules(tmp_path, doc)
    problems = [str(p) for p in lint_file(str(path)) if "spare applies to scope payload only" in str(p)]
    assert problems and ".yaml:" in problems[0] and "rule 'secret'" in problems[0]


def problem_lines_of(path, fragment: str) -> tuple[list, int]:
    """The lines lint names for a pattern that does not compile, and the line `fragment` is on."""
    problems = [p for p in lint_file(str(path)) if "does not compile" in str(p)]
    text = open(path, encoding="utf-8").read()
    return [p.line for p in problems], text[:text.index(fragment)].count("\n") + 1


def test_a_spare_that_does_not_compile_is_named_with_its_line(tmp_path):
    path = write_rules(tmp_path, spared_secret(spare="^(unclosed"))
    lines, line = problem_lines_of(path, "^(unclosed")
    assert lines == [line]


# --- the shipped revisions, on the windows of issue 12 ------------------------------

@pytest.fixture(scope="module", params=PAYLOAD_REVISIONS, ids=os.path.basename)
def shipped(request):
    revision = load_revision(request.param)
    return revision, compile_revision(revision)


def test_there_is_a_revision_with_payload_rules():
    assert PAYLOAD_REVISIONS, "no rules/v2.4+ revision"
    revision = load_revision(PAYLOAD_REVISIONS[0])
    assert {r.id for r in revision.drop_rules if r.scope == "payload"} >= {"secret", "repo-file-paste"}


HUMAN = "we never hand-edit the generated API client; regenerate it with make client after any change to openapi.yaml"
CLAUDE_MD = "# shop\n\n## Style\n- no default exports\n- zod at every API boundary\n- pnpm only"
ENV = ("APP_ENV=staging\nSTRIPE_SECRET_KEY=sk_live_FAKE51Hx9QeR7tLmN2pVwZ4y\n"
       "DATABASE_URL=postgres://shop:Tr1cky-Pass-99@db.internal:5432/shop\n"
       "GITHUB_TOKEN=ghp_FAKE7bQ2mX9kLp4Rt8Vw1Yz3Nc6Hd5Js0Ga")
ENV_SECRETS = ["sk_live_FAKE51Hx9QeR7tLmN2pVwZ4y", "Tr1cky-Pass-99", "ghp_FAKE7bQ2mX9kLp4Rt8Vw1Yz3Nc6Hd5Js0Ga"]


@pytest.mark.parametrize("path, result, summary", [
    ("/home/dev/shop/CLAUDE.md", CLAUDE_MD, "The CLAUDE.md says no default exports and zod at every API boundary."),
    ("/home/dev/shop/.env.staging", ENV, "Staging uses the live Stripe key and the app database user."),
], ids=["claude-md", "env"])
def test_human_turn_survives_a_tool_read_and_nothing_secret_is_sent(shipped, path, result, summary):
    revision, compiled = shipped
    window = [user(HUMAN), *tool_read(path, result), assistant(summary)]
    for level in revision.levels:
        decision = compiled.classify(window, level=level)
        assert decision.action != "drop", (level, decision.trace)
        sent = contents(decision)
        # The echo of a repository file goes too. Beside a secret a tool printed, v2.4 and v2.5 strip
        # every assistant turn; from v2.6 (strip: evidence) only a turn whose own text holds a secret.
        secret_strips = next(r.strip for r in revision.drop_rules if r.id == "secret")
        kept_summary = path.endswith(".env.staging") and secret_strips == "evidence"
        assert sent == ([HUMAN, summary] if kept_summary else [HUMAN]), (level, decision.trace)
        assert not any(secret in text for text in sent for secret in ENV_SECRETS)


def test_a_secret_the_person_typed_still_drops_at_every_level(shipped):
    revision, compiled = shipped
    window = [user(f"{HUMAN}; the deploy token is glpat-FAKEx9Yq2Lm7Np4Rs1Tv"), assistant("Noted.")]
    for level in revision.levels:
        assert compiled.classify(window, level=level).action == "drop", level


def test_the_shell_read_of_an_instruction_file_is_an_echo_too(shipped):
    _, compiled = shipped
    window = [user(HUMAN),
              {"role": "assistant", "content": [{"type": "tool_use", "id": "t", "name": "Bash",
                                                 "input": {"command": "cat AGENTS.md"}}]},
              {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t", "content": CLAUDE_MD}]},
              assistant("AGENTS.md: no default exports, zod at every boundary, pnpm only.")]
    assert contents(compiled.classify(window)) == [HUMAN]


HOSTILE = [
    [None, 7, "plain string turn", {"role": None, "content": None}],
    [{"role": "tool", "content": f"token={FAKE_KEY}"}, {"role": "system", "content": f"key {FAKE_KEY}"}],
    [{"role": "assistant", "content": [{"type": "tool_result", "content": [{"type": "text", "text": FAKE_KEY}, 3]}]},
     {"role": "user", "content": [{"type": "text", "text": "keep\ud800 going"}, {"type": "tool_use", "input": {"a": [1]}}]}],
    [{"role": "user", "content": "## Goal\n- " + "x " * 30000}, {"role": "assistant", "content": "# CLAUDE.md\n" * 500}],
    [{"role": "assistant", "content": "<tool_use name=\"Bash\">" + "{" * 5000 + "</tool_use>"}],
]


@pytest.mark.parametrize("window", HOSTILE, ids=range(len(HOSTILE)))
def test_payload_rules_never_raise_on_hostile_windows(shipped, window):
    revision, compiled = shipped
    for level in revision.levels:
        decision = compiled.classify(window, level=level)
        assert decision.action in ("drop", "skip", "flag")
        assert decision.error is None or decision.error.startswith("timeout in rule"), decision.error
        assert not any(FAKE_KEY in turn["content"] for turn in decision.payload)


# --- the shipped revisions with spare: what is sent never holds the credential ----------------

OWN_RULES = ("fyi new env vars go through the vault sync job, never straight into the k8s secret by hand",
             "going forward mask every token when u print config back to me, i share my screen a lot")


def test_what_the_newest_revision_sends_beside_a_credential_never_holds_it():
    revision = load_revision(PAYLOAD_REVISIONS[-1])
    compiled = compile_revision(revision)
    secret = next(r for r in revision.drop_rules if r.id == "secret")
    assert secret.spare, "the newest revision's secret rule spares no line of the person's"
    pasted = [e for e in secret.examples.match if isinstance(e, str)]
    sent_any = 0
    for example in pasted:
        for own in OWN_RULES:
            for window in ([user(f"{example}\n\n{own}")], [user(f"{own}\n{example}")]):
                for level in revision.levels:
                    decision = compiled.classify(window, level=level)
                    if decision.action == "drop":
                        continue
                    sent_any += 1
                    for text in contents(decision):
                        alone = compiled.classify([user(text)], level=level)
                        assert alone.rule != "secret", (example[:40], level, text[:80])
                        assert example not in text
    assert sent_any, "the person's rule is never kept beside any of secret's own examples"

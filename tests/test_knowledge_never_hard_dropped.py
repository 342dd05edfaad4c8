"""A hard drop is the one unrecoverable error: from v2.4 on, no window labeled `extract` is
dropped at any level, whatever a tool in it read or printed.

Checked on the shared real sets (real Claude Code exchanges and real wording) when they sit
beside the project (skipped, saying so, when absent), and on the shipped fixtures from v2.30 on:
v2.4 to v2.17 hard-drop a person's one-line statement that carries one noise token ("caps at
~60MB/s", "step 2/4", "error handling goes through..."; fixtures/one_line_statements.yaml), found
after v2.17 shipped and mended by v2.18's drop half; v2.18 to v2.21 hard-drop a person's words
with the log lines they pasted below them (fixtures/pasted_output.yaml), mended by v2.22's;
v2.22 and v2.23 still hard-drop a person's procedure under an alert's pasted `key: value` fields,
which repo-file-paste took for a config file, mended by v2.26's; v2.26 to v2.29 hard-drop a
person's words when a still-running note, a harness notice or a line of readings shares their
turn ("... then requeue from /admin/imports. reimport is still going"), mended by v2.30's; v2.30
hard-drops a person's rule written under a pasted .env or key with credentials in it, or a reason
above a pasted instruction file, mended by v2.31's `spare` on secret and repo-file-paste; v2.31
when that sentence runs into the paste's lead-in on one line, mended by v2.32's; v2.34 to v2.38
when it sits outside the fence of a pasted file in a register no spare read, or states something
before its lead-in's colon, mended by v2.39's; v2.40 to v2.50 when their sentence opens with a
constant's name ("S3_ENDPOINT needs no trailing slash ...") beside a file, and v2.44 to v2.50 when
they type a record as padded fields with sentence values, mended by v2.51's; v2.43 to v2.53 when
they draw a repository layout with branch lines and a note beside each entry, which counted as a
tool's dependency tree, mended by v2.54's; v2.45 to v2.54 when they type a checklist with
checkboxes or a format with placeholders in angle brackets, read as a tool's tags, mended by
v2.55's; v2.44 to v2.55 when they type a record as padded fields with values of a few plain
words, mended by v2.56's; v2.0 to v2.56 when they write a table of what each log level means,
read as log lines, mended by v2.57's; every revision to v2.57 when their line opens as a tool's
(a warning after a log level and a colon, a timestamp as a sentence's subject, a finding opening
with an exception's name) and v2.49 to v2.57 when they align a table with notes of plain words,
mended by v2.58's; v2.58 when they state a cause after "Caused by:" or make a commit hash their
subject, mended by v2.59's; every revision to v2.59 when they type notes on files as a list of
paths, read as a list of changed files, mended by v2.60's; v2.60 when they say what a job still
running means or write a log format as one JSON log line, mended by v2.61's; every revision to
v2.61 when they annotate a line of a pasted config with an arrow comment, mended by v2.62's;
every revision to v2.63 when their words are a slash command's arguments, cut out with the
harness's echo, mended by v2.64's; v2.64 when their procedure holds a credential's placeholder
elided with "..." ("CI_REGISTRY_TOKEN=glpat-..."), read as a credential, mended by v2.65's; every
revision to v2.65 when they write in their own language beside a paste (a line was theirs only
with five of English's glue words), mended by v2.66's; every revision to v2.66 when they say what
to do about a job still running with an arrow ("still running at 1h -> kill it"), read as a
poll's acknowledgement, mended by v2.67's.
A window whose `todo` names a known gap is left out here and reported by `gate eval`.
"""

from __future__ import annotations

import glob
import os

import pytest

from enginekit import distinct_condition_revisions, revision_spread, revision_version
from gate.engine.cache import load_classifier
from gate.evaluation.fixtures import load_fixtures

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SHARED = os.path.join(ROOT, "..", "shared", "data")
REVISIONS = sorted(glob.glob(os.path.join(ROOT, "rules", "v*.yaml")), key=revision_version)
# A fitted revision drops exactly what its source drops (a fit never touches a drop rule).
# the newest four and a spread of the older: see enginekit.revision_spread
GUARDED = revision_spread(distinct_condition_revisions([p for p in REVISIONS if revision_version(p) >= (2, 4)]), 12,
                          newest=4)
# the first revision each set is guarded from, when not v2.4: v2.32 on the fixtures, since v2.18 to
# v2.23 take a person's words with the tool output they pasted (fixtures/pasted_output.yaml),
# v2.26 to v2.29 with a still-running note, a notice or readings beside them (fixtures/noise_progress.yaml),
# v2.30 with a credential or an instruction file they pasted (fixtures/spared_beside_paste.yaml),
# v2.31 when their sentence runs into the paste's lead-in (fixtures/paste_blind5.yaml),
# v2.32 when a terse correction of theirs sits below a pasted instruction file (pb5-12),
# v2.33 when a notice shares their line or their remark is shorter still (v2.34's fixtures),
# v2.38 when their line sits outside a fenced paste or states something before a lead-in's
# colon (fixtures/paste_blind7.yaml, fixtures/fenced_paste_lines.yaml), v2.42 when their
# decision sits between two pasted server logs (fixtures/output_blind3.yaml, written for v2.46),
# v2.50 when their sentence opens with a constant's name or their record is typed as padded
# fields (fixtures/constant_opens_sentence.yaml, fixtures/padded_records.yaml, written for v2.51),
# v2.53 when they draw a layout with notes on branch lines (fixtures/drawn_trees.yaml, v2.54), and
# v2.54 when they type checkboxes or placeholders (fixtures/person_brackets.yaml, v2.55), and v2.55
# when their padded record's values are a few plain words (fixtures/padded_records.yaml, v2.56), and
# v2.56 when they write what each log level means (fixtures/person_brackets.yaml, v2.57), and
# every revision to v2.57 when they open a warning with a log level and a colon ("WARNING: dont
# ..."), a rule with an example timestamp or a finding with an exception's name, or v2.49 to v2.57
# when they align a table with notes in a column (fixtures/level_opens_warning.yaml, v2.58), and
# v2.58 when they state a cause after "Caused by:" or make a commit hash their subject (v2.59),
# and every revision to v2.59 when they type notes on files as a list of paths
# (fixtures/drawn_trees.yaml, v2.60), and v2.60 when they say what a job still running means or
# write their log format as one JSON log line (fixtures/level_opens_warning.yaml, v2.61), and
# every revision to v2.61 when they annotate a line of a pasted config with an arrow comment
# (fixtures/annotated_pastes.yaml, v2.62), and every revision to v2.63 when their words are a
# slash command's arguments (fixtures/slash_command_args.yaml, v2.64), and v2.64 when they elide
# a credential's placeholder with "..." (fixtures/hooks_and_placeholders.yaml, v2.65), and every
# revision to v2.65 when they write in their own language beside a paste
# (fixtures/other_languages_beside_pastes.yaml, v2.66), and every revision to v2.66 when they
# say what to do about a job still running with an arrow (fixtures/still_running_rules.yaml, v2.67),
# and v2.68 when they paste a chat thread whose people's lines sit beside a bot's line
# (fixtures/chat_pastes.yaml, v2.69), and v2.70 when they type a sentence between the lines of a
# paste (fixtures/words_between_frames.yaml, v2.71), and every revision to v2.71 when they name a
# placeholder token as a prefix and a run of x's (fixtures/security_shapes.yaml, v2.72), and every
# revision to v2.78 when their one line opens by quoting a compiler's diagnostic
# (fixtures/compiler_and_valgrind.yaml, v2.79), and every revision to v2.79 when their one line
# carries a count as a tool's progress line does (fixtures/counted_remarks.yaml, v2.80), and
# every revision to v2.84 when their steps repeat one shape per host under a lead-in
# (fixtures/person_steps.yaml, v2.85), and v2.85 when each of those lines is one step
# (fixtures/person_steps.yaml, v2.86), and every revision from v2.40 to v2.88 when they type a
# terse rule with a capital beside a config (fixtures/config_rules_capitalized.yaml, v2.89), and
# v2.90 when a step per host opens with a command it does not name and runs on to "then start
# it" (fixtures/person_steps.yaml, v2.91), and every revision to v2.91 when they type a terse
# rule beside a credential they pasted (fixtures/secret_rules.yaml, v2.92), and every revision
# since v2.33 when they type a capitalized rule above the title of an instruction file they
# paste (fixtures/rules_above_file_title.yaml, v2.94), and every revision to v2.96 when their line
# under a paste opens with a dotted file name (fixtures/dotted_subjects.yaml, v2.97)
SINCE = {"fixtures": (2, 97)}
SETS = {"fixtures": os.path.join(ROOT, "fixtures"),
        "real-sessions": os.path.join(SHARED, "real-sessions.yaml"),
        "real-wording": os.path.join(SHARED, "real-wording.yaml")}


def extracts(name):
    """The set's extract windows, less those a `todo` declares a known gap (reported by gate eval)."""
    path = SETS[name]
    if not os.path.exists(path):
        pytest.skip(f"{name} not found at {os.path.normpath(path)}")
    found = [f for f in load_fixtures([path]) if f.label == "extract" and not f.todo]
    assert found, f"no extract window in {path}"
    return found


def fixture_extracts(*names):
    """The extract windows of these files in fixtures/, less those a `todo` declares a known gap."""
    paths = [os.path.join(ROOT, "fixtures", name) for name in names]
    return [f for f in load_fixtures(paths) if f.label == "extract" and not f.todo]


def hard_dropped(path, fixtures):
    classifier = load_classifier(path)
    return [(f.id, level) for f in fixtures for level in classifier.levels
            if classifier.classify(f.window, level=level).action == "drop"]


@pytest.mark.parametrize("path, name", [(path, name) for path in GUARDED for name in sorted(SETS)
                                        if revision_version(path) >= SINCE.get(name, (2, 4))],
                         ids=lambda value: os.path.basename(value) if os.sep in str(value) else value)
def test_no_extract_window_is_hard_dropped(path, name):
    drops = hard_dropped(path, extracts(name))
    assert drops == [], f"{os.path.basename(path)} hard-drops {len(drops)} extract window-levels of {name}: {drops[:5]}"


def shipped(version):
    """The shipped revision of `version`, or the test is skipped saying it is not shipped."""
    found = [p for p in REVISIONS if revision_version(p) == version]
    if not found:
        pytest.skip("rules/v%d.%d.yaml is not shipped" % version)
    return found[0]


def test_the_check_can_fail():
    # v2.3 dropped real exchanges whose tool read a file or printed a token, person's words and all.
    older = shipped((2, 3))
    assert hard_dropped(older, extracts("real-sessions"))


def test_the_one_line_statements_caught_the_older_drop_half():
    # the guard above starts at v2.18 on the fixtures because v2.17 fails it: a real failure, not a skip
    older = shipped((2, 17))
    one_line = [f for f in load_fixtures([os.path.join(ROOT, "fixtures", "one_line_statements.yaml")])
                if f.label == "extract"]
    assert hard_dropped(older, one_line)


@pytest.mark.parametrize("version", [(2, 21), (2, 23)], ids=lambda v: "v%d.%d" % v)
def test_pasted_output_caught_the_drop_half_before_v2_26(version):
    # the guard starts at v2.26 on the fixtures because v2.21 (log lines) and v2.23 (an alert's
    # fields read as a config file) fail it: a real failure, not a skip
    older = shipped(version)
    pasted = fixture_extracts("pasted_output.yaml")
    assert hard_dropped(older, pasted)


def test_a_still_running_note_caught_the_drop_half_before_v2_30():
    # the guard starts at v2.30 on the fixtures because v2.29's still-running-ack takes a person's
    # procedure with the progress note after it: a real failure, not a skip
    older = shipped((2, 29))
    progress = fixture_extracts("noise_progress.yaml")
    assert hard_dropped(older, progress)


@pytest.mark.parametrize("version, name", [((2, 63), "slash_command_args.yaml"),
                                           ((2, 64), "hooks_and_placeholders.yaml"),
                                           ((2, 65), "other_languages_beside_pastes.yaml"),
                                           ((2, 66), "still_running_rules.yaml"),
                                           ((2, 68), "chat_pastes.yaml"),
                                           ((2, 70), "words_between_frames.yaml"),
                                           ((2, 71), "security_shapes.yaml"),
                                           ((2, 78), "compiler_and_valgrind.yaml"),
                                           ((2, 79), "counted_remarks.yaml"),
                                           ((2, 84), "person_steps.yaml"),
                                           ((2, 85), "person_steps.yaml"),
                                           ((2, 88), "config_rules_capitalized.yaml"),
                                           ((2, 90), "person_steps.yaml"),
                                           ((2, 91), "secret_rules.yaml"),
                                           ((2, 93), "rules_above_file_title.yaml"),
                                           ((2, 96), "dotted_subjects.yaml")],
                         ids=lambda value: "v%d.%d" % value if isinstance(value, tuple) else value)
def test_the_newest_mended_classes_caught_the_revision_before(version, name):
    # the guard starts at v2.92 on the fixtures because v2.63's harness-markup cuts a slash
    # command's arguments out with its echo, v2.64's secret reads "glpat-..." as a token, v2.65's
    # spares read no sentence in Russian or Chinese, and v2.66's still-running-ack reads "still
    # running at 1h -> kill it" as a poll, v2.68's machine-shaped-paste reads a chat's lines
    # stamped to the minute as a log's, v2.70's training-heartbeat and batch-counter keep no
    # sentence between a paste's lines without a word only a person writes, v2.71's secret
    # reads "xoxb-xxxxxxxxxxxx" as a token, v2.78's monitoring-status counts a finding that
    # opens with "src/x.cc:88:12: error:" as the compiler's line, and v2.79's batch-counter counts
    # "nightly export 38/40 shards done by 6am, last two always wait ..." as a batch's counter,
    # and v2.84's repeated-line-shape counts a person's steps, one line per node, as a frame
    # (v2.85's still when each line is one step), and v2.88's config-file-paste reads "Don't raise
    # the pool size. Prod db caps at 100 connections." as no sentence beside a YAML file, and
    # v2.90's repeated-line-shape counts "pg_basebackup ... onto replica-2, then start it" per
    # replica as a frame, and v2.91's secret reads "Rotate this key after every client demo. Ops
    # keeps the new one in vault." as no sentence of the person's beside the key, and v2.93's
    # repo-file-paste reads "Never run the e2e suite on your laptop, it truncates ..." above
    # "# AGENTS.md" as the file's own sentence, and v2.96's machine_opening reads
    # "next.config.mjs owns the image domains list ..." as a module's name, each taking the
    # person's words with it: a real failure, not a skip
    older = shipped(version)
    assert hard_dropped(older, fixture_extracts(name))


# A sentence of the person's, on its own line above what a drop rule was written to drop, is
# still theirs: each drop rule of the newest revision is probed with its own examples.
OWN_SENTENCES = ("we pin node 20 on the ci runners because 22 breaks the sharp build, so do not bump it",
                 "for next time: to unstick the importer delete its row in import_locks, then restart the worker pod",
                 # people write in their own language (v2.66: until v2.65 most rules took these)
                 "мы держим node 20 на раннерах, потому что на 22 ломается сборка sharp, не обновляй",
                 "我们在 runner 上固定使用 node 20，因为 22 会让 sharp 构建失败，不要升级")
# Every drop rule is probed, with no exemption since v2.32 (until v2.30 a credential took the
# window whole by design; until v2.31 a sentence above a pasted instruction file went with it).
# From v2.31 a payload rule with `spare` keeps the person's sentence and judges it again without
# the paste: it stays exactly when the knowledge half keeps the sentence alone (flagged at the
# level, or at the default level when the level is stricter). A sentence the signals miss goes with
# the paste (from v2.38, `spare_unflagged: skip`, it is skipped instead): that is the knowledge
# half's miss, measured by extract_recall, not the drop half's.


def _own_examples(rule):
    for example in rule.get("examples", {}).get("match", []):
        if isinstance(example, dict) and example.get("role", "user") == "user":
            example = example.get("content")
        if isinstance(example, str):
            yield example


def sentences_taken(path):
    """(rule whose example, rule that dropped, example) for each probe a drop took whole."""
    import yaml

    with open(path, encoding="utf-8") as handle:
        rules = yaml.safe_load(handle)["drop_rules"]
    classifier = load_classifier(path)
    sparing = {rule["id"] for rule in rules if rule.get("spare")}
    levels = classifier.levels
    default = levels.index(classifier.default_level)

    def kept_alone(sentence, level):
        judged = (level, levels[default]) if levels.index(level) < default else (level,)
        return any(classifier.classify([{"role": "user", "content": sentence}], level=at).action == "flag"
                   for at in judged)

    taken = []
    for rule in rules:
        for example in _own_examples(rule):
            for sentence in OWN_SENTENCES:
                window = [{"role": "user", "content": f"{sentence}\n{example}"}]
                for level in levels:
                    decision = classifier.classify(window, level=level)
                    if decision.action != "drop":
                        continue
                    if decision.rule in sparing and not kept_alone(sentence, level):
                        continue
                    taken.append((rule["id"], decision.rule, example[:40]))
    return taken


def test_a_persons_sentence_above_any_drop_rules_own_example_is_not_hard_dropped():
    newest = max(REVISIONS, key=revision_version)
    taken = sentences_taken(newest)
    assert taken == [], f"{os.path.basename(newest)} drops a person's sentence with {len(taken)} examples: {taken[:5]}"


def test_the_probe_caught_v2_29s_notices():
    older = shipped((2, 29))
    assert {dropped for _, dropped, _ in sentences_taken(older)} >= {"task-notification"}


def test_a_pasted_credential_caught_the_drop_half_before_v2_31():
    # the guard starts at v2.31 on the fixtures because v2.30's secret and repo-file-paste take a
    # person's rule or reason with the key or the file pasted beside it: a real failure, not a skip
    older = load_classifier(shipped((2, 30)))
    spared = fixture_extracts("spared_beside_paste.yaml")
    assert {older.classify(f.window).rule for f in spared} >= {"secret", "repo-file-paste"}


def test_a_sentence_running_into_a_lead_in_caught_v2_31():
    # the guard starts at v2.32 on the fixtures because v2.31's spare leaves a line that ends in
    # a lead-in ("... current compose:") to the paste, sentence and all: a real failure, not a skip
    older = shipped((2, 31))
    blind = fixture_extracts("paste_blind5.yaml")
    assert hard_dropped(older, blind)


def test_a_terse_correction_below_a_pasted_file_caught_v2_32():
    # the guard starts at v2.33 on the fixtures because v2.32's spare keeps a person's line beside
    # a pasted file only when it reads as a full sentence (five glue words), so a terse correction
    # goes with the file: a real failure, not a skip
    older = shipped((2, 32))
    blind = fixture_extracts("paste_blind5.yaml")
    assert ("pb5-12", "balanced") in hard_dropped(older, blind)


def test_a_notice_on_the_persons_line_caught_v2_33():
    # the guard starts at v2.34 on the fixtures because v2.33's task-notification takes a turn
    # whose sentence shares a line with the notice, and its spare leaves a nine-word instruction
    # above a pasted AGENTS.md to the file: a real failure, not a skip
    older = shipped((2, 33))
    ours = fixture_extracts("notice_same_line.yaml", "spared_beside_paste.yaml")
    dropped = {fixture for fixture, _ in hard_dropped(older, ours)}
    assert {"nsl-convention-after-notification", "sp-agents-md-never-line-above"} <= dropped


def test_the_probe_caught_v2_30s_credentials():
    # v2.30's secret rule took a sentence above a pasted key with the key
    older = shipped((2, 30))
    assert {dropped for _, dropped, _ in sentences_taken(older)} >= {"secret"}


def test_a_line_outside_a_fenced_paste_caught_v2_38():
    # the guard starts at v2.39 on the fixtures because v2.38's spares keep neither a terse line
    # outside the fence of a pasted file ("tags get cut from main. release branches never get
    # tagged.") nor a lead-in that states something before its colon: a real failure, not a skip
    older = shipped((2, 38))
    ours = fixture_extracts("fenced_paste_lines.yaml", "paste_blind7.yaml")
    dropped = {fixture for fixture, _ in hard_dropped(older, ours)}
    assert {"fpl-convention-below-fenced-workflow", "fpl-statement-lead-in-unfenced-compose"} <= dropped


def test_a_decision_between_two_pasted_logs_caught_v2_42():
    # the guard starts at v2.43 on the fixtures because v2.39 to v2.42 take a decision typed
    # between a Postgres log and a pgbouncer log with the logs (output_blind3, written blind for
    # v2.46): none of its lines was a line of the person's to them: a real failure, not a skip
    older = shipped((2, 42))
    dropped = {fixture for fixture, _ in hard_dropped(older, fixture_extracts("output_blind3.yaml"))}
    assert "ob3-14" in dropped

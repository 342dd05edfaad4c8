"""The revisions in rules/ as shipped: they lint clean, and the properties the
product promises hold at every level (mandatory rules, mixed windows, repeats)."""

import glob
import os

import pytest

from enginekit import revision_spread
from gate.engine.compiler import compile_revision
from gate.evaluation.lint import lint_file
from gate.language.loader import load_revision

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
REVISIONS = sorted(glob.glob(os.path.join(ROOT, "rules", "*.yaml")))
# the newest four and a spread of the older: see enginekit.revision_spread
SPREAD = revision_spread(REVISIONS, 12, newest=4)


@pytest.fixture(scope="module", params=SPREAD, ids=os.path.basename)
def shipped(request):
    revision = load_revision(request.param)
    return revision, compile_revision(revision)


def test_there_are_revisions_to_ship():
    assert len(REVISIONS) >= 1


@pytest.mark.parametrize("path", SPREAD, ids=os.path.basename)
def test_the_newest_and_a_spread_of_the_shipped_revisions_lint_clean(path):
    # `gate lint rules/*.yaml` lints every revision (shared/hooks/before-stop runs it before a stop)
    assert [str(p) for p in lint_file(path)] == []


def test_mandatory_rules_cover_secrets_and_repo_files(shipped):
    revision, _ = shipped
    mandatory = {r.id for r in revision.drop_rules if r.mandatory}
    assert {"secret", "repo-file-paste"} <= mandatory


SECRET_IN_A_DURABLE_STATEMENT = [{
    "role": "user",
    "content": "From now on we always deploy with the release bot; its token is "
               "ghp_R8fj2KLmQw0pXz7TYu5vBnC3dE9sA1gH4iJk so put it in the workflow.",
}]
PASTED_AGENTS_MD = [{
    "role": "user",
    "content": "# AGENTS.md\n\n## Style\n- We always use pnpm\n- Never edit generated files\n"
               "- Prefer small PRs\n\n## Testing\n- Run `make test` before every push\n",
}]


@pytest.mark.parametrize("window", [SECRET_IN_A_DURABLE_STATEMENT, PASTED_AGENTS_MD], ids=["secret", "repo-file"])
def test_mandatory_rules_drop_at_every_level(shipped, window):
    revision, classifier = shipped
    for level in revision.levels:
        decision = classifier.classify(window, level=level)
        assert decision.action == "drop", (level, decision.trace)
        assert decision.rule in {"secret", "repo-file-paste"}


def test_mixed_window_keeps_the_fact_and_strips_the_progress(shipped):
    _, classifier = shipped
    fact = ("The nightly export reads the replica, not the primary, so a schema change only "
            "shows up in the export after replication catches up; never run the export right after a migration.")
    window = [
        {"role": "assistant", "content": "Epoch 4/20 | step 1600/8000 | loss 0.612 | 3.1 it/s | ETA 41:10"},
        {"role": "user", "content": fact},
        {"role": "assistant", "content": "Epoch 5/20 | step 2000/8000 | loss 0.598 | 3.1 it/s | ETA 39:02"},
    ]
    decision = classifier.classify(window)
    assert decision.action == "flag", decision.trace
    assert [turn["content"] for turn in decision.payload] == [fact]


def test_recent_shape_drops_the_next_frame_of_the_same_status(shipped):
    _, classifier = shipped
    first = [{"role": "assistant", "content": "Nightly sync: copied 12 buckets, 3 remaining, next check in 5 min"}]
    second = [{"role": "assistant", "content": "Nightly sync: copied 14 buckets, 1 remaining, next check in 2 min"}]
    seen = classifier.classify(first).shape
    assert classifier.classify(second, recent_shapes=[seen]).action == "drop"
    assert classifier.classify(second).rule != "recent-shape"


def test_heartbeats_with_other_numbers_and_tools_are_dropped(shipped):
    _, classifier = shipped
    frames = [
        "Epoch 12/50 - loss: 0.3311 - val_loss: 0.4025 - ETA: 1:02:11",
        "[train] step 48000/120000 lr=1.2e-4 loss=1.874 tok/s=18234",
        "Validating:  64%|██████▍   | 640/1000 [00:41<00:23, 15.52it/s]",
        "Processed 3,400 of 12,000 documents (28%)",
        "[ingest] pid 77120 elapsed 01:02:33 docs=88211",
    ]
    for frame in frames:
        decision = classifier.classify([{"role": "assistant", "content": frame}])
        assert decision.action == "drop", (frame, decision.trace)


def test_a_fitted_revision_reads_the_text_as_the_revision_it_was_fitted_from():
    """`gate fit` changes weights, thresholds and the lexicon, never a condition: the engine
    tests that run one revision of each set of conditions rely on it."""
    import yaml

    from enginekit import distinct_condition_revisions

    fitted = 0
    for path in sorted(glob.glob(os.path.join(ROOT, "rules", "*.yaml"))):
        with open(path, encoding="utf-8") as handle:
            doc = yaml.safe_load(handle)
        if "fitted" not in doc:
            continue
        source = os.path.join(ROOT, "rules", doc["fitted"]["from"].split("+")[0] + ".yaml")
        assert distinct_condition_revisions([source, path]) == [path], (path, source)
        assert len(distinct_condition_revisions([source, path, os.path.join(ROOT, "rules", "v2.0.yaml")])) == 2
        fitted += 1
    assert fitted >= 3  # v2.5, v2.7, v2.9


def test_the_newest_revisions_line_rules_are_judged_through_the_pattern_set():
    """A line_share whose pattern the RE2 set cannot hold (one alternative in `regex`-only syntax)
    silently searches every line with `regex` instead: a dotted-leader alternative written with a
    lookbehind took v2.22's classify throughput to about half until it was rewritten."""
    from enginekit import revision_version
    from gate.engine.conditions.line_share import LineShare

    newest = max(REVISIONS, key=revision_version)
    classifier = compile_revision(load_revision(newest))
    rules = {rule.id: rule for level in classifier.levels for rule in classifier._by_level[level][0]}
    ungated = [rule_id for rule_id, rule in rules.items() if isinstance(rule.when, LineShare) and rule.when.gate is None]
    assert ungated == [], f"{os.path.basename(newest)}: line_share rules outside the pattern set: {ungated}"

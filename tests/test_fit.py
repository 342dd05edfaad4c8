"""gate fit: determinism, the round trip, sign and fixed controls, grouped folds, and
that the hook path never imports the fitting library. Tiny corpora: a few seconds."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

pytest.importorskip("sklearn")

from click.testing import CliRunner  # noqa: E402

from fitkit import HEADER, _fx, rules_text, write_corpus  # noqa: E402
from gate.cli import main  # noqa: E402
from gate.evaluation.fixtures import Fixture  # noqa: E402
from gate.fit.groups import assign_folds, groups  # noqa: E402
from gate.fit.run import fit_revision  # noqa: E402
from gate.language.loader import load_revision  # noqa: E402


@pytest.fixture(scope="module")
def workspace(tmp_path_factory):
    root = tmp_path_factory.mktemp("fit")
    (root / "rules.yaml").write_text(rules_text(), encoding="utf-8")
    write_corpus(root / "fixtures")
    return root


@pytest.fixture(scope="module")
def fitted(workspace):
    """One CLI run: the written revision and the JSON report."""
    out = workspace / "v2.yaml"
    result = CliRunner().invoke(main, ["fit", str(workspace / "rules.yaml"), "--fixtures", str(workspace / "fixtures"),
                                       "--out", str(out), "--folds", "3", "--lexicon", "8", "--min-df", "2",
                                       "--report", str(workspace / "fit.json"), "--quiet"])
    assert result.exit_code == 0, result.output
    return out.read_text(encoding="utf-8"), json.loads((workspace / "fit.json").read_text()), result.output


def test_same_inputs_give_byte_identical_output(workspace, fitted):
    again = fit_revision(str(workspace / "rules.yaml"), [str(workspace / "fixtures")], out_revision="v2", folds=3,
                         lexicon=8, min_df=2)
    assert again.text == fitted[0]


def test_the_written_file_keeps_comments_and_changes_only_weights_and_thresholds(workspace, fitted):
    old_text, (new_text, report, _) = (workspace / "rules.yaml").read_text(), fitted
    lines = new_text.splitlines()
    assert lines[0] == "# yaml-language-server: $schema=../schemas/rules.schema.json"  # stays the first line
    assert lines[1].startswith("# revision v2: t1's rules with weights, thresholds and a lexicon fitted by `gate fit`")
    assert HEADER in new_text
    comments = [li for li in old_text.splitlines() if li.lstrip().startswith("#")]
    assert comments and all(c in lines for c in comments)
    assert "default_level: balanced  # the level hooks use" in new_text
    old, new = yaml.safe_load(old_text), yaml.safe_load(new_text)
    lexicon = new["signals"].pop()  # the fit appends the lexicon signal at the end
    assert lexicon["id"] == "learned-words" and "lexicon" in lexicon["when"]
    assert 0 < len(lexicon["when"]["lexicon"]["terms"]) <= 8
    assert new["revision"] == "v2" and "fitted" in new
    for doc in (old, new):
        doc.pop("revision"), doc.pop("fitted", None), doc["flag"].pop("operating_points", None)
        doc["flag"].pop("thresholds")
        for s in doc["signals"]:
            s.pop("weights")
    assert old == new  # descriptions, examples, drop rules, patterns: untouched
    for weights in [s["weights"] for s in yaml.safe_load(new_text)["signals"]]:
        assert all(round(v, 2) == v for v in weights.values())  # two decimals, a readable diff


def test_the_fitted_file_loads_in_the_interpreter_and_decides_as_the_fit_computed(fitted):
    text, report, _ = fitted
    revision = load_revision("v2.yaml", text=text)
    assert revision.policy.startswith("v2+")
    check = report["self_check"]
    assert check["decisions"] == 3 * 48 and check["differ"] == []


def test_what_a_spare_keeps_is_a_training_row_and_the_file_decides_it_as_the_fit_computed(tmp_path):
    # A payload rule with `spare` drops a window only when the signals do not flag the person's
    # lines it keeps: with new weights, the written file flags some of the windows the old
    # weights dropped. The fit trains on those lines and computes that decision too.
    import fitkit
    from enginekit import drop_rule, dump, match

    key = "sk_live_FAKE4eC39HqLyjWDarjtT1zd"
    doc = yaml.safe_load(rules_text().split("\n", 1)[1])
    secret = drop_rule("secret", match(r"sk_live_\w{20,}"), scope="payload", mandatory=True,
                       match=[key], no_match=["no key here"])
    secret["spare"] = r"^[a-z][a-z ,']{20,}$"  # a plain sentence of the person's: never a line of a pasted .env
    doc["drop_rules"].append(secret)
    doc["flag"]["thresholds"] = dict.fromkeys(doc["flag"]["thresholds"], 50)  # the hand weights flag nothing
    rules = tmp_path / "rules.yaml"
    rules.write_text(fitkit.SCHEMA_LINE + dump(doc), encoding="utf-8")
    paths = write_corpus(tmp_path / "fixtures")
    beside = [_fx(f"key-{i}", f"STRIPE_KEY={key}\nwe switched {area} billing to {tool} because the old one kept failing",
                  "extract", "decision")
              for i, (area, tool) in enumerate(zip(["the api", "search", "auth", "payments"], ["uv", "vite", "ruff", "pnpm"]))]
    # near-duplicates of each other, so in one file: a cluster across files would join every file's group
    paths[0].write_text(paths[0].read_text(encoding="utf-8") + yaml.safe_dump(beside, sort_keys=False),
                        encoding="utf-8")

    outcome = fit_revision(str(rules), [str(tmp_path / "fixtures")], out_revision="v2", folds=3)
    assert outcome.report["self_check"]["differ"] == []
    from gate.engine.compiler import compile_revision
    hand = compile_revision(load_revision(str(rules)))
    assert all(hand.classify(f["window"]).action == "drop" for f in beside)  # nothing flags what is spared
    fitted = compile_revision(load_revision("v2.yaml", text=outcome.text))
    assert all(fitted.classify(f["window"]).action == "flag" for f in beside)  # the fit learned from them
    reach_signals = sum(1 for group in fitkit.corpus() for f in group if f["label"] != "drop")  # heartbeats drop
    assert outcome.report["fitted"]["fixtures"]["training_windows"] == reach_signals + len(beside)


def test_fitted_block_and_report_show_cross_validated_scores_beside_hand_weights(fitted):
    text, report, output = fitted
    block = yaml.safe_load(text)["fitted"]
    assert block["folds"] == 3 and block["seed"] == 13 and block["regularization"] == {"l2": 1.0}
    assert block["fixtures"]["windows"] == 48 and block["fixtures"]["digest"].startswith("sha256:")
    assert block["fixtures"]["training_windows"] == 40  # the 8 heartbeats a drop rule removes are not rows
    cell = block["cv"]["balanced"]["fixtures"]
    assert set(cell) >= {"windows", "extract_recall", "flag_precision", "type_accuracy"}
    assert len(cell["extract_recall"]) == 2  # [fitted, hand]
    assert "cross-validated, fitted / hand weights" in output
    assert set(report["thresholds"]) == {"conservative", "balanced", "aggressive"}
    written = yaml.safe_load(text)["flag"]["thresholds"]
    assert written == {lv: t["fitted"] for lv, t in report["thresholds"].items()}


def test_sign_and_fixed_controls_hold(fitted):
    signals = {s["id"]: s for s in yaml.safe_load(fitted[0])["signals"]}
    # 'because' fires only on knowledge here, so a free fit makes it positive; its sign holds it at or below 0
    assert all(w <= 0 for w in signals["because"]["weights"].values())
    assert signals["long-statement"]["weights"] == {"all_types": 1}  # fixed: the hand weight, as written


def test_without_the_sign_control_the_same_signal_turns_positive(workspace):
    path = workspace / "free.yaml"
    path.write_text(rules_text(negative_because=False), encoding="utf-8")
    outcome = fit_revision(str(path), [str(workspace / "fixtures")], out_revision="free", folds=3)
    because = next(s for s in yaml.safe_load(outcome.text)["signals"] if s["id"] == "because")
    assert max(because["weights"].values()) > 0  # so the test above measures the control, not the data


def test_gate_diff_shows_the_weight_changes_per_signal(workspace, fitted):
    (workspace / "v2.yaml").write_text(fitted[0], encoding="utf-8")
    result = CliRunner().invoke(main, ["diff", str(workspace / "rules.yaml"), str(workspace / "v2.yaml"),
                                       "--fixtures", str(workspace / "fixtures")])
    assert "prefer: signal: weight" in result.output
    assert "learned-words" in result.output


def test_out_must_not_overwrite_the_revision_it_starts_from(workspace):
    rules = str(workspace / "rules.yaml")
    result = CliRunner().invoke(main, ["fit", rules, "--out", rules, "--fixtures", str(workspace / "fixtures")])
    assert result.exit_code == 2
    assert "--out must be a new file" in result.output
    assert (workspace / "rules.yaml").read_text() == rules_text()


def _fixture(id, text, note="", file="a.yaml"):
    return Fixture(id, [{"role": "user", "content": text}], "drop", None, note, file=file)


def test_folds_never_split_a_near_duplicate_cluster_or_a_source():
    fixtures = [
        _fixture("hb1", "Epoch 3/10 loss 0.412 ETA 5m12s step 3000", file="one.yaml"),
        _fixture("hb2", "Epoch 7/10 loss 0.287 ETA 1m40s step 7000", file="two.yaml"),  # numbers changed only
        _fixture("w1", "we keep every migration reversible and reviewed by two people before merge", file="three.yaml"),
        _fixture("w2", "we keep every migration reversible and reviewed by two people before a merge", file="four.yaml"),
        _fixture("s1", "a", note="(exchange 1 of sessions/abc-1.jsonl)", file="sessions.yaml"),
        _fixture("s2", "b", note="(exchange 5 of sessions/abc-1.jsonl)", file="sessions.yaml"),
        _fixture("s3", "c", note="(exchange 2 of sessions/xyz-9.jsonl)", file="sessions.yaml"),
        _fixture("r1", "d", note="(adapted from github.com/org/repo/blob/HEAD/CLAUDE.md)", file="rw.yaml"),
        _fixture("r2", "e", note="(adapted from github.com/org/repo/issues/12)", file="rw.yaml"),
    ]
    fixtures += [_fixture(f"x{i}", f"unrelated window number {i} about topic {'abcdefghij'[i]}", file=f"x{i}.yaml")
                 for i in range(10)]
    keys = groups(fixtures)
    by_id = dict(zip((f.id for f in fixtures), keys))
    assert by_id["hb1"] == by_id["hb2"] and by_id["w1"] == by_id["w2"]
    assert by_id["s1"] == by_id["s2"] != by_id["s3"]  # one session file, not one fixture file
    assert by_id["r1"] == by_id["r2"]  # one public source
    for k in (2, 3, 5):
        folds = dict(zip(keys, assign_folds(keys, k, seed=13)))
        assert len(folds) == len(set(keys))  # every key maps to exactly one fold
        fold_of = assign_folds(keys, k, seed=13)
        for a, b in (("hb1", "hb2"), ("w1", "w2"), ("s1", "s2"), ("r1", "r2")):
            ia, ib = [f.id for f in fixtures].index(a), [f.id for f in fixtures].index(b)
            assert fold_of[ia] == fold_of[ib]
        assert fold_of == assign_folds(keys, k, seed=13)  # deterministic


_PROBE = """
import io, json, sys
from gate.cli import main
sys.stdin = io.StringIO('[{"role": "user", "content": "we switched billing to uv because builds were slow"}]')
sys.argv = ["gate"] + sys.argv[1:]
try:
    main()
except SystemExit:
    pass
heavy = sorted(m for m in sys.modules if m.split(".")[0] in ("sklearn", "scipy", "numpy") or m.startswith("gate.fit"))
print("MODULES=" + json.dumps(heavy), file=sys.stderr)
"""


@pytest.mark.parametrize("command", [["classify"], ["eval", "--fixtures"]])
def test_classify_and_eval_never_import_the_fitting_library(workspace, fitted, command):
    rules = workspace / "lexicon.yaml"
    rules.write_text(fitted[0], encoding="utf-8")  # a revision with a lexicon: still no fitting library
    args = command + ([str(workspace / "fixtures")] if command[0] == "eval" else [])
    args += ["--rules", str(rules)] + (["--report", str(workspace / "r.json")] if command[0] == "eval" else [])
    done = subprocess.run([sys.executable, "-c", _PROBE, *args], capture_output=True, text=True, timeout=120,
                          cwd=str(workspace))
    line = next(line for line in done.stderr.splitlines() if line.startswith("MODULES="))
    assert json.loads(line[len("MODULES="):]) == []
    if command[0] == "classify":
        assert '"action": "flag"' in done.stdout


def test_a_recall_only_file_inside_a_fixtures_folder_is_read_once_as_recall_only(workspace):
    folder = workspace / "fixtures"
    files = sorted(folder.glob("*.yaml"))
    windows = sum(len(yaml.safe_load(f.read_text())) for f in files)
    outcome = fit_revision(str(workspace / "rules.yaml"), [str(folder)], out_revision="r", folds=3,
                           recall_only=[str(files[-1])])
    fitted = outcome.report["fitted"]
    assert fitted["fixtures"]["files"] == len(files) and fitted["fixtures"]["windows"] == windows
    assert fitted["recall_only"] == [files[-1].stem]
    # its rows form a set of their own, apart from the folder's
    balanced = fitted["cv"]["balanced"]
    assert files[-1].stem in balanced and "fixtures" in balanced
    assert balanced[files[-1].stem]["windows"] + balanced["fixtures"]["windows"] == windows


def test_a_held_out_file_is_neither_fitted_nor_cross_validated_and_the_fitted_block_names_it(workspace):
    folder = workspace / "fixtures"
    files = sorted(folder.glob("*.yaml"))
    held = files[-1]
    held_windows = len(yaml.safe_load(held.read_text()))
    windows = sum(len(yaml.safe_load(f.read_text())) for f in files)
    outcome = fit_revision(str(workspace / "rules.yaml"), [str(folder)], out_revision="r", folds=3,
                           holdout=[str(held)])
    fitted = outcome.report["fitted"]
    assert fitted["held_out"] == [held.stem]
    assert fitted["fixtures"]["files"] == len(files) - 1
    assert fitted["fixtures"]["windows"] == windows - held_windows
    assert fitted["cv"]["balanced"]["fixtures"]["windows"] == windows - held_windows
    # the digest covers what was fitted, so holding a file out changes it
    whole = fit_revision(str(workspace / "rules.yaml"), [str(folder)], out_revision="r", folds=3)
    assert whole.report["fitted"]["fixtures"]["digest"] != fitted["fixtures"]["digest"]


def test_holding_out_a_file_the_fit_would_not_read_is_a_one_line_error(workspace, tmp_path):
    folder = workspace / "fixtures"
    stray = tmp_path / "elsewhere.yaml"  # a real fixture file, outside every path the fit reads
    stray.write_text(sorted(folder.glob("*.yaml"))[0].read_text(encoding="utf-8"), encoding="utf-8")
    result = CliRunner().invoke(main, ["fit", str(workspace / "rules.yaml"), "--fixtures", str(folder),
                                       "--holdout", str(stray), "--quiet"])
    assert result.exit_code != 0 and "Traceback" not in result.output
    assert "elsewhere.yaml" in result.output and "holds nothing out" in result.output
    assert len(result.output.strip().splitlines()) == 1


def test_holding_out_every_file_is_a_one_line_error(workspace):
    folder = workspace / "fixtures"
    result = CliRunner().invoke(main, ["fit", str(workspace / "rules.yaml"), "--fixtures", str(folder),
                                       "--holdout", str(folder), "--quiet"])
    assert result.exit_code != 0
    assert "every fixture file is held out" in result.output and "Traceback" not in result.output
    assert len(result.output.strip().splitlines()) == 1


@pytest.mark.parametrize("option", ["--recall-weight", "--recall-only-rest-weight"])
def test_a_recall_only_weight_without_a_recall_only_set_is_a_one_line_error(workspace, option):
    out = workspace / "weighted.yaml"
    result = CliRunner().invoke(main, ["fit", str(workspace / "rules.yaml"), "--fixtures", str(workspace / "fixtures"),
                                       option, "0.5", "--out", str(out), "--quiet"])
    assert result.exit_code != 0 and "Traceback" not in result.output
    assert option in result.output and "--recall-only PATH" in result.output
    assert len(result.output.strip().splitlines()) == 1
    assert not out.exists()


def test_an_output_path_that_cannot_be_written_is_a_one_line_error_before_the_fit(workspace, tmp_path):
    blocker = tmp_path / "taken"
    blocker.write_text("a file where a folder should be", encoding="utf-8")
    for option in ("--out", "--report"):
        result = CliRunner().invoke(main, ["fit", str(workspace / "rules.yaml"), "--fixtures",
                                           str(workspace / "fixtures"), option, str(blocker / "v2.yaml")])
        assert result.exit_code == 2 and "Traceback" not in result.output, result.output
        assert "taken/v2.yaml" in result.output and "cannot make its folder" in result.output
        assert "training windows" not in result.output  # said before the fit began (no fold reported)
        assert len(result.output.strip().splitlines()) == 1
    assert blocker.read_text(encoding="utf-8") == "a file where a folder should be"


def test_a_write_that_fails_after_the_fit_names_the_file_asked_for_and_keeps_the_old_one(workspace, tmp_path):
    out = tmp_path / "v2.yaml"
    out.write_text("an earlier revision\n", encoding="utf-8")
    (tmp_path / ".v2.yaml.tmp").mkdir()  # where the fit writes before it renames: a folder, so the write fails late
    result = CliRunner().invoke(main, ["fit", str(workspace / "rules.yaml"), "--fixtures", str(workspace / "fixtures"),
                                       "--out", str(out), "--folds", "3", "--quiet"])
    assert result.exit_code == 2 and "Traceback" not in result.output, result.output
    assert len(result.output.strip().splitlines()) == 1 and "cannot write" in result.output
    assert str(out) in result.output and ".tmp" not in result.output
    assert out.read_text(encoding="utf-8") == "an earlier revision\n"


def test_a_report_in_a_new_folder_is_written_there(workspace, tmp_path):
    report = tmp_path / "reports" / "fit" / "v2.json"
    result = CliRunner().invoke(main, ["fit", str(workspace / "rules.yaml"), "--fixtures", str(workspace / "fixtures"),
                                       "--report", str(report), "--folds", "3", "--quiet"])
    assert result.exit_code == 0, result.output
    assert json.loads(report.read_text(encoding="utf-8"))["cv"]


@pytest.mark.parametrize("contents, expected", [
    (None, "holds no fixture files"),  # a folder with no YAML in it
    ("", "holds no fixtures"),  # a file with nothing in it
    ("only excludes", "hold no knowledge (label extract)"),
])
def test_fixtures_a_fit_cannot_learn_from_are_a_one_line_error(workspace, tmp_path, contents, expected):
    path = tmp_path / "given"
    if contents is None:
        path.mkdir()
    elif contents == "only excludes":
        path.mkdir()
        for source in sorted((workspace / "fixtures").glob("*.yaml")):
            windows = [f for f in yaml.safe_load(source.read_text(encoding="utf-8")) if f["label"] != "extract"]
            (path / source.name).write_text(yaml.safe_dump(windows, sort_keys=False), encoding="utf-8")
    else:
        path = tmp_path / "given.yaml"
        path.write_text(contents, encoding="utf-8")
    result = CliRunner().invoke(main, ["fit", str(workspace / "rules.yaml"), "--fixtures", str(path), "--quiet",
                                       "--lexicon", "8", "--folds", "3"])
    assert result.exit_code == 2 and "Traceback" not in result.output, result.output
    assert expected in result.output and str(path) in result.output
    assert len(result.output.strip().splitlines()) == 1


def test_a_lexicon_no_term_qualifies_for_is_not_written_and_the_fit_says_so(workspace):
    outcome = fit_revision(str(workspace / "rules.yaml"), [str(workspace / "fixtures")], out_revision="n", folds=3,
                           lexicon=8, min_df=1000)
    assert outcome.report["fitted"]["lexicon"] == {"terms": 0, "limit": 8, "min_df": 1000}
    assert "lexicon:" not in outcome.text.split("\nfitted:")[0]  # no lexicon signal among the rules
    assert outcome.report["self_check"]["differ"] == []


def test_what_a_spare_keeps_drops_unless_flagged_and_a_stricter_level_skips_what_the_default_flags():
    from gate.fit.operating import Scored, decide, settle_spared

    spared = Scored("decision", False, True, "decision", 1.5, True, True)
    plain = Scored("decision", False, True, "decision", 1.5, True, False)
    assert decide(spared, 2.0) == ("drop", None) and decide(plain, 2.0) == ("skip", None)
    assert decide(spared, 1.0) == ("flag", "decision")
    scored = {"conservative": [spared, plain], "balanced": [spared, plain], "aggressive": [spared, plain]}
    thresholds = {"conservative": 2.0, "balanced": 1.0, "aggressive": 2.0}
    decisions = {lv: [decide(s, thresholds[lv]) for s in rows] for lv, rows in scored.items()}
    settled = settle_spared(decisions, scored, ("conservative", "balanced", "aggressive"), "balanced")
    assert settled["conservative"] == [("skip", None), ("skip", None)]  # the default level flags it: not dropped
    assert settled["aggressive"][0] == ("drop", None)  # at a looser level, what is not flagged drops


def test_operating_points_choose_the_loosest_threshold_that_keeps_the_promise():
    from gate.fit.operating import Scored, choose_threshold

    def row(target, score, judged=True):
        return Scored(target, False, True, "decision", score, judged)

    rows = [row("decision", 3.0), row("decision", 2.0), row("decision", 1.0), row("nothing durable", 2.5)]
    assert choose_threshold(rows, {"min_flag_precision": 0.9}) == 2.995  # below it, the 2.5 window is flagged
    assert choose_threshold(rows, {"min_extract_recall": 0.6}) == 1.995  # two of three extract windows
    # a --recall-only window's flag does not count against precision: every threshold keeps 0.9
    rows[3] = row("nothing durable", 2.5, judged=False)
    assert choose_threshold(rows, {"min_flag_precision": 0.9}) == 0.995


def test_the_penalty_pulls_weights_toward_the_prior_not_toward_zero():
    import numpy as np

    from gate.fit.model import fit_weights

    # Two types, one feature that fires on two windows of each: the data says nothing about it.
    x = np.array([[1.0], [1.0], [1.0], [1.0]])
    y = [0, 1, 0, 1]
    prior = np.array([[2.0, -2.0]])
    toward_zero = fit_weights(x, y, 2, l2=10.0, reference=False)
    toward_prior = fit_weights(x, y, 2, l2=10.0, reference=False, prior=prior)
    assert np.allclose(toward_zero, 0.0, atol=1e-6)
    assert toward_prior[0, 0] > 1.5 and toward_prior[0, 1] < -1.5


def test_a_row_weight_counts_that_row_more_in_the_fit():
    import numpy as np

    from gate.fit.model import fit_weights

    # One feature fires on one durable window and three that are not: unweighted it leans to
    # 'nothing durable'; counting the durable window five times turns it to evidence.
    x = np.array([[1.0], [1.0], [1.0], [1.0]])
    y = [1, 0, 0, 0]
    plain = fit_weights(x, y, 1, l2=0.1)
    weighted = fit_weights(x, y, 1, l2=0.1, sample_weight=[5.0, 1.0, 1.0, 1.0])
    assert plain[0, 0] < -0.5 and weighted[0, 0] > 0.2


def test_knowledge_of_a_type_no_signal_scores_is_fitted_and_cross_validated_without_error(workspace, tmp_path):
    # The tiny rules weigh toward preference, decision and convention only; a handoff note
    # (session_state) is still knowledge: the fit takes every such window as a row, and does not fail.
    import shutil

    folder = tmp_path / "fixtures"
    shutil.copytree(workspace / "fixtures", folder)
    notes = [_fx(f"state-{i}", f"eod: {area} half done on branch wip/{i}, next the retry path", "extract",
                 "session_state") for i, area in enumerate(["billing", "search", "auth", "the cli"])]
    (folder / "handoffs.yaml").write_text(yaml.safe_dump(notes, sort_keys=False), encoding="utf-8")
    outcome = fit_revision(str(workspace / "rules.yaml"), [str(folder)], out_revision="s", folds=3)
    assert outcome.report["self_check"]["differ"] == []
    assert outcome.report["cv"]["balanced"]["fixtures"]["windows"] == outcome.report["fitted"]["fixtures"]["windows"]


def _recall_only_runs(workspace, option: str, values) -> tuple:
    """(the last fixture file, {value: fit outcome}) with that file --recall-only and `option` at each value."""
    folder = workspace / "fixtures"
    last = sorted(folder.glob("*.yaml"))[-1]
    return last, {v: fit_revision(str(workspace / "rules.yaml"), [str(folder)], out_revision="w", folds=3,
                                  recall_only=[str(last)], **{option: v}) for v in values}


def _mean_best_score(outcome, windows) -> float:
    """The written revision's best type score, averaged over `windows`."""
    from gate.engine.compiler import compile_revision

    classifier = compile_revision(load_revision("w.yaml", text=outcome.text, display_name="w"))
    return sum(max(classifier.classify(w).scores.values(), default=0.0) for w in windows) / len(windows)


def test_recall_weight_is_recorded_and_raises_recall_only_knowledge(workspace):
    last, runs = _recall_only_runs(workspace, "recall_weight", (1.0, 6.0))
    assert "recall_weight" not in runs[1.0].report["fitted"]
    assert runs[6.0].report["fitted"]["recall_weight"] == 6.0
    assert runs[6.0].report["self_check"]["differ"] == []
    # the written weights score that set's knowledge windows higher than the unweighted fit's
    knowledge = [f["window"] for f in yaml.safe_load(last.read_text()) if f["label"] == "extract"]
    assert _mean_best_score(runs[6.0], knowledge) > _mean_best_score(runs[1.0], knowledge) + 0.2


def test_rest_weight_is_recorded_and_lets_a_recall_only_sets_one_offs_pull_less(workspace):
    last, runs = _recall_only_runs(workspace, "rest_weight", (1.0, 0.1))
    assert "rest_weight" not in runs[1.0].report["fitted"]
    assert runs[0.1].report["fitted"]["rest_weight"] == 0.1
    assert runs[0.1].report["self_check"]["differ"] == []
    # counted a tenth, that set's windows without knowledge push the weights down less: they score higher
    rest = [f["window"] for f in yaml.safe_load(last.read_text()) if f["label"] == "exclude"]
    assert rest
    assert _mean_best_score(runs[0.1], rest) > _mean_best_score(runs[1.0], rest) + 0.05


def test_type_prior_is_recorded_and_keeps_a_hand_typed_signal_typed(workspace):
    def prefer_margin(outcome):
        weights = next(s for s in yaml.safe_load(outcome.text)["signals"] if s["id"] == "prefer")["weights"]
        return weights.get("preference", 0) - weights.get("decision", 0)

    fixtures = [str(workspace / "fixtures")]
    # A strong penalty on the type part: toward zero it flattens 'prefer' across types; toward the
    # hand weights (preference only) it keeps most of their margin.
    flat = fit_revision(str(workspace / "rules.yaml"), fixtures, out_revision="p", folds=3, type_l2=50.0)
    primed = fit_revision(str(workspace / "rules.yaml"), fixtures, out_revision="q", folds=3,
                          type_prior=1.0, type_l2=50.0)
    assert flat.report["fitted"]["regularization"] == {"l2": 1.0, "type_l2": 50.0}
    assert primed.report["fitted"]["regularization"] == {"l2": 1.0, "type_l2": 50.0, "type_prior": 1.0}
    assert primed.report["self_check"]["differ"] == []
    assert prefer_margin(flat) < 0.5 < 2.0 < prefer_margin(primed)


def test_the_lexicon_reads_the_persons_words_as_sent_not_the_harness_notice_cut_out():
    from enginekit import classifier, drop_rule, match, revision_doc
    from gate.fit.rows import mass_check

    notice = "<ide_opened_file>The user opened the file /a/README.md in the IDE.</ide_opened_file>"
    span = drop_rule("harness-markup", match(r"<ide_[a-z_]+>[\s\S]*?</ide_[a-z_]+>"), scope="span", role="user",
                     mandatory=True, match=[notice + " hi"], no_match=["hi"])
    compiled = classifier(revision_doc([span]))
    fixture = Fixture("f1", [{"role": "user", "content": notice + "\nkeep diffs small"}], "extract", "preference", "n")
    row = mass_check(compiled, [fixture], ["d"], ["g"])[0]
    assert row.levels["balanced"].text == "keep diffs small"


def test_spread_is_the_range_of_the_scores_under_each_fold_seed_and_leaves_the_file_alone(workspace, fitted):
    spread = fit_revision(str(workspace / "rules.yaml"), [str(workspace / "fixtures")], out_revision="v2", folds=3,
                          lexicon=8, min_df=2, seed=13, spread=2)
    assert spread.text == fitted[0]  # thresholds still come from seed 13's folds
    assert spread.report["spread"]["seeds"] == [13, 14, 15]
    runs = [fit_revision(str(workspace / "rules.yaml"), [str(workspace / "fixtures")], out_revision="v2", folds=3,
                         lexicon=8, min_df=2, seed=seed).report["cv"] for seed in (13, 14, 15)]
    ranges = spread.report["spread"]["cv"]
    for level, by_subset in ranges.items():
        for subset, by_score in by_subset.items():
            for score, low_high in by_score.items():
                values = [run[level][subset]["fitted"][score] for run in runs]
                values = [v for v in values if v is not None]
                assert low_high == ([min(values), max(values)] if values else None), (level, subset, score)
    assert "spread" not in fitted[1]  # asked for only
    text = CliRunner().invoke(main, ["fit", str(workspace / "rules.yaml"), "--fixtures", str(workspace / "fixtures"),
                                     "--folds", "3", "--spread", "1", "--quiet"])
    assert text.exit_code == 0, text.output
    assert "spread over fold seeds 13, 14 (fitted weights, lowest..highest)" in text.output


def test_spread_takes_lowest_and_highest_per_score_and_skips_unmeasured():
    from gate.fit.crossval import REPORTED, spread

    def table(recall, precision):
        scores = dict.fromkeys(REPORTED)
        scores.update(extract_recall=recall, flag_precision=precision)
        return {"balanced": {"all": {"windows": 9, "fitted": scores, "hand": dict(scores, extract_recall=0.0)}}}

    got = spread([table(0.9, None), table(0.8, 0.95), table(0.85, 0.91)])["balanced"]["all"]
    assert got["extract_recall"] == [0.8, 0.9]  # the fitted weights' scores, not the hand ones
    assert got["flag_precision"] == [0.91, 0.95]  # a fold seed that measured nothing is left out
    assert got["type_accuracy"] is None


def test_spread_reads_each_fold_seed_where_the_seed_moves_the_scores(tmp_path):
    # Six equal sources plus three whose signals point the wrong way: which sources share a
    # fold (the seed's doing) changes what the held-out windows score, so seeds 13 and 14 differ.
    (tmp_path / "rules.yaml").write_text(rules_text(), encoding="utf-8")
    write_corpus(tmp_path / "fixtures", parts=6)
    for k in range(3):
        odd = [_fx(f"odd-pref-{k}", f"I prefer you run it on box {k} now", "exclude", None),
               _fx(f"odd-dec-{k}", f"node {k} images are pinned by digest", "extract", "decision")]
        (tmp_path / "fixtures" / f"odd{k}.yaml").write_text(yaml.safe_dump(odd, sort_keys=False), encoding="utf-8")
    args = (str(tmp_path / "rules.yaml"), [str(tmp_path / "fixtures")])
    ranges = fit_revision(*args, out_revision="v2", folds=4, seed=13, spread=1).report["spread"]["cv"]
    runs = [fit_revision(*args, out_revision="v2", folds=4, seed=seed).report["cv"] for seed in (13, 14)]
    moved = 0
    for level, by_subset in ranges.items():
        for subset, by_score in by_subset.items():
            for score, low_high in by_score.items():
                values = [run[level][subset]["fitted"][score] for run in runs if run[level][subset]["fitted"][score] is not None]
                assert low_high == ([min(values), max(values)] if values else None), (level, subset, score)
                moved += bool(low_high and low_high[0] < low_high[1])
    assert moved  # seed 14's folds were read, not seed 13's twice


def test_lexicon_candidates_are_words_pairs_and_the_persons_pronouns_never_lone_function_words():
    from gate.fit.terms import candidates

    texts = ["i want the tabs, not spaces", "i want my commits small", "we all rebase, i want that"]  # as read: lowercased
    found = candidates(texts, ["a", "b", "c"], min_df=2)
    assert {"i", "want", "i want"} <= set(found)  # the first person, alone and in a pair
    assert "the" not in found and "not" not in found  # function words alone are no evidence
    assert candidates(texts, ["a", "a", "b"], min_df=2) == []  # two sources only: a topic, not wording
    assert "x" not in candidates(["x = 1", "for x in y", "x"], ["a", "b", "c"], min_df=1)  # one letter: a name

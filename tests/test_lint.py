"""`gate lint`: examples, the keyword prefilter, dead and catastrophic patterns, located."""

import os
import subprocess
import sys

import pytest

from enginekit import MINI, drop_rule, dump, line_col, match, revision_doc, run_gate, signal, write_rules
from gate.evaluation.lint import lint_file


def lint(tmp_path, drop_rules=(), signals=(), **top):
    text = dump(revision_doc(drop_rules, signals, **top))
    path = write_rules(tmp_path, text)
    return text, path, [str(p) for p in lint_file(str(path))]


def only(problems):
    assert len(problems) == 1, problems
    return problems[0]


def test_the_mini_revision_is_clean():
    assert lint_file(str(MINI)) == []
    result = run_gate("lint", MINI)
    assert result.returncode == 0, result.stderr
    assert result.stdout.decode().strip() == f"{MINI}: ok"


def test_clean_rules_of_every_scope_pass(tmp_path):
    rules = [drop_rule("progress", match(r"^chunk {{num}} of {{num}}$"), scope="turn",
                       match=["chunk 3 of 10"], no_match=["chunk size is ten"]),
             drop_rule("tool-only", {"turn_flag": "tool_only"}, scope="turn",
                       match=[{"role": "assistant", "content": [{"type": "tool_use", "id": "a", "name": "x", "input": {}}]}],
                       no_match=["plain words"])]
    signals = [signal("prefer", match(r"\bi prefer\b", keywords=["prefer"]), {"preference": 3}, role="user",
                      match=["I prefer tabs"], no_match=[{"role": "assistant", "content": "I prefer tabs"}])]
    assert lint(tmp_path, rules, signals)[2] == []


def test_match_example_that_does_not_match(tmp_path):
    rule = drop_rule("deploys", match(r"\bdeployed\b"), match=["deployed to prod", "shipped to prod"],
                     no_match=["nothing"])
    text, path, problems = lint(tmp_path, [rule])
    line, column = line_col(text, "shipped to prod")
    assert only(problems) == (f"{path}:{line}:{column}: rule 'deploys': does not match its match example "
                              "'shipped to prod'")


def test_no_match_example_that_matches(tmp_path):
    sig = signal("always", match(r"\balways\b"), {"preference": 2}, match=["always rebase"],
                 no_match=["we always squash"])
    text, path, problems = lint(tmp_path, signals=[sig])
    line, column = line_col(text, "we always squash")
    assert only(problems) == f"{path}:{line}:{column}: signal 'always': matches its no_match example 'we always squash'"


def test_keyword_prefilter_that_would_hide_a_match(tmp_path):
    rule = drop_rule("deploys", match(r"\bdeploy(?:ed|ing)?\b", keywords=["deployed"]),
                     match=["deployed to prod", "deploying to prod"], no_match=["nothing"])
    text, path, problems = lint(tmp_path, [rule])
    line, column = line_col(text, "deploying to prod")
    assert f"{path}:{line}:{column}: rule 'deploys': the keyword prefilter changes this example's outcome; " \
           "add the missing keyword" in problems
    assert all(p.startswith(f"{path}:{line}:{column}:") for p in problems)


def test_an_optimized_engine_that_disagrees_on_an_example_fails_lint(tmp_path, monkeypatch):
    """If the RE2 pattern set ever read a pattern wrongly, lint names the example, not a silent miss."""
    import gate.engine.patternset as patternset

    rule = drop_rule("rotation", match(r"\brotate the signing keys\b"), match=["we rotate the signing keys monthly"],
                     no_match=["keys are fine"])
    assert lint(tmp_path, [rule])[2] == []
    wrong = patternset.Translation(("(?i)no such text anywhere",), True)  # an "exact" translation that never hits
    monkeypatch.setattr(patternset, "_set_form", lambda pattern, flags=0: tuple(wrong))
    text, path, problems = lint(tmp_path, [rule])
    line, column = line_col(text, "we rotate the signing keys monthly")
    assert f"{path}:{line}:{column}: rule 'rotation': the optimized classifier (derived literals, pattern set) " \
           "decides this example differently; an engine bug: keep the example and report it" in problems


def test_a_keyword_vocabulary_covers_every_term(tmp_path):
    rule = drop_rule("heartbeat", match(r"\b{{hb_terms}}\b", keywords=["{{hb_terms}}"]), scope="turn",
                     match=["ETA 5m", "12 it/s", "loss 0.3"], no_match=["beta"])
    assert lint(tmp_path, [rule])[2] == []


def test_dead_pattern(tmp_path):
    rule = drop_rule("either", {"any": [match(r"\bfoo\b"), match(r"\bzzz-never\b")]}, match=["foo bar"],
                     no_match=["bar"])
    text, path, problems = lint(tmp_path, [rule])
    line, column = line_col(text, "pattern: \\bzzz-never")
    assert only(problems) == (f"{path}:{line}:{column}: rule 'either': this pattern matches none of the rule's "
                              "examples; it may never match (add an example)")


def test_unless_pattern_is_spared_when_a_no_match_example_uses_it(tmp_path):
    rule = drop_rule("deploys", match(r"\bdeploy\b"), unless=[match(r"\bnever\b")],
                     match=["deploy now"], no_match=["never deploy"])
    assert lint(tmp_path, [rule])[2] == []


def test_catastrophic_pattern_fails_lint_located(tmp_path):
    rule = drop_rule("slow", match(r"(x+x+)+y"), match=["xxy"], no_match=["abc"])
    text = dump(revision_doc([rule]))
    path = write_rules(tmp_path, text)
    result = run_gate("lint", path)
    assert result.returncode == 1 and "Traceback" not in result.stderr.decode()
    line, column = line_col(text, "pattern: (x+x+)+y")
    problem = only(result.stderr.decode().strip().splitlines())
    assert problem.startswith(f"{path}:{line}:{column}: rule 'slow': pattern backtracks catastrophically")
    assert "nested quantifiers" in problem


def test_catastrophic_ignore_pattern_fails_lint(tmp_path):
    condition = {"line_share": {"pattern": r"^step {{num}}$", "min_share": 0.5, "ignore": r"(x+x+)+y"}}
    rule = drop_rule("steps", condition, scope="turn", match=["step 1\nstep 2"], no_match=["prose"])
    text, path, problems = lint(tmp_path, [rule])
    line, column = line_col(text, "ignore: (x+x+)+y")
    column += len("ignore: ")
    assert only(problems).startswith(f"{path}:{line}:{column}: rule 'steps': pattern backtracks catastrophically")


def test_catastrophic_noise_marker(tmp_path):
    markers = [{"id": "slow", "description": "bad", "pattern": r"(a+)+$"}]
    text, path, problems = lint(tmp_path, noise_markers=markers)
    assert len(problems) == 1 and "noise marker 'slow'" in problems[0]
    assert "backtracks catastrophically" in problems[0]


def test_noise_marker_that_does_not_compile(tmp_path):
    markers = [{"id": "broken", "description": "bad", "pattern": r"(unclosed"}]
    text, path, problems = lint(tmp_path, noise_markers=markers)
    line, column = line_col(text, "pattern: (unclosed")
    column += len("pattern: ")
    problem = only(problems)
    assert problem.startswith(f"{path}:{line}:{column}: noise marker 'broken': pattern does not compile")
    result = run_gate("lint", path)
    assert result.returncode == 1 and "Traceback" not in result.stderr.decode()


def test_pattern_that_does_not_compile(tmp_path):
    rule = drop_rule("broken", match(r"[a-"), match=["a"], no_match=["b"])
    text, path, problems = lint(tmp_path, [rule])
    assert "rule 'broken': pattern does not compile" in only(problems)


def test_recent_shape_examples_carry_their_recent_windows(tmp_path):
    recent = drop_rule("recent", {"recent_shape": True},
                       match=[{"window": "Deploy 43 finished in 9 minutes", "recent": ["Deploy 42 finished in 13 minutes"]}],
                       no_match=[{"window": "Deploy 43 finished in 9 minutes", "recent": ["Rollback 42 finished"]},
                                 "Deploy 43 finished in 9 minutes"])
    assert lint(tmp_path, [recent])[2] == []
    wrong = drop_rule("recent", {"recent_shape": True},
                      match=[{"window": "Deploy 43 finished", "recent": ["Rollback 42 finished"]}], no_match=["x"])
    problems = lint(tmp_path, [wrong])[2]
    assert len(problems) == 1 and "does not match its match example" in problems[0]


@pytest.mark.parametrize("bad_first", [False, True])
def test_lint_several_files_reports_each_in_the_order_given(tmp_path, bad_first):
    # several files are linted in parallel: the report still follows the command line
    bad = write_rules(tmp_path, dump(revision_doc([drop_rule("r", match(r"\bfoo\b"), match=["foo"], no_match=["foo bar"])])),
                      name="bad.yaml")
    files = [bad, MINI, MINI] if bad_first else [MINI, MINI, bad]
    result = run_gate("lint", *files)
    assert result.returncode == 1
    lines = {str(MINI): f"{MINI}: ok", str(bad): f"{bad}: FAILED, 1 problem(s)"}
    assert result.stdout.decode().splitlines() == [lines[str(f)] for f in files]
    assert len(result.stderr.decode().strip().splitlines()) == 1


@pytest.mark.parametrize("pattern", [r"\bfoo\b", r"^[ \t]*\d+[ \t]*$", r"[a-z0-9._-]+@[a-z0-9.-]+\.[a-z]{2,}"])
def test_ordinary_patterns_are_not_called_catastrophic(tmp_path, pattern):
    rule = drop_rule("ok", match(pattern), match=["foo", "  42 ", "a.b@example.com"], no_match=["--"])
    problems = lint(tmp_path, [rule])[2]
    assert not any("catastrophically" in p for p in problems), problems


def test_a_clean_lint_is_remembered_for_the_same_bytes_and_code_and_a_problem_never_is(tmp_path):
    env = {"GATE_CACHE_DIR": str(tmp_path / "cache")}
    clean = write_rules(tmp_path, dump(revision_doc([drop_rule("hb", match(r"\bepoch \d+"), match=["epoch 3"],
                                                                   no_match=["prose"])])), "clean.yaml")
    assert run_gate("lint", clean, env=env).returncode == 0
    markers = list((tmp_path / "cache" / "lint").iterdir())
    assert len(markers) == 1  # remembered
    assert run_gate("lint", clean, env=env).returncode == 0
    assert list((tmp_path / "cache" / "lint").iterdir()) == markers  # a hit writes nothing new

    # the remembered verdict is read, not recomputed: a marker planted for a broken file's very
    # bytes makes it pass; one byte more in the file and it is linted again
    broken = write_rules(tmp_path, dump(revision_doc([drop_rule("hb", match(r"\bepoch \d+"), match=["no epoch"],
                                                                    no_match=["prose"])])), "broken.yaml")
    first = run_gate("lint", broken, env=env)
    assert first.returncode == 1 and "broken.yaml: FAILED" in first.stdout.decode()
    assert len(list((tmp_path / "cache" / "lint").iterdir())) == 1  # a problem is never remembered
    # planted by the interpreter the CLI runs in, outside the checkout: the installed gate's code
    plant = "import sys; from gate.evaluation import lint_cache; lint_cache.remember_clean(sys.argv[1])"
    subprocess.run([sys.executable, "-c", plant, str(broken)], cwd=tmp_path, check=True,
                   env={**os.environ, **env})
    assert run_gate("lint", broken, env=env).returncode == 0
    broken.write_text(broken.read_text() + "\n")
    assert run_gate("lint", broken, env=env).returncode == 1


def test_a_pattern_that_finished_in_budget_is_remembered_and_a_slow_one_never_is(tmp_path):
    env = {"GATE_CACHE_DIR": str(tmp_path / "cache")}
    rule = drop_rule("slow", match(r"(x+x+)+y"), match=["xxy"], no_match=["abc"])
    path = write_rules(tmp_path, dump(revision_doc([rule])))
    for _ in range(2):  # never remembered: found again each time
        result = run_gate("lint", path, env=env)
        assert result.returncode == 1 and "backtracks catastrophically" in result.stderr.decode()
    # a pattern remembered as fast (planted, with the CLI's own interpreter and code) is not searched
    # again: the same file then lints clean, which shows the remembered verdict is what is read
    plant = ("import sys, regex; from gate.evaluation import lint_cache; "
             "lint_cache.remember_fast(sys.argv[1], regex.compile(sys.argv[1], regex.I | regex.M).flags)")
    subprocess.run([sys.executable, "-c", plant, r"(x+x+)+y"], cwd=tmp_path, check=True, env={**os.environ, **env})
    assert run_gate("lint", path, env=env).returncode == 0

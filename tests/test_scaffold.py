"""`gate init`: a starting rules repository that passes its own check at once, and whose
pre-commit hooks stop a rules change that breaks an example, with the located error."""

import json
import os
import re

import pytest
import yaml

from repokit import gate, git, init_repository, replace_value, run
from gate.language.loader import load_revision
from gate.scaffold.repository import newest_shipped_revision


@pytest.fixture(scope="module")
def made(tmp_path_factory):
    """(the new repository, the shipped revision it was made from: path, text)."""
    path = tmp_path_factory.mktemp("init") / "our-rules"
    source = newest_shipped_revision()
    init_repository(path)
    return path, source


@pytest.fixture(scope="module")
def repo(made):
    return made[0]


def test_the_new_repository_passes_its_own_check_at_once(repo):
    # (its lint and fixture hooks pass in test_pre_commit_stops_a_rules_change_that_breaks_an_example)
    result = gate("eval", "--check", cwd=repo)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "check at balanced: PASSED" in result.stdout
    fixtures = gate("fixtures", "--format", "json", cwd=repo)
    assert fixtures.returncode == 0, fixtures.stderr
    counts = json.loads(fixtures.stdout)
    assert set(counts["labels"]) == {"drop", "exclude", "extract"}  # a starter set of every label


def test_first_revision_is_the_newest_shipped_one_under_its_own_name(made):
    repo, (source_path, source_text) = made
    source = load_revision(source_path, text=source_text)
    copy = load_revision(str(repo / "rules" / "v1.0.yaml"))
    assert copy.revision == "v1.0" and copy.policy.startswith("v1.0+")
    assert {k: v for k, v in copy.canonical.items() if k != "revision"} == \
           {k: v for k, v in source.canonical.items() if k != "revision"}
    assert gate("hash", "rules/v1.0.yaml", cwd=repo).stdout.strip() == copy.policy
    note = yaml.safe_load((repo / "rules" / "v1.0.yaml").read_text())["description"]
    assert f"gate's shipped {source.revision} (policy {source.policy})" in " ".join(note.split())
    assert [p.name for p in (repo / "rules").iterdir()] == ["v1.0.yaml"]


def test_every_yaml_file_names_a_schema_that_is_there(repo):
    files = sorted((repo / "rules").glob("*.yaml")) + sorted((repo / "fixtures").glob("*.yaml"))
    assert len(files) >= 2
    for path in files:
        first = path.read_text().splitlines()[0]
        match = re.fullmatch(r"# yaml-language-server: \$schema=(\S+)", first)
        assert match, f"{path}: {first}"
        assert (path.parent / match[1]).resolve().is_file(), f"{path}: {match[1]} does not resolve"


def test_the_hooks_and_the_workflow_are_in_place(repo):
    config = yaml.safe_load((repo / ".pre-commit-config.yaml").read_text())
    assert [h["id"] for h in config["repos"][0]["hooks"]] == ["gate-lint", "gate-fixtures", "gate-eval-check"]
    workflow = yaml.safe_load((repo / ".github" / "workflows" / "gate.yml").read_text())
    triggers = workflow[True]  # YAML 1.1 reads the key `on` as true
    assert triggers["pull_request"]["paths"] == ["rules/**", "fixtures/**"]
    assert "last_report.json" in (repo / ".gitignore").read_text()
    assert git("status", "--porcelain", cwd=repo) == ""  # gate eval's report is ignored


def test_refuses_a_directory_that_is_not_empty(tmp_path):
    target = tmp_path / "existing"
    target.mkdir()
    (target / "notes.txt").write_text("ours")
    result = gate("init", str(target), cwd=tmp_path)
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [
        f"{target}: is not empty (notes.txt); gate init writes a new repository into an empty directory "
        "(--force writes into this one, replacing files of the same name)"]
    assert os.listdir(target) == ["notes.txt"]

    (target / "README.md").write_text("our readme")
    forced = gate("init", "--force", str(target), cwd=tmp_path)
    assert forced.returncode == 0, forced.stderr
    assert "replaced README.md" in forced.stdout
    assert (target / "notes.txt").read_text() == "ours"  # what --force does not write is left alone
    assert (target / "rules" / "v1.0.yaml").is_file()


def test_a_path_that_is_a_file_is_refused(tmp_path):
    target = tmp_path / "file"
    target.write_text("x")
    result = gate("init", str(target), cwd=tmp_path)
    assert result.returncode != 0 and "Traceback" not in result.stderr
    assert target.read_text() == "x"


def test_pre_commit_stops_a_rules_change_that_breaks_an_example(tmp_path):
    repo = tmp_path / "team-rules"
    init_repository(repo)
    rules = repo / "rules" / "v1.0.yaml"
    text = rules.read_text()
    first = yaml.safe_load(text)["drop_rules"][0]["id"]
    # A rules change that narrows the first drop rule until its own example no longer matches.
    rules.write_text(replace_value(text, ("drop_rules", 0, "when"), "{chars: {max: 1}}"))
    git("commit", "-q", "-am", f"narrow {first}", cwd=repo)

    hooks = run(["pre-commit", "run", "--all-files"], repo, PRE_COMMIT_HOME=str(tmp_path / "pre-commit-home"))
    assert hooks.returncode == 1, hooks.stdout + hooks.stderr
    out = hooks.stdout
    assert re.search(r"^gate lint\.+Failed$", out, re.MULTILINE), out
    assert re.search(rf"^rules/v1\.0\.yaml:\d+:\d+: rule '{re.escape(first)}': does not match its match example",
                     out, re.MULTILINE), out
    assert "Traceback" not in out

    git("revert", "--no-edit", "HEAD", cwd=repo)  # the fix
    hooks = run(["pre-commit", "run", "--all-files"], repo, PRE_COMMIT_HOME=str(tmp_path / "pre-commit-home"))
    assert hooks.returncode == 0, hooks.stdout + hooks.stderr
    for name in ("gate lint", "gate fixtures", "gate eval --check"):
        assert re.search(rf"^{re.escape(name)}\.+Passed$", hooks.stdout, re.MULTILINE), hooks.stdout


def test_the_eval_hook_names_the_failed_floor_and_its_fixtures(tmp_path):
    repo = tmp_path / "team-rules"
    init_repository(repo)
    rules = repo / "rules" / "v1.0.yaml"
    text = rules.read_text()
    # A flag threshold no score reaches: every extract fixture is skipped.
    levels = yaml.safe_load(text)["levels"]
    rules.write_text(replace_value(text, ("flag", "thresholds"), "{" + ", ".join(f"{lv}: 1000" for lv in levels) + "}"))
    result = gate("eval", "--check", "--quiet", cwd=repo)
    assert result.returncode == 1
    lines = result.stdout.splitlines()
    assert lines[0].startswith("gate eval --check FAILED: rules/v1.0.yaml (v1.0+")
    assert lines[1].startswith("  extract_recall: 0.000 (0/")
    assert lines[1].endswith("is below the floor 0.8")
    extract_ids = [f["id"] for f in yaml.safe_load((repo / "fixtures" / "extract.yaml").read_text())]
    listed = [re.match(r"    fixtures/extract\.yaml:\d+  (\S+) \(expected \w+\): skipped", line) for line in lines[2:]]
    assert [m[1] for m in listed if m] == extract_ids

"""Policy ids: documentation and formatting keep the id, behaviour changes it; `gate policy find`."""

import os
import subprocess

import pytest
import yaml

from enginekit import MINI, classifier, dump, run_gate, user, write_rules
from gate.language.loader import load_revision

VALID = MINI.read_text(encoding="utf-8")


def policy_of(text: str) -> str:
    return load_revision("rules.yaml", text=text).policy


def edit(old: str, new: str) -> str:
    assert VALID.count(old) == 1, old
    return VALID.replace(old, new)


BASE_ID = policy_of(VALID)

SAME_BEHAVIOUR = {
    "comment": VALID.replace("drop_rules:\n", "# noise first\ndrop_rules:  # turn rules strip\n"),
    "blank lines and trailing spaces": VALID.replace("\n  - id:", "\n\n\n  - id:").replace("\n", "   \n"),
    "block style instead of flow": dump(yaml.safe_load(VALID)),
    "key order": dump(dict(reversed(list(yaml.safe_load(VALID).items())))),
    "revision description": edit("description: tiny revision for the engine tests", "description: reworded"),
    "rule description": edit("description: progress lines", "description: training progress lines"),
    "vocabulary description": edit("description: heartbeat words", "description: words of a heartbeat"),
    "examples": edit('match: ["I prefer small PRs"]', 'match: ["I prefer small PRs", "I prefer rebase"]'),
    "metadata": edit("  - id: decided\n", "  - id: decided\n    metadata: {owner: team-a, ticket: 12}\n"),
    "quoting style": edit("pattern: '\\d+(?:\\.\\d+)?'", 'pattern: "\\\\d+(?:\\\\.\\\\d+)?"'),
}

NEW_BEHAVIOUR = {
    "pattern": edit("'\\bi prefer\\b'", "'\\bi (?:really )?prefer\\b'"),
    "keywords": edit("keywords: [prefer]", "keywords: [prefer, prefers]"),
    "weight": edit("weights: {preference: 4}", "weights: {preference: 5}"),
    "level threshold": edit("balanced: 3,", "balanced: 4,"),
    "min_level": edit("    min_level: conservative\n    weights: {decision: 4}", "    min_level: balanced\n    weights: {decision: 4}"),
    "role": edit("    role: user\n", "    role: any\n"),
    "default level": edit("default_level: balanced", "default_level: aggressive"),
    "instructions": edit("instructions: Store only durable facts.", "instructions: Store only durable facts, briefly."),
    "category description": edit("decision: a decision made by the team}", "decision: a choice made by the team}"),
    "vocabulary term": edit("terms: [epoch, eta, loss, it/s]", "terms: [epoch, eta, loss, it/s, step]"),
    "fragment": edit("pattern: '\\d+(?:\\.\\d+)?'", "pattern: '\\d+'"),
    "noise marker": edit("pattern: '\\bepoch\\b'}]", "pattern: '\\bepochs?\\b'}]"),
    "check threshold": edit("extract_recall: 0.8}", "extract_recall: 0.85}"),
    "revision name": edit("revision: v0.1", "revision: v0.2"),
}


@pytest.mark.parametrize("name", SAME_BEHAVIOUR)
def test_documentation_and_formatting_keep_the_id(name):
    assert policy_of(SAME_BEHAVIOUR[name]) == BASE_ID


@pytest.mark.parametrize("name", NEW_BEHAVIOUR)
def test_behaviour_changes_give_a_new_id(name):
    new = policy_of(NEW_BEHAVIOUR[name])
    assert new != BASE_ID
    assert new.split("+")[0] == ("v0.2" if name == "revision name" else "v0.1")


def test_id_is_revision_plus_hash():
    revision, _, digest = BASE_ID.partition("+")
    assert revision == "v0.1" and len(digest) == 12 and int(digest, 16) >= 0


def test_every_decision_carries_the_policy_id():
    judge = classifier(VALID).classify
    for window in ([user("I prefer tabs")], [user("hello")], [], None):
        assert judge(window).policy == BASE_ID


def test_gate_hash(tmp_path):
    original = write_rules(tmp_path, VALID, "a.yaml")
    commented = write_rules(tmp_path, SAME_BEHAVIOUR["comment"], "b.yaml")
    changed = write_rules(tmp_path, NEW_BEHAVIOUR["pattern"], "c.yaml")
    outputs = [run_gate("hash", path) for path in (original, commented, changed)]
    assert all(out.returncode == 0 for out in outputs)
    ids = [out.stdout.decode().strip() for out in outputs]
    assert ids[0] == BASE_ID == ids[1]
    assert ids[2] != BASE_ID and ids[2] == policy_of(NEW_BEHAVIOUR["pattern"])


def test_gate_hash_refuses_a_revision_whose_patterns_do_not_compile(tmp_path):
    broken = write_rules(tmp_path, VALID.replace(r"'\bi prefer\b'", "'(i prefer'"), "broken.yaml")
    result = run_gate("hash", broken)
    assert result.returncode != 0 and result.stdout.decode().strip() == ""
    message = result.stderr.decode()
    assert "broken.yaml:" in message and "does not compile" in message and "Traceback" not in message


# -- gate policy find -------------------------------------------------------

def git(repo, *args):
    env = dict(os.environ, GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@example.com", GIT_COMMITTER_NAME="t",
               GIT_COMMITTER_EMAIL="t@example.com", GIT_CONFIG_GLOBAL=os.devnull, GIT_CONFIG_NOSYSTEM="1")
    return subprocess.run(["git", *args], cwd=repo, env=env, check=True, capture_output=True, text=True).stdout.strip()


@pytest.fixture()
def repo(tmp_path):
    """A git repository whose rules/ held the mini revision, then a changed one."""
    root = tmp_path / "repo"
    (root / "rules").mkdir(parents=True)
    git(root, "init", "-q")
    write_rules(root / "rules", VALID, "v0.1.yaml")
    git(root, "add", "rules")
    git(root, "commit", "-q", "-m", "first")
    first = git(root, "rev-parse", "HEAD")
    write_rules(root / "rules", NEW_BEHAVIOUR["pattern"], "v0.1.yaml")
    git(root, "commit", "-q", "-am", "second")
    second = git(root, "rev-parse", "HEAD")
    (root / "notes.txt").write_text("not rules")
    return root, first, second


def test_policy_find_in_the_rules_dir(repo):
    root, _, second = repo
    current = policy_of(NEW_BEHAVIOUR["pattern"])
    result = run_gate("policy", "find", current, cwd=root)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.decode().splitlines()
    assert lines[0] == os.path.join("rules", "v0.1.yaml")
    assert f"{second[:12]}:rules/v0.1.yaml" in lines  # the committed copy is in history too


def test_policy_find_in_git_history(repo):
    root, first, _ = repo
    result = run_gate("policy", "find", BASE_ID, cwd=root)
    assert result.returncode == 0, result.stderr
    assert result.stdout.decode().splitlines() == [f"{first[:12]}:rules/v0.1.yaml"]


def test_policy_find_with_a_rules_dir_outside_the_current_directory(repo, tmp_path):
    root, first, _ = repo
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    result = run_gate("policy", "find", BASE_ID, "--rules-dir", root / "rules", cwd=elsewhere)
    assert result.returncode == 0, result.stderr
    assert result.stdout.decode().splitlines() == [f"{first[:12]}:rules/v0.1.yaml"]


def test_policy_find_from_a_subdirectory(repo):
    root, first, _ = repo
    (root / "docs").mkdir()
    result = run_gate("policy", "find", BASE_ID, "--rules-dir", "../rules", cwd=root / "docs")
    assert result.returncode == 0, result.stderr
    assert result.stdout.decode().splitlines() == [f"{first[:12]}:rules/v0.1.yaml"]


def test_policy_find_unknown_id(repo):
    root, _, _ = repo
    result = run_gate("policy", "find", "v9.9+000000000000", cwd=root)
    assert result.returncode == 1 and result.stdout == b""
    assert "v9.9+000000000000" in result.stderr.decode() and "Traceback" not in result.stderr.decode()


def test_policy_find_without_git(tmp_path):
    rules = tmp_path / "rules"
    rules.mkdir()
    write_rules(rules, VALID, "v0.1.yaml")
    write_rules(rules, "not: [valid", "broken.yaml")  # files that do not load are skipped
    result = run_gate("policy", "find", BASE_ID, "--rules-dir", rules, cwd=tmp_path,
                      env={"GIT_CEILING_DIRECTORIES": str(tmp_path.parent)})
    assert result.returncode == 0, result.stderr
    assert result.stdout.decode().splitlines() == [str(rules / "v0.1.yaml")]

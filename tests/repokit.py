"""A rules repository as a team would have it: made by `gate init`, driven through
the real `gate` command, git and pre-commit in subprocesses."""

import os
import shutil
import subprocess
import sys

import yaml

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def environment(**extra) -> dict:
    """The test's environment, with the interpreter's scripts (gate, pre-commit) first on PATH
    and a git identity, so commits work on a machine that has none configured."""
    env = dict(os.environ)
    env["PATH"] = os.path.dirname(sys.executable) + os.pathsep + env.get("PATH", "")
    env.update({"GIT_AUTHOR_NAME": "gate tests", "GIT_AUTHOR_EMAIL": "tests@gate.invalid",
                "GIT_COMMITTER_NAME": "gate tests", "GIT_COMMITTER_EMAIL": "tests@gate.invalid",
                "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull})
    env.update(extra)
    return env


def run(args, cwd, **env) -> subprocess.CompletedProcess:
    return subprocess.run(args, cwd=cwd, env=environment(**env), capture_output=True, text=True, timeout=300)


def gate(*args, cwd) -> subprocess.CompletedProcess:
    command = shutil.which("gate", path=environment()["PATH"])
    assert command, "the gate command is not installed (pip install -e '.[test]')"
    return run([command, *args], cwd)


def git(*args, cwd) -> str:
    result = run(["git", *args], cwd)
    assert result.returncode == 0, result.stderr
    return result.stdout.strip()


def init_repository(path) -> str:
    """`gate init PATH`, everything committed; returns the commit."""
    result = gate("init", str(path), cwd=os.path.dirname(str(path)))
    assert result.returncode == 0, result.stderr
    git("add", "-A", cwd=path)
    git("commit", "-q", "-m", "start from gate init", cwd=path)
    return git("rev-parse", "HEAD", cwd=path)


def replace_values(text: str, edits) -> str:
    """`text` with the YAML value at each path (keys and list indices) replaced, everything
    else byte for byte: an edit as a person makes it. `edits`: [(path, replacement), ...]."""
    root = yaml.compose(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    spans = []
    for path, replacement in edits:
        node = _node(root, path)
        start, end = node.start_mark.index, node.end_mark.index
        end = start + len(text[start:end].rstrip())  # a block value ends where the next key starts
        spans.append((start, end, replacement))
    for start, end, replacement in sorted(spans, reverse=True):
        text = text[:start] + replacement + text[end:]
    return text


def replace_value(text: str, path: tuple, replacement: str) -> str:
    return replace_values(text, [(path, replacement)])


def _node(node, path):
    for step in path:
        node = node.value[step] if isinstance(step, int) else next(v for k, v in node.value if k.value == step)
    return node

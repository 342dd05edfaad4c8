"""Every error in a rules file is ONE located line: file:line:col, the rule, what was expected.

Each case edits the valid tests/data/mini.yaml in one place, then checks the
loader's message, and that the CLI prints that line alone and exits non-zero
without a traceback.
"""

import pytest

from enginekit import MINI, classifier, run_gate, write_rules
from gate.engine.compiler import compile_revision
from gate.language.errors import GateError
from gate.language.loader import load_revision

VALID = MINI.read_text(encoding="utf-8")


def position(text: str, needle: str, nth: int = 0, shift: int = 0) -> tuple[int, int]:
    """1-based line and column of the nth occurrence of `needle`, plus `shift` characters."""
    offset = -1
    for _ in range(nth + 1):
        offset = text.index(needle, offset + 1)
    offset += shift
    return text.count("\n", 0, offset) + 1, offset - (text.rfind("\n", 0, offset) + 1) + 1


def edit(old: str, new: str, count: int = 1) -> str:
    assert VALID.count(old) >= count, old
    return VALID.replace(old, new, count)


# (name, edited text, (needle, nth, shift) locating the error, fragments the message must contain)
CASES = [
    ("unknown key",
     edit("    role: any\n", "    role: any\n    colour: red\n"),
     ("colour", 0, 0), ["rule 'heartbeat'", "unknown key 'colour'", "expected one of"]),
    ("unknown top-level key",
     edit("instructions:", "instruction_text: x\ninstructions:"),
     ("instruction_text", 0, 0), ["unknown key 'instruction_text'"]),
    ("bad enum min_level",
     edit("    min_level: conservative\n", "    min_level: sometimes\n"),
     ("sometimes", 0, 0), ["rule 'heartbeat'", "min_level must be one of conservative, balanced, aggressive"]),
    ("bad enum role",
     edit("    role: user\n", "    role: developer\n"),
     ("role: developer", 0, 6), ["signal 'prefer'", "role must be one of user, assistant, any", "'developer'"]),
    ("bad enum scope",
     edit("    scope: turn\n", "    scope: line\n"),
     ("line\n", 0, 0), ["rule 'heartbeat'", "scope must be one of turn, window"]),
    ("unknown condition kind",
     edit("when: {match: {pattern: '\\bwe decided", "when: {regexp: {pattern: '\\bwe decided"),
     ("regexp", 0, 0), ["signal 'decided'", "unknown condition kind 'regexp'", "match"]),
    ("regex does not compile",
     edit("'\\bi prefer\\b'", "'\\bi (prefer\\b'"),
     ("'\\bi (prefer", 0, 0), ["'prefer'", "pattern does not compile", "missing )"]),
    ("duplicate rule id",
     edit("  - id: decided\n", "  - id: heartbeat\n"),
     ("id: heartbeat", 1, 4), ["signal 'heartbeat'", "duplicate id 'heartbeat'", "line 16"]),
    ("undefined vocabulary",
     edit("'\\b{{hb_terms}}\\b.*{{num}}'", "'\\b{{hb_words}}\\b.*{{num}}'"),
     ("'\\b{{hb_words}}", 0, 0), ["rule 'heartbeat'", "{{hb_words}}", "names no vocabulary or fragment"]),
    ("undefined keyword vocabulary",
     edit("keywords: ['{{hb_terms}}']", "keywords: ['{{hb_words}}']"),
     ("['{{hb_words}}']", 0, 0), ["rule 'heartbeat'", "hb_words", "names no vocabulary"]),
    ("YAML syntax error",
     edit("    role: user\n", "    role: user: x\n"),
     (": x", 0, 0), ["YAML syntax error"]),
    ("duplicate YAML key",
     edit("    scope: turn\n", "    scope: turn\n    scope: window\n"),
     ("scope: window", 0, 0), ["rule 'heartbeat'", "duplicate key 'scope'"]),
    ("duplicate YAML key before the rule's id",
     edit("  - id: decided\n    description: a decision\n",
          "  - description: a decision\n    description: twice\n    id: decided\n"),
     ("description: twice", 0, 0), ["signal 'decided'", "duplicate key 'description'"]),
    ("unsupported schema_version",
     edit("schema_version: 1\n", "schema_version: 9\n"),
     ("9\n", 0, 0), ["schema_version 9 is not supported", "supports 1"]),
    ("mandatory rule above the first level",
     edit("    min_level: conservative\n    mandatory: true\n", "    min_level: balanced\n    mandatory: true\n"),
     ("balanced\n    mandatory", 0, 0), ["rule 'secret'", "mandatory", "conservative"]),
    ("weight for an unknown category",
     edit("weights: {decision: 4}", "weights: {decision: 4, runbook: 1}"),
     ("runbook: 1", 0, 0), ["signal 'decided'", "'runbook'", "not in categories"]),
    ("missing required field",
     edit("    description: a decision\n", ""),
     ("id: decided", 0, 0), ["signal 'decided'", "missing required field 'description'"]),
    ("noise marker regex does not compile",
     edit("pattern: '\\bepoch\\b'}]", "pattern: '\\bepoch(\\b'}]"),
     ("'\\bepoch(", 0, 0), ["noise marker 'epoch'", "pattern does not compile"]),
    ("threshold for a level that is missing",
     edit("aggressive: 2}", "aggressive: 2, reckless: 1}"),
     ("reckless", 0, 0), ["'reckless' is not a level"]),
    # an operating point is one of two promises: the message names the one written, or both
    ("operating point out of range",
     edit("aggressive: 2}\n", "aggressive: 2}\n  operating_points: {balanced: {min_flag_precision: 1.5}}\n"),
     ("1.5", 0, 0), ["min_flag_precision must be <= 1", "1.5"]),
    ("operating point of no known kind",
     edit("aggressive: 2}\n", "aggressive: 2}\n  operating_points: {balanced: {min_recall: 0.9}}\n"),
     ("min_recall", 0, 0), ["unknown key 'min_recall'", "min_extract_recall", "min_flag_precision"]),
]


def load_and_compile(path):
    return compile_revision(load_revision(str(path)))


@pytest.mark.parametrize("name, text, where, fragments", CASES, ids=[c[0] for c in CASES])
def test_error_is_one_located_line(tmp_path, name, text, where, fragments):
    path = write_rules(tmp_path, text)
    with pytest.raises(GateError) as caught:
        load_and_compile(path)
    message = str(caught.value)
    assert len(message.splitlines()) == 1, message
    line, column = position(text, *where)
    assert message.startswith(f"{path}:{line}:{column}: "), message
    for fragment in fragments:
        assert fragment in message, message


@pytest.mark.parametrize("name, text, where, fragments", CASES[::2] + [CASES[5], CASES[11]],
                         ids=[c[0] for c in CASES[::2] + [CASES[5], CASES[11]]])
def test_cli_prints_the_line_and_exits_non_zero(tmp_path, name, text, where, fragments):
    path = write_rules(tmp_path, text)
    with pytest.raises(GateError) as caught:
        load_and_compile(path)
    result = run_gate("classify", "--no-cache", "--rules", path, stdin="[]\n", env={"GATE_CACHE_DIR": str(tmp_path)})
    stderr = result.stderr.decode()
    assert result.returncode != 0
    assert "Traceback" not in stderr
    assert stderr.strip() == str(caught.value)
    assert result.stdout == b""  # nothing is classified with a broken revision


def test_lint_reports_load_errors_located(tmp_path):
    text = edit("    min_level: conservative\n", "    min_level: sometimes\n")
    path = write_rules(tmp_path, text)
    result = run_gate("lint", path)
    stderr = result.stderr.decode()
    assert result.returncode == 1 and "Traceback" not in stderr
    line, column = position(text, "sometimes")
    assert stderr.splitlines() == [f"{path}:{line}:{column}: rule 'heartbeat': min_level must be one of "
                                   "conservative, balanced, aggressive"]
    assert "FAILED" in result.stdout.decode()


def test_hash_refuses_a_file_that_does_not_load(tmp_path):
    path = write_rules(tmp_path, edit("schema_version: 1\n", "schema_version: 9\n"))
    result = run_gate("hash", path)
    assert result.returncode != 0 and result.stdout == b""
    assert "Traceback" not in result.stderr.decode()
    line, column = position(path.read_text(), "9\n")
    assert result.stderr.decode().startswith(f"{path}:{line}:{column}: schema_version 9")


def test_missing_file(tmp_path):
    missing = tmp_path / "nope.yaml"
    with pytest.raises(GateError) as caught:
        load_revision(str(missing))
    assert str(caught.value) == f"{missing}: no such file"
    for args in (("classify", "--no-cache", "--rules", missing), ("hash", missing), ("lint", missing)):
        result = run_gate(*args, stdin="[]\n")
        stderr = result.stderr.decode()
        assert result.returncode != 0, args
        assert "Traceback" not in stderr, args
        assert len(stderr.strip().splitlines()) == 1 and str(missing) in stderr, (args, stderr)


def test_several_problems_are_one_line_each(tmp_path):
    text = edit("    scope: turn\n", "    scope: line\n")
    text = text.replace("    role: user\n", "    role: developer\n")
    with pytest.raises(GateError) as caught:
        load_revision(str(write_rules(tmp_path, text)))
    lines = str(caught.value).splitlines()
    assert len(lines) == 2 and len(caught.value.problems) == 2
    assert "rule 'heartbeat': scope must be one of" in lines[0]  # sorted by place in the file
    assert "signal 'prefer': role must be one of" in lines[1]


def test_not_a_mapping_and_empty_file(tmp_path):
    for text in ("- a\n- b\n", "", "just a string\n"):
        with pytest.raises(GateError) as caught:
            load_revision(str(write_rules(tmp_path, text)))
        assert len(str(caught.value).splitlines()) == 1


def test_the_valid_file_loads():
    revision = classifier(VALID)
    assert revision.policy.startswith("v0.1+")

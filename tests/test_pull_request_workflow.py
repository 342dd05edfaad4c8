"""Rules reviewed in pull requests: the editor's schema lines and schema descriptions,
the pre-commit hooks manifest, the GitHub Actions recipe, and the diff comment it posts."""

import json
import os
import re
import shutil
from pathlib import Path

import jsonschema
import pytest
import yaml
from markdown_it import MarkdownIt

from repokit import REPO_ROOT, gate, git, init_repository, replace_value, run
from gate.evaluation import fixtures as fixture_loading
from gate.language.loader import load_revision

ROOT = Path(REPO_ROOT)
WORKFLOW = ROOT / "examples" / "github-actions" / "gate.yml"
COMMENT_DATA = ROOT / "tests" / "data" / "pr_comment"
GOLDEN = COMMENT_DATA / "comment.md"
SCHEMA_LINE = re.compile(r"# yaml-language-server: \$schema=(\S+)")
# Policy ids are stamped on stored memories: a shipped revision's id never changes.
SHIPPED_POLICIES = {"v2.0": "v2.0+e295535c7e32", "v2.1": "v2.1+82a4e08b8698", "v2.2": "v2.2+dc2e16318735",
                    "v2.3": "v2.3+4b32449fe8f7"}


# ---------------------------------------------------------------- editor: schema lines

def _yaml_files():
    shipped = sorted(ROOT.glob("rules/*.yaml")) + sorted(ROOT.glob("fixtures/**/*.yaml"))
    starter = sorted((ROOT / "gate" / "scaffold" / "files" / "fixtures").glob("*.yaml"))
    return shipped + starter + sorted(COMMENT_DATA.rglob("*.yaml"))


@pytest.mark.parametrize("path", _yaml_files(), ids=lambda p: str(p.relative_to(ROOT)))
def test_every_rules_and_fixture_file_starts_with_its_schema_line(path):
    first = path.read_text(encoding="utf-8").splitlines()[0]
    match = SCHEMA_LINE.fullmatch(first)
    assert match, f"{path.relative_to(ROOT)}: first line must be '# yaml-language-server: $schema=<path>'"
    kind = "rules" if path.parent.name == "rules" else "fixtures"
    schema = (path.parent / match[1]).resolve()
    # starter fixtures point where the schemas will be in a `gate init` repository
    if "scaffold" not in path.parts:
        assert schema == (ROOT / "schemas" / f"{kind}.schema.json").resolve(), match[1]
    else:
        assert match[1] == f"../schemas/{kind}.schema.json"


@pytest.mark.parametrize("revision", sorted(SHIPPED_POLICIES))
def test_the_schema_line_changes_no_policy_id(revision):
    path = ROOT / "rules" / f"{revision}.yaml"
    text = path.read_text(encoding="utf-8")
    assert SCHEMA_LINE.fullmatch(text.splitlines()[0])
    with_line = load_revision(str(path))
    without = load_revision(str(path), text=text.split("\n", 1)[1])
    assert with_line.policy == without.policy == SHIPPED_POLICIES[revision]


# ---------------------------------------------------------------- editor: what the schemas say on hover

def _schemas():
    return {name: json.loads((ROOT / "schemas" / name).read_text()) for name in
            ("rules.schema.json", "fixtures.schema.json")}


def _walk(node, path=""):
    """(path, subschema) for every subschema, skipping if/then/else: they restate
    properties described where they are declared."""
    if isinstance(node, dict):
        yield path, node
        for key, value in node.items():
            if key in ("if", "then", "else"):
                continue
            if key in ("properties", "$defs", "patternProperties") and isinstance(value, dict):
                for name, sub in value.items():
                    yield from _walk(sub, f"{path}/{key}/{name}")
            elif key not in ("examples", "enum", "const", "default", "required"):
                yield from _walk(value, f"{path}/{key}")
    elif isinstance(node, list):
        for index, value in enumerate(node):
            yield from _walk(value, f"{path}/{index}")


@pytest.mark.parametrize("name", ["rules.schema.json", "fixtures.schema.json"])
def test_every_property_and_definition_has_a_description(name):
    schema = _schemas()[name]
    missing = [path for path, node in _walk(schema)
               if re.search(r"/(properties|\$defs|patternProperties)/[^/]+$", path)
               and isinstance(node, dict) and not node.get("description")]
    assert not missing, f"{name}: give these a description (an editor shows it on hover): {missing}"


@pytest.mark.parametrize("name", ["rules.schema.json", "fixtures.schema.json"])
def test_every_example_in_a_schema_is_valid_where_it_is_given(name):
    schema = _schemas()[name]
    checked = 0
    for path, node in _walk(schema):
        for example in node.get("examples", ()):
            # the subschema, with the root's definitions so its $refs resolve
            jsonschema.Draft202012Validator({**node, "$defs": schema.get("$defs", {})}).validate(example)
            checked += 1
    assert checked >= (30 if name == "rules.schema.json" else 10)


def test_describing_the_fixture_schema_keeps_the_fast_loading_path():
    fixture_loading._fast_schema_ok = None
    assert fixture_loading._schema_is_known()
    schema = _schemas()["fixtures.schema.json"]
    assert fixture_loading._validation_only(schema) != schema  # descriptions were there, and are set aside


# ---------------------------------------------------------------- pre-commit

def test_the_hooks_manifest_is_valid_and_matches_what_gate_init_writes(tmp_path):
    result = run(["pre-commit", "validate-manifest", str(ROOT / ".pre-commit-hooks.yaml")], ROOT,
                 PRE_COMMIT_HOME=str(tmp_path))
    assert result.returncode == 0, result.stdout + result.stderr
    manifest = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())
    local = yaml.safe_load((ROOT / "gate" / "scaffold" / "files" / "pre-commit-config.yaml").read_text())
    hooks = local["repos"][0]["hooks"]
    keys = ("id", "name", "entry", "files", "pass_filenames")
    assert [{k: h.get(k) for k in keys} for h in hooks] == [{k: h.get(k) for k in keys} for h in manifest]
    assert {h["language"] for h in manifest} == {"python"} and {h["language"] for h in hooks} == {"system"}
    config = run(["pre-commit", "validate-config", str(ROOT / "gate" / "scaffold" / "files" /
                                                       "pre-commit-config.yaml")], ROOT, PRE_COMMIT_HOME=str(tmp_path))
    assert config.returncode == 0, config.stdout + config.stderr


# ---------------------------------------------------------------- the CI recipe

def _check_workflow(path):
    command = shutil.which("check-jsonschema")
    assert command, "check-jsonschema is in the test extra"
    return run([command, "--builtin-schema", "vendor.github-workflows", str(path)], ROOT)


def test_the_workflow_is_valid_for_github_actions(tmp_path):
    result = _check_workflow(WORKFLOW)
    assert result.returncode == 0, result.stdout + result.stderr
    broken = tmp_path / "broken.yml"  # the check does catch a wrong workflow
    broken.write_text(WORKFLOW.read_text().replace("runs-on: ubuntu-latest", "runs_on: ubuntu-latest"))
    assert _check_workflow(broken).returncode == 1


def test_gate_init_ships_the_same_workflow():
    shipped = (ROOT / "gate" / "scaffold" / "files" / "github-workflow.yml").read_text()
    assert shipped == WORKFLOW.read_text()


def _step(name):
    workflow = yaml.safe_load(WORKFLOW.read_text())
    steps = workflow["jobs"]["gate"]["steps"]
    return next(step for step in steps if step.get("name") == name)


def test_the_comment_step_diffs_every_changed_revision_into_one_comment(tmp_path):
    """The workflow's own diff script, run as GitHub runs it, on a pull request that
    edits rules/v1.0.yaml and adds rules/v1.1.yaml."""
    repo = tmp_path / "rules-repo"
    base = init_repository(repo)
    rules = repo / "rules" / "v1.0.yaml"
    text = rules.read_text()
    edited = replace_value(text, ("thresholds", "extract_recall"), "0.85")
    rules.write_text(edited)
    (repo / "rules" / "v1.1.yaml").write_text(replace_value(edited, ("revision",), "v1.1"))
    git("add", "-A", cwd=repo)
    git("commit", "-q", "-m", "raise the extract_recall floor; v1.1", cwd=repo)

    step = _step("Diff every changed revision against the base branch")
    script = tmp_path / "step.sh"
    script.write_text(step["run"])
    result = run(["bash", "--noprofile", "--norc", "-eo", "pipefail", str(script)], repo, BASE_SHA=base)
    assert result.returncode == 0, result.stdout + result.stderr
    comment = (repo / "gate-comment.md").read_text()
    short = base[:12]
    assert comment.startswith("<!-- gate-pull-request-comment -->\n")
    headings = re.findall(r"^### gate diff: (.*)$", comment, re.MULTILINE)
    assert headings == [f"`{short}:rules/v1.0.yaml` → `rules/v1.0.yaml`",
                        f"`{short}:rules/v1.0.yaml` → `rules/v1.1.yaml`"]  # a new revision: against the base's newest
    assert len(re.findall(r"^\*\*Verdict: ", comment, re.MULTILINE)) == 2
    assert "floor extract_recall 0.800 -> 0.850" in comment  # what changed is named
    tokens = MarkdownIt("commonmark").enable("table").parse(comment)
    assert sum(t.type == "table_open" for t in tokens) >= 2


def test_a_pull_request_that_only_adds_fixtures(tmp_path):
    """The lint step lints the newest revision; the comment is its scorecard on the new fixtures."""
    repo = tmp_path / "rules-repo"
    base = init_repository(repo)
    (repo / "fixtures" / "ours.yaml").write_text(
        "# yaml-language-server: $schema=../schemas/fixtures.schema.json\n"
        "- id: ours-decision-retries\n"
        "  window: [{role: user, content: \"we decided the importer retries 3 times, then parks the file\"}]\n"
        "  label: extract\n  expect_type: decision\n"
        "  note: A team decision about retries; stored, nobody argues it again.\n")
    git("add", "-A", cwd=repo)
    git("commit", "-q", "-m", "a fixture of ours", cwd=repo)
    for name in ("Lint the newest revision and every changed one",
                 "Diff every changed revision against the base branch"):
        script = tmp_path / "step.sh"
        script.write_text(_step(name)["run"])
        result = run(["bash", "--noprofile", "--norc", "-eo", "pipefail", str(script)], repo, BASE_SHA=base)
        assert result.returncode == 0, (name, result.stdout + result.stderr)
        if name.startswith("Lint"):
            assert result.stdout == "rules/v1.0.yaml: ok\n"
    comment = (repo / "gate-comment.md").read_text()
    assert comment.startswith("<!-- gate-pull-request-comment -->\n### gate eval: `rules/v1.0.yaml`")
    assert "21 fixtures scored of 21" in comment


def test_the_comment_is_posted_once_and_updated_after(tmp_path):
    """The posting step finds its earlier comment by the marker the diff step writes."""
    post = _step("Post the comment, or update the one posted before")
    script = post["with"]["script"]
    assert post["uses"].startswith("actions/github-script@")
    assert 'const marker = "<!-- gate-pull-request-comment -->"' in script
    assert "updateComment" in script and "createComment" in script
    assert script.index("updateComment") < script.index("createComment")
    diff_step = _step("Diff every changed revision against the base branch")["run"]
    assert "echo '<!-- gate-pull-request-comment -->' > \"$comment\"" in diff_step


# ---------------------------------------------------------------- the diff comment itself

def _render_comment():
    result = gate("diff", "rules/v1.0.yaml", "rules/v1.1.yaml", "--format", "markdown", cwd=COMMENT_DATA)
    assert result.returncode == 0, result.stderr
    return result.stdout


def test_diff_markdown_matches_the_golden_file():
    """Regenerate after an intended change with GATE_UPDATE_GOLDEN=1, and read the diff."""
    rendered = _render_comment()
    if os.environ.get("GATE_UPDATE_GOLDEN"):
        GOLDEN.write_text(rendered, encoding="utf-8")
    assert rendered == GOLDEN.read_text(encoding="utf-8")


def test_the_golden_comment_renders_as_tables_in_reading_order():
    text = GOLDEN.read_text(encoding="utf-8")
    tokens = MarkdownIt("commonmark").enable("table").parse(text)
    tables, depth, rows, order = [], 0, 0, []
    for token in tokens:
        if token.type == "table_open":
            rows = 0
        elif token.type == "tr_open":
            rows += 1
        elif token.type == "table_close":
            tables.append(rows - 1)  # body rows, the header row aside
            order.append("table")
        elif token.type == "inline" and token.content.startswith(("… and", "**Verdict")):
            order.append(token.content.split(" ")[0] + " " + token.content.split(" ")[1])
    metrics, fixtures, rule_changes = tables
    diff = json.loads(gate("diff", "rules/v1.0.yaml", "rules/v1.1.yaml", "--format", "json", cwd=COMMENT_DATA).stdout)
    assert metrics == len(diff["metrics"])  # every metric, one row each
    assert fixtures == 20  # at most 20 changed fixtures ...
    assert order == ["table", "table", "… and", "table", "**Verdict: breaking**"]  # ... then the count of the rest
    assert rule_changes == 3
    html = MarkdownIt("commonmark").enable("table").render(text)
    assert html.count("<table>") == 3 and "|---" not in html  # no table left as plain text
    assert "… and 2 more" in html


def test_text_output_keeps_its_layout():
    result = gate("diff", "rules/v1.0.yaml", "rules/v1.1.yaml", cwd=COMMENT_DATA)
    lines = result.stdout.splitlines()
    assert lines[0] == "gate diff" and lines[-1] == "  - extract_recall regressed: 1.000 -> 0.182"
    assert "fixtures whose decision or type changed: 22 (18 regression(s), 4 improvement(s), 0 neutral)" in lines
    assert "rules: verdict BREAKING" in lines


def test_quiet_check_on_the_comment_data():
    passed = gate("eval", "--rules", "rules/v1.0.yaml", "--check", "--quiet", "--report", os.devnull,
                  cwd=COMMENT_DATA)
    assert passed.returncode == 0
    assert passed.stdout == "gate eval --check passed: rules/v1.0.yaml (v1.0+f52878f8bc94) at balanced on 29 fixtures\n"


def test_the_golden_comment_in_a_real_browser(tmp_path):
    """What a reviewer sees: the comment rendered (as GitHub renders markdown tables) and
    loaded in headless Chromium; the browser's DOM holds the three tables, rows and all."""
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    if browser is None:
        pytest.skip("Chromium is not installed (.ci/run installs it)")
    from html.parser import HTMLParser

    page = tmp_path / "comment.html"
    body = MarkdownIt("commonmark").enable("table").render(GOLDEN.read_text(encoding="utf-8"))
    page.write_text(f"<!doctype html><meta charset=utf-8><body>{body}</body>", encoding="utf-8")
    result = run([browser, "--headless", "--no-sandbox", "--disable-gpu", "--dump-dom", page.as_uri()], tmp_path)
    assert result.returncode == 0, result.stderr

    class Tables(HTMLParser):
        def __init__(self):
            super().__init__()
            self.rows = []

        def handle_starttag(self, tag, attrs):
            if tag == "table":
                self.rows.append(0)
            elif tag == "tr":
                self.rows[-1] += 1

    dom = Tables()
    dom.feed(result.stdout)
    metrics = GOLDEN.read_text(encoding="utf-8").split("\n\n")[2].count("\n") - 1  # the first table's body rows
    assert dom.rows == [1 + metrics, 21, 4]  # header + each metric, header + 20 fixtures, header + 3 rule changes
    missing = gate("eval", "--rules", "rules/v9.yaml", "--check", "--quiet", "--report", os.devnull, cwd=COMMENT_DATA)
    assert missing.returncode == 2
    assert missing.stdout.splitlines() == ["gate eval --check FAILED: rules/v9.yaml (not loaded) at -: nothing measured",
                                           "  the rules did not load:", "    rules/v9.yaml: no such file"]

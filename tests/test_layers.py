"""Imports go downward only: cli -> capabilities -> evaluation -> engine -> language.

Every `import` in every module under gate/ is read with ast (deferred imports inside functions
count too: they are still a dependency), and each must point at the module's own package or at a
package of lower rank. A new upward or sideways import fails here with its file and line.
"""

from __future__ import annotations

import ast
import pathlib

import pytest

GATE = pathlib.Path(__file__).resolve().parent.parent / "gate"

# Lower numbers sit lower. Packages of one rank may not import each other.
RANK = {
    "language": 0,
    "engine": 1,
    "platform": 1,   # the Mem0 client and emulator: only the language below it
    "evaluation": 2,
    "transcripts": 3,  # session files to windows; capture and replay build on it
    "live": 4, "fit": 4, "bench": 4, "capture": 4, "audit": 4, "scaffold": 4,
    "cli": 5,
}
TOP_LEVEL = {"__init__"}  # gate/__init__.py: the version and supported schema versions, importable by all


def _package(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def _imports(path: pathlib.Path):
    module = ".".join(path.relative_to(GATE.parent).with_suffix("").parts).removesuffix(".__init__")
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom):
            package = module if path.name == "__init__.py" else module.rsplit(".", 1)[0]
            if node.level:  # `from . import x`: relative to the module's package
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            yield node.lineno, target
            for alias in node.names:  # `from gate import engine` names a package; `__version__` does not
                if target == "gate" and (GATE / alias.name).is_dir():
                    yield node.lineno, f"gate.{alias.name}"


def _modules():
    return sorted(p for p in GATE.rglob("*.py"))


def test_every_package_has_a_rank():
    packages = {p.relative_to(GATE).parts[0] for p in _modules() if len(p.relative_to(GATE).parts) > 1}
    assert packages <= set(RANK), f"give these packages a rank in tests/test_layers.py: {packages - set(RANK)}"


def test_imports_only_go_downward():
    wrong = []
    for path in _modules():
        rel = path.relative_to(GATE)
        if len(rel.parts) == 1:
            continue  # gate/__init__.py
        own = rel.parts[0]
        for line, target in _imports(path):
            if not target.startswith("gate."):
                continue
            other = _package(target)
            if other in TOP_LEVEL or other == own:
                continue
            if other not in RANK or RANK[other] >= RANK[own]:
                wrong.append(f"gate/{rel}:{line}: {own} (rank {RANK[own]}) imports {target} "
                             f"(rank {RANK.get(other, '?')})")
    assert not wrong, "imports that do not go downward:\n" + "\n".join(wrong)


def test_every_package_says_what_it_owns():
    for init in sorted(GATE.glob("*/__init__.py")):
        doc = ast.get_docstring(ast.parse(init.read_text(encoding="utf-8")))
        assert doc and len(doc.split()) >= 8, f"{init.relative_to(GATE.parent)} needs a docstring saying what it owns"


def test_an_upward_import_is_caught(tmp_path, monkeypatch):
    # The checker itself must fail on the shape it guards against.
    fake = tmp_path / "gate"
    (fake / "engine").mkdir(parents=True)
    (fake / "engine" / "bad.py").write_text("def f():\n    from gate.evaluation.metrics import LABELS\n")
    monkeypatch.setattr(__import__(__name__), "GATE", fake)
    with pytest.raises(AssertionError, match=r"gate/engine/bad.py:2: engine \(rank 1\) imports gate.evaluation.metrics"):
        test_imports_only_go_downward()

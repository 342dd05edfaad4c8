"""YAML in, plain data out, plus where every value came from.

jsonschema and our own checks report errors by path (('signals', 3, 'weights'));
`Located.where(path)` turns that path into a line and column of the file, so
every error can point at the place a user has to edit.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import yaml

from gate.language.errors import GateError, Problem

try:  # the C loader is several times faster; fall back where it was not built
    _Loader = yaml.CSafeLoader
except AttributeError:  # pragma: no cover - depends on the libyaml build
    _Loader = yaml.SafeLoader

Path = tuple


@dataclass
class Located:
    """Parsed YAML data with a (line, column) for every path in it (1-based)."""

    file: str
    data: object
    marks: dict[Path, tuple[int, int]] = field(default_factory=dict)
    key_marks: dict[Path, tuple[int, int]] = field(default_factory=dict)

    def where(self, path) -> tuple[int | None, int | None]:
        """The closest known position for `path`, walking up to its parents."""
        path = tuple(path)
        while True:
            if path in self.marks:
                return self.marks[path]
            if not path:
                return None, None
            path = path[:-1]

    def problem(self, path, message: str, at_key: bool = False) -> Problem:
        """A Problem at `path`; `at_key` points at the mapping key, not its value."""
        path = tuple(path)
        if at_key and path in self.key_marks:
            line, column = self.key_marks[path]
        else:
            line, column = self.where(path)
        return Problem(self.file, message, line, column)


def parse_yaml(text: str, file: str, describe=None) -> Located:
    """Parse one YAML document; a syntax error or duplicate key is a GateError.

    `describe(data, path)` may name the object a duplicate key sits in
    ("rule 'heartbeat'"); the document is built first, so the name is known
    even when the duplicate comes before the key that names the object.
    """
    loader = _Loader(text)
    try:
        root = loader.get_single_node()
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        reason = exc.problem or exc.context or "invalid YAML"
        line, col = (mark.line + 1, mark.column + 1) if mark else (None, None)
        raise GateError(Problem(file, f"YAML syntax error: {reason}", line, col)) from None
    except yaml.YAMLError as exc:
        raise GateError(Problem(file, f"YAML error: {exc}")) from None
    finally:
        loader.dispose()
    located = Located(file, None)
    if root is None:
        return located
    duplicates: list = []
    located.data = _build(root, (), located, loader, duplicates)
    if duplicates:
        problems = []
        for path, problem in duplicates:
            prefix = describe(located.data, path) if describe else None
            message = f"{prefix}: {problem.message}" if prefix else problem.message
            problems.append(Problem(problem.file, message, problem.line, problem.column))
        raise GateError(problems)
    return located


def _build(node, path: Path, located: Located, loader, duplicates: list) -> object:
    located.marks[path] = (node.start_mark.line + 1, node.start_mark.column + 1)
    if isinstance(node, yaml.MappingNode):
        result = {}
        for key_node, value_node in node.value:
            key = _scalar(key_node, located, loader)
            if not isinstance(key, (str, int, float, bool)) and key is not None:
                raise GateError(located_problem(located, key_node, "mapping keys must be plain scalars"))
            if key in result:  # the first value stays, so the rest of the file can still be described
                duplicates.append((path + (key,), located_problem(located, key_node, f"duplicate key '{key}'")))
                continue
            located.key_marks[path + (key,)] = (key_node.start_mark.line + 1, key_node.start_mark.column + 1)
            result[key] = _build(value_node, path + (key,), located, loader, duplicates)
        return result
    if isinstance(node, yaml.SequenceNode):
        return [_build(item, path + (i,), located, loader, duplicates) for i, item in enumerate(node.value)]
    return _scalar(node, located, loader)


def _scalar(node, located: Located, loader) -> object:
    if not isinstance(node, yaml.ScalarNode):
        raise GateError(located_problem(located, node, "expected a plain value here"))
    try:
        return loader.construct_object(node, deep=True)
    except yaml.YAMLError as exc:
        raise GateError(located_problem(located, node, f"bad value: {exc}")) from None


def located_problem(located: Located, node, message: str) -> Problem:
    return Problem(located.file, message, node.start_mark.line + 1, node.start_mark.column + 1)


def read_yaml(path: str, display_name: str | None = None, describe=None) -> Located:
    """Read and parse a YAML file; unreadable files are GateErrors too."""
    name = display_name or path
    try:
        with open(path, encoding="utf-8") as handle:
            text = handle.read()
    except FileNotFoundError:
        raise GateError(Problem(name, "no such file")) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise GateError(Problem(name, f"cannot read: {exc.__class__.__name__}: {exc}")) from None
    return parse_yaml(text, name, describe)

"""JSON Schema validation whose errors read like a person wrote them.

jsonschema is imported here and nowhere on the classify path: the compiled
revision is cached, so an editor hook never pays for it.
"""

from __future__ import annotations

import json
from functools import lru_cache
from importlib import resources

from gate.language.errors import Problem
from gate.language.yamlsource import Located


@lru_cache(maxsize=None)
def load_schema(name: str) -> dict:
    """A schema shipped in the package (the top-level schemas/ is its source)."""
    return json.loads(resources.files("gate").joinpath("schemas", name).read_text(encoding="utf-8"))


def validate(located: Located, schema_name: str, describe=None) -> list[Problem]:
    """Every schema violation in `located`, one Problem each, sorted by place.

    `describe(path)` may return a prefix such as "rule 'heartbeat'" naming the
    enclosing object, so a message says which rule is wrong, not only where.
    """
    import jsonschema

    validator = jsonschema.Draft202012Validator(load_schema(schema_name))
    problems = []
    for error in _leaf_errors(validator.iter_errors(located.data)):
        path = tuple(error.absolute_path)
        message, at_key, path = _humane(error, path)
        prefix = describe(path) if describe else None
        problems.append(located.problem(path, f"{prefix}: {message}" if prefix else message, at_key=at_key))
    problems.sort(key=lambda p: (p.line or 0, p.column or 0))
    return _dedupe(problems)


def _leaf_errors(errors):
    """Descend into oneOf/anyOf so the message names the real mismatch."""
    for error in errors:
        if error.validator in ("oneOf", "anyOf") and error.context:
            import jsonschema

            meant = _meant_branch(error.context)
            best = jsonschema.exceptions.best_match(meant or error.context)
            if meant is None and best is not None and best.validator == "additionalProperties":
                best = _with_every_branchs_keys(best, error.context)
            # best_match picks the branch that got furthest; when every branch
            # failed only on type, the parent message is the clearer one.
            if best is not None and best.validator != "type":
                yield from _leaf_errors([best])
                continue
        yield error


def _meant_branch(errors) -> list | None:
    """The errors of the one branch the value was written for, when exactly one branch takes
    its keys and its kind (no unknown key, no missing field, no wrong type at its root): a
    `min_flag_precision: 1.5` is too large, not an unknown key of the recall branch."""
    branches = {}
    for error in errors:
        branches.setdefault(error.relative_schema_path[0], []).append(error)
    meant = [found for found in branches.values()
             if not any(not e.relative_path and e.validator in ("additionalProperties", "required", "type")
                        for e in found)]
    return meant[0] if len(meant) == 1 else None


def _with_every_branchs_keys(error, errors):
    """An unknown key no branch takes: the message lists the keys of every branch, not one's."""
    import copy

    keys = {}
    for other in errors:
        if other.validator == "additionalProperties" and other.relative_path == error.relative_path:
            keys.update(other.schema.get("properties", {}))
    error = copy.copy(error)
    error.schema = {**error.schema, "properties": keys}
    return error


def _field(path) -> str:
    for part in reversed(path):
        if isinstance(part, str):
            return part
    return "value"


def _humane(error, path) -> tuple[str, bool, tuple]:
    kind, value, schema = error.validator, error.instance, error.validator_value
    name = _field(path)
    if kind == "additionalProperties":
        extra = sorted(set(value) - set(error.schema.get("properties", {})))
        allowed = ", ".join(sorted(error.schema.get("properties", {})))
        key = extra[0] if extra else "?"
        where = path + (key,)
        if "not" in error.schema.get("properties", {}) and "match" in error.schema.get("properties", {}):
            return f"unknown condition kind '{key}'; expected one of {allowed}", True, where
        return f"unknown key '{key}'" + (f"; expected one of {allowed}" if allowed else ""), True, where
    if kind == "required":
        missing = schema[0] if len(schema) == 1 else None
        missing = next((k for k in schema if k not in value), "?") if missing is None else missing
        return f"missing required field '{missing}'", False, path
    if kind == "enum":
        choices = ", ".join("null" if c is None else str(c) for c in schema)
        return f"{name} must be one of {choices} (got {value!r})", False, path
    if kind == "const":
        return f"{name} must be {schema!r} (got {value!r})", False, path
    if kind == "type":
        expected = schema if isinstance(schema, str) else " or ".join(schema)
        return f"{name} must be {_article(expected)} (got {type(value).__name__})", False, path
    if kind == "pattern":
        return f"{name} {value!r} does not match the required form {schema}", False, path
    if kind == "propertyNames":
        return f"'{value}' is not an allowed name here", True, path
    if kind in ("minItems", "minLength", "minProperties"):
        return f"{name} must not be empty", False, path
    if kind == "maxProperties" and schema == 1:
        kinds = ", ".join(sorted(value))
        return f"a condition has exactly one kind; split {kinds} with all/any", False, path
    if kind in ("minimum", "maximum"):
        return f"{name} must be {'>=' if kind == 'minimum' else '<='} {schema} (got {value})", False, path
    if kind == "uniqueItems":
        return f"{name} has duplicate entries", False, path
    if kind == "anyOf" and all("required" in branch for branch in schema):
        options = " or ".join(branch["required"][0] for branch in schema)
        return f"{name} needs {options}", False, path
    return error.message, False, path


def _article(word: str) -> str:
    word = {"object": "a mapping", "array": "a list", "string": "a string", "integer": "an integer",
            "number": "a number", "boolean": "true or false", "null": "null"}.get(word, word)
    return word


def _dedupe(problems):
    seen, out = set(), []
    for problem in problems:
        if str(problem) not in seen:
            seen.add(str(problem))
            out.append(problem)
    return out

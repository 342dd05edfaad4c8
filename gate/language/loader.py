"""Rules file -> validated Revision. Every problem is a located, one-line error."""

from __future__ import annotations

from gate import SUPPORTED_SCHEMA_VERSIONS
from gate.language.errors import GateError, Problem
from gate.language.model import ALL_TYPES_KEY, DropRule, Examples, NoiseMarker, Revision, Signal
from gate.language.patterns import ReferenceError_, alternation, expand, expand_keywords, references
from gate.language.policy import canonical_content, policy_id
from gate.language.yamlsource import Located, parse_yaml, read_yaml

RULE_LISTS = ("drop_rules", "signals")


def load_revision(path: str, text: str | None = None, display_name: str | None = None) -> Revision:
    """Read, validate and model one rules revision. Raises GateError."""
    name = display_name or path
    if text is not None:
        located = parse_yaml(text, name, describe_path)
    else:
        located = read_yaml(path, name, describe_path)
    return build_revision(located, name)


def build_revision(located: Located, name: str) -> Revision:
    data = located.data
    if not isinstance(data, dict):
        raise GateError(Problem(name, "a rules file must be a mapping (schema_version, revision, rules...)", 1, 1))
    _check_schema_version(located)

    from gate.language.schema import validate  # only when loading from YAML, never on a cached classify

    problems = validate(located, "rules.schema.json", describe=lambda p: describe_path(data, p))
    if problems:
        raise GateError(problems)
    problems = _semantic_problems(located)
    if problems:
        raise GateError(problems)
    return _model(located, name)


def _check_schema_version(located: Located) -> None:
    version = located.data.get("schema_version")
    if version is None:
        raise GateError(located.problem((), "missing required field 'schema_version' (the rules language version this file is written for)"))
    if isinstance(version, int) and not isinstance(version, bool) and version not in SUPPORTED_SCHEMA_VERSIONS:
        supported = ", ".join(map(str, SUPPORTED_SCHEMA_VERSIONS))
        raise GateError(located.problem(("schema_version",),
                                        f"schema_version {version} is not supported by this gate (supports {supported}); "
                                        "upgrade gate or rewrite the file for a supported version"))


def describe_path(data: dict, path) -> str | None:
    """"rule 'heartbeat'" for any path inside a rule, so errors name the rule."""
    if len(path) >= 2 and path[0] in RULE_LISTS and isinstance(path[1], int):
        try:
            rule_id = data[path[0]][path[1]].get("id")
        except (IndexError, AttributeError, TypeError):
            rule_id = None
        kind = "rule" if path[0] == "drop_rules" else "signal"
        return f"{kind} '{rule_id}'" if rule_id else f"{kind} #{path[1] + 1}"
    if len(path) >= 2 and path[0] == "noise_markers" and isinstance(path[1], int):
        try:
            marker_id = data["noise_markers"][path[1]].get("id")
        except (IndexError, AttributeError, TypeError):
            marker_id = None
        return f"noise marker '{marker_id}'" if marker_id else f"noise marker #{path[1] + 1}"
    return None


def _semantic_problems(located: Located) -> list[Problem]:
    data = located.data
    problems: list[Problem] = []

    def report(path, message, at_key=False):
        prefix = describe_path(data, path)
        problems.append(located.problem(path, f"{prefix}: {message}" if prefix else message, at_key=at_key))

    levels = data["levels"]
    level_list = ", ".join(levels)
    if data["default_level"] not in levels:
        report(("default_level",), f"default_level must be one of {level_list}")
    thresholds = data["flag"]["thresholds"]
    for level in levels:
        if level not in thresholds:
            report(("flag", "thresholds"), f"flag thresholds need a score for level '{level}'")
    for level in thresholds:
        if level not in levels:
            report(("flag", "thresholds", level), f"'{level}' is not a level; levels are {level_list}", at_key=True)

    vocabularies = {k: v["terms"] for k, v in data["vocabularies"].items()}
    fragments = {k: alternation(v["pattern"]) for k, v in data["fragments"].items()}
    for name in vocabularies.keys() & fragments.keys():
        report(("fragments", name), f"'{name}' is both a vocabulary and a fragment; names must be unique", at_key=True)
    for name, text in fragments.items():
        _check_references(text, ("fragments", name, "pattern"), vocabularies, fragments, report)

    seen_ids: dict[str, tuple] = {}
    for list_name in RULE_LISTS:
        for index, rule in enumerate(data[list_name]):
            path = (list_name, index)
            if rule["id"] in seen_ids:
                line, _ = located.where(seen_ids[rule["id"]])
                report(path + ("id",), f"duplicate id '{rule['id']}' (first defined on line {line})")
            else:
                seen_ids[rule["id"]] = path + ("id",)
            if rule["min_level"] not in levels:
                report(path + ("min_level",), f"min_level must be one of {level_list}")
            elif rule.get("mandatory") and rule["min_level"] != levels[0]:
                report(path + ("min_level",), f"a mandatory rule applies at every level, so its min_level must be '{levels[0]}'")
            for type_name in rule.get("weights", {}):
                if type_name != ALL_TYPES_KEY and type_name not in data["categories"]:
                    report(path + ("weights", type_name), f"weight for '{type_name}', which is not in categories", at_key=True)
            for cond_path, condition in walk_conditions(rule, path):
                _check_condition(condition, cond_path, vocabularies, fragments, report)

    seen_markers = set()
    for index, marker in enumerate(data["noise_markers"]):
        if marker["id"] in seen_markers:
            report(("noise_markers", index, "id"), f"duplicate noise marker id '{marker['id']}'")
        seen_markers.add(marker["id"])
        _check_marker_pattern(marker["pattern"], ("noise_markers", index, "pattern"), vocabularies, fragments, report)
    return problems


def walk_conditions(rule: dict, path: tuple):
    """Every leaf condition of a rule's `when` and `unless`, with its path."""
    stack = [(rule["when"], path + ("when",))]
    stack += [(c, path + ("unless", i)) for i, c in enumerate(rule.get("unless", ()))]
    while stack:
        condition, cond_path = stack.pop()
        kind, spec = next(iter(condition.items()))
        if kind in ("all", "any"):
            stack += [(c, cond_path + (kind, i)) for i, c in enumerate(spec)]
        elif kind == "not":
            stack.append((spec, cond_path + ("not",)))
        else:
            yield cond_path, condition


def _check_condition(condition, path, vocabularies, fragments, report) -> None:
    kind, spec = next(iter(condition.items()))
    if not isinstance(spec, dict):
        return
    if "pattern" in spec:
        patterns = spec["pattern"] if isinstance(spec["pattern"], list) else [spec["pattern"]]
        for i, text in enumerate(patterns):
            where = path + (kind, "pattern") + ((i,) if isinstance(spec["pattern"], list) else ())
            _check_references(text, where, vocabularies, fragments, report)
    if "keywords" in spec:
        try:
            expand_keywords(spec["keywords"], vocabularies)
        except ReferenceError_ as exc:
            report(path + (kind, "keywords"), str(exc))
    for low, high in (("min", "max"), ("min_share", "max_share")):
        if low in spec and high in spec and spec[low] > spec[high]:
            report(path + (kind,), f"{kind}: {low} ({spec[low]}) is greater than {high} ({spec[high]})")
    if kind == "structure":
        for count, bounds in spec.items():
            if "min" in bounds and "max" in bounds and bounds["min"] > bounds["max"]:
                report(path + (kind, count), f"structure {count}: min is greater than max")


def _check_marker_pattern(text, path, vocabularies, fragments, report) -> None:
    """Markers are not compiled with the rules, so the loader checks they compile."""
    import regex

    try:
        regex.compile(expand(text, vocabularies, fragments), regex.IGNORECASE | regex.MULTILINE)
    except ReferenceError_ as exc:
        report(path, str(exc))
    except regex.error as exc:
        report(path, f"pattern does not compile: {exc}")


def _check_references(text, path, vocabularies, fragments, report) -> None:
    if not references(text):
        return
    try:
        expand(text, vocabularies, fragments)
    except ReferenceError_ as exc:
        report(path, str(exc))


def _examples(raw: dict) -> Examples:
    return Examples(tuple(raw["match"]), tuple(raw["no_match"]))


def _above_file(raw: dict | None) -> tuple | None:
    return None if raw is None else (raw["opens"], raw["keeps"])


def _model(located: Located, name: str) -> Revision:
    data = located.data
    vocabularies = {k: tuple(v["terms"]) for k, v in data["vocabularies"].items()}
    fragments = {k: alternation(v["pattern"]) for k, v in data["fragments"].items()}
    drop_rules = tuple(
        DropRule(id=r["id"], description=r["description"], scope=r["scope"], role=r["role"],
                 min_level=r["min_level"], mandatory=bool(r.get("mandatory", False)), when=r["when"],
                 unless=tuple(r.get("unless", ())), examples=_examples(r["examples"]), path=("drop_rules", i),
                 strip=r.get("strip", "others"), spare=r.get("spare"),
                 spare_unflagged=r.get("spare_unflagged", "drop"), spare_outside_fence=r.get("spare_outside_fence"),
                 spare_continuations=r.get("spare_continuations", False),
                 spare_above_file=_above_file(r.get("spare_above_file")))
        for i, r in enumerate(data["drop_rules"])
    )
    signals = tuple(
        Signal(id=r["id"], description=r["description"], role=r["role"], min_level=r["min_level"],
               weights=dict(r["weights"]), when=r["when"], unless=tuple(r.get("unless", ())),
               examples=_examples(r["examples"]), path=("signals", i))
        for i, r in enumerate(data["signals"])
    )
    markers = tuple(
        NoiseMarker(m["id"], expand(m["pattern"], vocabularies, fragments)) for m in data["noise_markers"]
    )
    canonical = canonical_content(data)
    return Revision(
        path=name, schema_version=data["schema_version"], revision=data["revision"],
        description=data["description"], levels=tuple(data["levels"]), default_level=data["default_level"],
        vocabularies=vocabularies, fragments=fragments, drop_rules=drop_rules, signals=signals,
        flag_thresholds=dict(data["flag"]["thresholds"]), categories=dict(data["categories"]),
        instructions=data["instructions"], noise_markers=markers, thresholds=dict(data["thresholds"]),
        policy=policy_id(data["revision"], canonical), canonical=canonical, source=located,
    )

"""Two revisions on the same fixtures: metric deltas, the fixtures whose decision
changed, what changed in the rules, and a verdict on the kind of change.

The verdict follows Falco's rule-file comparison: a rule removed or matching
less is breaking; a rule added (or matching more) is minor; a vocabulary edit
is a patch. "Matching less" is decided two ways, and either is enough:
structurally (a raised min_level or flag threshold, a lost `mandatory`, a
narrower role, a signal weight shrunk toward zero) and on evidence: the old and new rule
are each run, in isolation, on both revisions' examples for that rule and on
every fixture window; an input the old rule matched and the new one does not
is a match lost. A vocabulary or fragment edit stays a patch unless it makes a
rule lose a match that way.
"""

from __future__ import annotations

import json

from gate.evaluation import metrics
from gate.language.errors import GateError, Problem
from gate.language.patterns import REFERENCE
from gate.language.model import ALL_TYPES_KEY, DURABLE_TYPES, SPARE_OPTIONS

CLASSES = ("none", "patch", "minor", "breaking")
RULE_LISTS = (("drop_rules", "rule"), ("signals", "signal"))

# How good a fixture's decision is for its label; a lower rank in NEW is a regression.
_RANK = {
    "drop": {"leaked": 0, "held_by_luck": 1, "contained": 2, "dropped": 2},
    "exclude": {"sent": 0, "held_back": 1, "dropped": 1},
    "extract": {"hard_dropped": 0, "skipped": 1, "mistyped": 2, "flagged": 3},
}


def diff_revisions(old_spec: str, new_spec: str, fixture_paths, *, level: str | None = None,
                   jobs: int | None = None) -> dict:
    """Score both revisions on the same fixtures and compare. Raises GateError for a
    revision that does not load, fixtures that do not validate, or a level one side lacks."""
    from gate.evaluation.evaluate import classify_all, load_compiled, score_level
    from gate.evaluation.fixtures import load_fixtures

    old_rev, old_clf = load_compiled(old_spec)
    new_rev, new_clf = load_compiled(new_spec)
    fixtures = load_fixtures(list(fixture_paths))
    for spec, rev in ((old_spec, old_rev), (new_spec, new_rev)):
        if level is not None and level not in rev.levels:
            raise GateError(Problem(spec, f"level '{level}' is not a level of this revision "
                                          f"(levels: {', '.join(rev.levels)})"))
    old_level = level or old_rev.default_level
    new_level = level or new_rev.default_level
    windows = [f.window for f in fixtures]
    old_run = score_level(old_clf, old_rev, fixtures, classify_all(old_clf, windows, [old_level], jobs)[old_level],
                          old_level, strict=False)
    new_run = score_level(new_clf, new_rev, fixtures, classify_all(new_clf, windows, [new_level], jobs)[new_level],
                          new_level, strict=False)

    gated = {name: new_rev.thresholds.get(name, old_rev.thresholds.get(name))
             for name in metrics.OFFLINE_RATIOS if name in new_rev.thresholds or name in old_rev.thresholds}
    metric_rows = []
    for name in metrics.SCALARS + ("drop_leaked", "drop_held_by_luck", "errors"):
        old, new = old_run.scores.get(name), new_run.scores.get(name)
        metric_rows.append({
            "metric": name, "old": old, "new": new,
            "delta": None if old is None or new is None else new - old,
            "gated": name in gated, "floor": new_rev.thresholds.get(name),
            "regressed": metrics.regressed(name, old, new),
        })

    changed = changed_fixtures(fixtures, old_run.results, new_run.results)
    rule_changes = compare_rules(old_rev, new_rev, old_clf, new_clf, fixtures)
    verdict = max((c["class"] for c in rule_changes), key=CLASSES.index, default="none")

    failures = [f"NEW {f}" for f in new_run.check["failures"]]
    failures += [f"{m['metric']} regressed: {_fmt(m['old'])} -> {_fmt(m['new'])}"
                 for m in metric_rows if m["gated"] and m["regressed"]]
    return {
        "old": {"rules": old_spec, "policy": old_rev.policy, "revision": old_rev.revision, "level": old_level},
        "new": {"rules": new_spec, "policy": new_rev.policy, "revision": new_rev.revision, "level": new_level},
        "fixture_counts": {"total": len(fixtures), "todo": sum(1 for f in fixtures if f.todo)},
        "metrics": metric_rows,
        "fixtures": changed,
        "regressions": sum(1 for c in changed if c["change"] == "regression"),
        "improvements": sum(1 for c in changed if c["change"] == "improvement"),
        "rule_changes": rule_changes,
        "verdict": verdict,
        "check": {"passed": not failures, "failures": failures},
        "scores": {"old": old_run.scores, "new": new_run.scores},
    }


def changed_fixtures(fixtures, old_results, new_results) -> list[dict]:
    """Only the fixtures whose decision or type changed: regressions, then improvements, then the rest."""
    rows = []
    for fixture, old, new in zip(fixtures, old_results, new_results, strict=True):
        if old.action == new.action and old.type == new.type:
            continue
        old_name = metrics.outcome(fixture.label, old.action, old.type, fixture.expect_type,
                                   old.trace or (), fixture.window)
        new_name = metrics.outcome(fixture.label, new.action, new.type, fixture.expect_type,
                                   new.trace or (), fixture.window)
        ranks = _RANK.get(fixture.label, {})
        before, after = ranks.get(old_name, 0), ranks.get(new_name, 0)
        change = "regression" if after < before else "improvement" if after > before else "neutral"
        row = {"id": fixture.id, "label": fixture.label, "expect_type": fixture.expect_type, "change": change,
               "old": {"decision": old.action, "type": old.type, "rule": old.rule, "outcome": old_name},
               "new": {"decision": new.action, "type": new.type, "rule": new.rule, "outcome": new_name}}
        if fixture.todo:
            row["todo"] = fixture.todo
        rows.append(row)
    order = {"regression": 0, "improvement": 1, "neutral": 2}
    rows.sort(key=lambda r: order[r["change"]])  # stable: fixture order within each group
    return rows


# ---------------------------------------------------------------- what changed in the rules

def compare_rules(old_rev, new_rev, old_clf, new_clf, fixtures=()) -> list[dict]:
    """Every change between two revisions' behaviour-bearing content, each classified."""
    old_c, new_c = _behaviour(old_rev.canonical), _behaviour(new_rev.canonical)
    if old_c == new_c:
        return []
    changes = []

    def add(kind, name, class_, detail):
        changes.append({"change": kind, "id": name, "class": class_, "detail": detail})

    old_rules, new_rules = _rules_by_id(old_c), _rules_by_id(new_c)
    evidence = _Evidence(old_rev, new_rev, old_clf, new_clf, fixtures)
    changed_names = _changed_names(old_c, new_c)

    for rule_id, (list_name, rule) in old_rules.items():
        if rule_id not in new_rules:
            add("removed", rule_id, "breaking", f"{_kind(list_name)} removed")
    for rule_id, (list_name, rule) in new_rules.items():
        if rule_id not in old_rules:
            add("added", rule_id, "minor", f"{_kind(list_name)} added")
            continue
        old_list, old_rule = old_rules[rule_id]
        if old_list != list_name:
            add("changed", rule_id, "breaking", f"moved from {old_list} to {list_name}: the old "
                                               f"{_kind(old_list)} no longer exists")
            continue
        if old_rule != rule:
            less, more, notes = _structural(old_rule, rule, old_c["levels"], new_c["levels"])
            lost, gained = evidence.compare(rule_id)
            if lost:
                less.append(f"no longer matches {_count(lost)} it matched ({_preview(lost)})")
            if gained:
                more.append(f"now matches {_count(gained)} it did not ({_preview(gained)})")
            detail = "; ".join(less + more + notes) or "condition changed; no input we have tells the two apart"
            add("changed", rule_id, "breaking" if less else "minor", f"{_kind(list_name)}: {detail}")
            continue
        uses = _uses(rule, new_c) | _uses(old_rules[rule_id][1], old_c)
        touched = sorted(uses & changed_names)
        if touched:
            lost, gained = evidence.compare(rule_id)
            via = ", ".join(touched)
            if lost:
                add("changed", rule_id, "breaking", f"{_kind(list_name)}: through {via}, no longer matches "
                                                     f"{_count(lost)} it matched ({_preview(lost)})")
            elif gained:
                add("changed", rule_id, "patch", f"{_kind(list_name)}: through {via}, now matches "
                                                  f"{_count(gained)} it did not ({_preview(gained)})")

    if [r for r in old_rules if r in new_rules] != [r for r in new_rules if r in old_rules]:
        add("reordered", "rules", "patch", "rule order changed: which rule is named as deciding may differ")

    for table in ("vocabularies", "fragments"):
        changes += _table_changes(table, old_c.get(table, {}), new_c.get(table, {}))
    changes += _level_changes(old_c, new_c)
    changes += _other_changes(old_c, new_c)
    changes.sort(key=lambda c: -CLASSES.index(c["class"]))
    return changes


def _behaviour(canonical: dict) -> dict:
    """The canonical content without the revision's name, which changes with every revision."""
    return {k: v for k, v in canonical.items() if k != "revision"}


def _rules_by_id(canonical) -> dict:
    return {rule["id"]: (list_name, rule) for list_name, _ in RULE_LISTS for rule in canonical.get(list_name, ())}


def _kind(list_name) -> str:
    return "signal" if list_name == "signals" else "drop rule"


def _names_in(value) -> set:
    return set(REFERENCE.findall(json.dumps(value)))


def _uses(rule, canonical) -> set:
    """Vocabularies and fragments a rule references, through fragments too."""
    fragments = canonical.get("fragments", {})
    found, stack = set(), list(_names_in(rule))
    while stack:
        name = stack.pop()
        if name in found:
            continue
        found.add(name)
        if name in fragments:
            stack += list(_names_in(fragments[name]))
    return found


def _changed_names(old_c, new_c) -> set:
    names = set()
    for table in ("vocabularies", "fragments"):
        old, new = old_c.get(table, {}), new_c.get(table, {})
        names |= {n for n in old.keys() | new.keys() if old.get(n) != new.get(n)}
    return names


def _level_index(levels, name):
    return levels.index(name) if name in levels else None


def _structural(old, new, old_levels, new_levels):
    """(reasons it matches less, reasons it matches more, neutral notes) from the rule's own fields."""
    less, more, notes = [], [], []
    before, after = _level_index(old_levels, old["min_level"]), _level_index(new_levels, new["min_level"])
    if old["min_level"] != new["min_level"] or before != after:
        if before is not None and after is not None and after > before:
            less.append(f"min_level raised {old['min_level']} -> {new['min_level']} (active at fewer levels)")
        elif before is not None and after is not None and after < before:
            more.append(f"min_level lowered {old['min_level']} -> {new['min_level']}")
        else:
            notes.append(f"min_level {old['min_level']} -> {new['min_level']}")
    if old.get("mandatory") and not new.get("mandatory"):
        less.append("no longer mandatory (levels may now turn it off)")
    elif new.get("mandatory") and not old.get("mandatory"):
        more.append("now mandatory")
    if old.get("role") != new.get("role"):
        if new.get("role") == "any":
            more.append(f"role {old.get('role')} -> any")
        else:
            less.append(f"role {old.get('role')} -> {new.get('role')} (judges fewer turns)")
    if old.get("scope") != new.get("scope"):
        change = f"scope {old.get('scope')} -> {new.get('scope')}"
        if (old.get("scope"), new.get("scope")) == ("window", "payload"):
            less.append(change + " (drops only for evidence in the person's own turns; else strips the others)")
        elif (old.get("scope"), new.get("scope")) == ("payload", "window"):
            more.append(change + " (drops the window for evidence in any turn or tool call)")
        else:
            notes.append(change)
    if old.get("spare") != new.get("spare"):
        if old.get("spare") is None:
            less.append("now spares the person's own lines (cut to them when the evidence is theirs; kept if flagged)")
        elif new.get("spare") is None:
            more.append("no longer spares the person's own lines (drops their window whole)")
        else:
            notes.append("`spare` changed")
    # what becomes of the evidence's other turns and of the lines the spare keeps: named as they
    # change, since a change here may show on no fixture at all
    for key in SPARE_OPTIONS:
        if old.get(key) != new.get(key):
            notes.append(f"`{key}` " + ("added" if key not in old else "removed" if key not in new else "changed"))
    # A weight that shrinks toward 0 (or flips sign) does less of what it did, whether
    # it boosted a type or suppressed it; one that grows does more of it.
    old_w, new_w = old.get("weights") or {}, new.get("weights") or {}
    if (ALL_TYPES_KEY in old_w) != (ALL_TYPES_KEY in new_w):  # compare per type (a fit writes every type)
        old_w, new_w = _per_type(old_w), _per_type(new_w)
    for type_name in sorted(old_w.keys() | new_w.keys()):
        a, b = old_w.get(type_name, 0), new_w.get(type_name, 0)
        if a == b:
            continue
        if a * b < 0 or abs(b) < abs(a):
            less.append(f"weight {type_name} {a:g} -> {b:g}")
        else:
            more.append(f"weight {type_name} {a:g} -> {b:g}")
    if old.get("when") != new.get("when"):
        notes.append("`when` changed")
    if old.get("unless") != new.get("unless"):
        notes.append("`unless` changed")
    return less, more, notes


def _per_type(weights: dict) -> dict:
    """A signal's weights with `all_types` spread over every durable type."""
    spread = weights.get(ALL_TYPES_KEY, 0)
    return {t: weights.get(t, 0) + spread for t in DURABLE_TYPES if weights.get(t, 0) + spread}


def _table_changes(table, old, new) -> list[dict]:
    kind = "vocabulary" if table == "vocabularies" else "fragment"
    out = []
    for name in sorted(old.keys() | new.keys()):
        if name not in new:
            detail = f"{kind} removed"
        elif name not in old:
            detail = f"{kind} added"
        elif old[name] == new[name]:
            continue
        elif table == "vocabularies":
            before, after = set(old[name].get("terms", ())), set(new[name].get("terms", ()))
            parts = []
            if after - before:
                parts.append("+ " + ", ".join(sorted(after - before)))
            if before - after:
                parts.append("- " + ", ".join(sorted(before - after)))
            detail = "terms " + "; ".join(parts) if parts else "terms reordered"
        else:
            detail = f"pattern {_clip(old[name].get('pattern'))} -> {_clip(new[name].get('pattern'))}"
        out.append({"change": kind, "id": name, "class": "patch", "detail": detail})
    return out


def _level_changes(old_c, new_c) -> list[dict]:
    out = []
    old_levels, new_levels = list(old_c["levels"]), list(new_c["levels"])
    for name in old_levels:
        if name not in new_levels:
            out.append({"change": "level", "id": name, "class": "breaking", "detail": "level removed"})
    for name in new_levels:
        if name not in old_levels:
            out.append({"change": "level", "id": name, "class": "minor", "detail": "level added"})
    common_old = [n for n in old_levels if n in new_levels]
    if common_old != [n for n in new_levels if n in old_levels]:
        out.append({"change": "level", "id": "levels", "class": "breaking",
                    "detail": f"levels reordered {old_levels} -> {new_levels}"})
    if old_c["default_level"] != new_c["default_level"]:
        out.append({"change": "level", "id": "default_level", "class": "breaking",
                    "detail": f"default level {old_c['default_level']} -> {new_c['default_level']}: every client "
                              "that does not choose a level changes behaviour"})
    old_t = (old_c.get("flag") or {}).get("thresholds", {})
    new_t = (new_c.get("flag") or {}).get("thresholds", {})
    for name in new_levels:
        a, b = old_t.get(name), new_t.get(name)
        if a is None or b is None or a == b:
            continue
        if b > a:
            out.append({"change": "flag_threshold", "id": name, "class": "breaking",
                        "detail": f"flag threshold at {name} raised {a:g} -> {b:g} (flags less)"})
        else:
            out.append({"change": "flag_threshold", "id": name, "class": "minor",
                        "detail": f"flag threshold at {name} lowered {a:g} -> {b:g} (flags more)"})
    return out


def _other_changes(old_c, new_c) -> list[dict]:
    out = []
    old_cat, new_cat = old_c.get("categories", {}), new_c.get("categories", {})
    for name in sorted(old_cat.keys() | new_cat.keys()):
        if name not in new_cat:
            out.append({"change": "category", "id": name, "class": "breaking", "detail": "category removed"})
        elif name not in old_cat:
            out.append({"change": "category", "id": name, "class": "minor", "detail": "category added"})
        elif old_cat[name] != new_cat[name]:
            out.append({"change": "category", "id": name, "class": "minor",
                        "detail": "category description changed (the platform sees it)"})
    if old_c.get("instructions") != new_c.get("instructions"):
        out.append({"change": "instructions", "id": "instructions", "class": "minor",
                    "detail": "platform instructions changed: only `gate eval --live` measures this"})
    if old_c.get("noise_markers") != new_c.get("noise_markers"):
        out.append({"change": "noise_markers", "id": "noise_markers", "class": "patch",
                    "detail": "noise markers changed (live leak check only)"})
    old_f, new_f = old_c.get("thresholds", {}), new_c.get("thresholds", {})
    for name in sorted(old_f.keys() | new_f.keys()):
        a, b = old_f.get(name), new_f.get(name)
        if a == b:
            continue
        ceiling = name.startswith(metrics.AUDIT_THRESHOLD_PREFIX)  # gate audit's: higher is looser
        kind, looser = ("ceiling", "raised") if ceiling else ("floor", "lowered")
        if b is None or (a is not None and (b > a if ceiling else b < a)):
            detail = f"{kind} {name} {looser} {_fmt(a)} -> {_fmt(b)}: say why in the pull request"
        else:
            detail = f"{kind} {name} {_fmt(a)} -> {_fmt(b)}"
        out.append({"change": "floor", "id": name, "class": "patch", "detail": detail})
    if old_c.get("schema_version") != new_c.get("schema_version"):
        out.append({"change": "schema_version", "id": "schema_version", "class": "minor",
                    "detail": f"schema_version {old_c.get('schema_version')} -> {new_c.get('schema_version')}"})
    return out


class _Evidence:
    """Runs one rule id of each revision, in isolation, on the same inputs."""

    def __init__(self, old_rev, new_rev, old_clf, new_clf, fixtures):
        self.revs = (old_rev, new_rev)
        self.compiled = ({r.id: r for r in old_clf.rules}, {r.id: r for r in new_clf.rules})
        self.ids = [f.id for f in fixtures]
        self.windows = [f.window for f in fixtures]
        self._turns = None
        self._subjects = {}

    def compare(self, rule_id) -> tuple[list, list]:
        """(inputs matched only by OLD, inputs matched only by NEW), each named for a reader."""
        old_rule, new_rule = self.compiled[0].get(rule_id), self.compiled[1].get(rule_id)
        if old_rule is None or new_rule is None:
            return [], []
        inputs = self._examples(rule_id)
        lost, gained = [], []
        for label, window in inputs:
            a, b = self._fires_example(old_rule, window), self._fires_example(new_rule, window)
            if a and not b:
                lost.append(label)
            elif b and not a:
                gained.append(label)
        for index in range(len(self.windows)):
            a, b = self._fires_fixture(old_rule, index), self._fires_fixture(new_rule, index)
            if a and not b:
                lost.append(f"fixture {self.ids[index]}")
            elif b and not a:
                gained.append(f"fixture {self.ids[index]}")
        return lost, gained

    def _examples(self, rule_id):
        seen, out = set(), []
        for rev in self.revs:
            rule = next((r for r in rev.rules if r.id == rule_id), None)
            if rule is None:
                continue
            for example in rule.examples.match + rule.examples.no_match:
                key = json.dumps(example, sort_keys=True, default=str)
                if key not in seen:
                    seen.add(key)
                    out.append((f"example {_short(example)}", example))
        return out

    @staticmethod
    def _fires_example(rule, example) -> bool:
        from gate.evaluation.lint import example_subjects

        try:
            return any(rule.fires(s) for s in example_subjects(rule, example))
        except TimeoutError:
            return False

    def _fires_fixture(self, rule, index) -> bool:
        # The same subjects the classifier builds (see gate.evaluation.lint.example_subjects),
        # normalized once per fixture and shared by every rule compared.
        from gate.engine.features import Subject
        from gate.engine.window import normalize_window

        if self._turns is None:
            self._turns = [None] * len(self.windows)
        turns = self._turns[index]
        if turns is None:
            turns = self._turns[index] = normalize_window(self.windows[index])
        key = (index, rule.scope, rule.role)
        subjects = self._subjects.get(key)
        if subjects is None:
            if rule.scope == "turn":
                subjects = [Subject((t,)) for t in turns if rule.role in ("any", t.role)]
            else:
                chosen = tuple(t for t in turns if rule.role in ("any", t.role))
                subjects = [Subject(chosen)] if chosen else []
            self._subjects[key] = subjects
        try:
            return any(rule.fires(s) for s in subjects)
        except TimeoutError:
            return False


def _count(items) -> str:
    return f"{len(items)} input" + ("s" if len(items) != 1 else "")


def _preview(items, limit=3) -> str:
    shown = ", ".join(items[:limit])
    return shown + (f", +{len(items) - limit} more" if len(items) > limit else "")


def _short(example) -> str:
    text = example if isinstance(example, str) else json.dumps(example, default=str)
    text = text.replace("\n", " ")
    return repr(text[:40] + ("…" if len(text) > 40 else ""))


def _clip(pattern, limit=60) -> str:
    text = " | ".join(pattern) if isinstance(pattern, list) else str(pattern)
    return text if len(text) <= limit else text[:limit] + "…"


def _fmt(value) -> str:
    if value is None:
        return "not measured"
    return f"{value:.3f}" if isinstance(value, float) else str(value)

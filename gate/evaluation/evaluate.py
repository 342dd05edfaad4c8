"""Load a revision and fixtures, classify every fixture, score, and report.

I/O lives here and in the CLI; scoring (metrics) and rendering (report) are pure.
A gate that cannot measure must not pass: a rules file that does not load or
fixtures that do not validate still give a report, one that says what could
not be measured and why, and whose check fails.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import NamedTuple

from gate.evaluation import metrics
from gate.language.errors import GateError, Problem

PARALLEL_MIN = 4000  # classifications below this are faster in one process than forking
_WORK = None  # (classifier, windows, levels), inherited by forked workers


class Result(NamedTuple):
    """A decision without its payload: what scoring and the report need.
    A plain tuple underneath, so worker processes send results back cheaply."""

    action: str
    type: str | None
    rule: str | None
    trace: tuple
    error: str | None


@dataclass
class LevelRun:
    level: str
    results: list  # Result per fixture, in fixture order
    scores: dict  # on the gated fixtures only
    check: dict  # {"passed", "failures", "not_checked"}


def load_compiled(spec: str, use_cache: bool = True):
    """(revision, classifier) for a path or a `REV:path` git spec. Raises GateError.
    A rules file compiled before comes from the compiled-revision cache, as it does
    for a hook (gate/engine/cache.py): no YAML, no jsonschema, patterns compiled on first use."""
    from gate.language.gitrev import read_spec

    text = read_spec(spec)
    if text is None:
        if os.path.isdir(spec):
            raise GateError(Problem(spec, "is a folder; pass a rules file"))
        from gate.engine.cache import load_compiled_revision

        return load_compiled_revision(spec, use_cache=use_cache)
    from gate.engine.compiler import compile_revision
    from gate.language.loader import load_revision

    revision = load_revision(spec, text=text, display_name=spec)
    return revision, compile_revision(revision)


def gated_mask(fixtures, strict: bool) -> list[bool]:
    """Which fixtures count toward the gated scores: todo fixtures only under --strict."""
    return [strict or not f.todo for f in fixtures]


def rules_at(classifier, level: str) -> list[tuple]:
    """(id, kind, scope, active at `level`, sign) per rule; sign -1 marks a suppressor."""
    index = classifier.levels.index(level)
    return [(r.id, r.kind, r.scope, r.active_at(index),
             -1 if r.kind == "signal" and r.weigh is None and not any(w > 0 for w in r.weights.values()) else 1)
            for r in classifier.rules]


def classify_all(classifier, windows, levels, jobs: int | None = None) -> dict[str, list[Result]]:
    """Every window at every level. Forks workers for big sets: the classifier is
    CPU-bound and pure, and forked workers inherit it without pickling."""
    levels = list(levels)
    jobs = jobs or _cpu_count()
    if jobs > 1 and len(windows) * len(levels) >= PARALLEL_MIN and _can_fork():
        return _classify_parallel(classifier, windows, levels, jobs)
    return {level: [_result(classifier.classify(w, level)) for w in windows] for level in levels}


def _result(decision) -> Result:
    return Result(decision.action, decision.type, decision.rule, decision.trace, decision.error)


def _classify_range(bounds):
    classifier, windows, levels = _WORK
    start, stop = bounds
    out = []
    for level in levels:
        part = []
        for i in range(start, stop):
            d = classifier.classify(windows[i], level)
            part.append((d.action, d.type, d.rule, d.trace, d.error))  # plain tuples pickle ~20x faster
        out.append(part)
    return out


def _classify_parallel(classifier, windows, levels, jobs):
    import multiprocessing

    global _WORK
    chunk = max(250, len(windows) // (jobs * 4) + 1)
    bounds = [(start, min(start + chunk, len(windows))) for start in range(0, len(windows), chunk)]
    _WORK = (classifier, windows, levels)
    try:
        with multiprocessing.get_context("fork").Pool(jobs) as pool:
            parts = pool.map(_classify_range, bounds, chunksize=1)
    finally:
        _WORK = None
    out = {level: [] for level in levels}
    for part in parts:
        for level, results in zip(levels, part):
            out[level].extend(map(Result._make, results))
    return out


def _cpu_count() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


def _can_fork() -> bool:
    import multiprocessing

    return "fork" in multiprocessing.get_all_start_methods()


def score_level(classifier, revision, fixtures, results, level: str, strict: bool) -> LevelRun:
    mask = gated_mask(fixtures, strict)
    if all(mask):
        gated_fixtures, gated_results = fixtures, results
    else:
        gated_fixtures = [f for f, keep in zip(fixtures, mask) if keep]
        gated_results = [r for r, keep in zip(results, mask) if keep]
    scores = metrics.score(gated_fixtures, gated_results, rules_at(classifier, level))
    failures = metrics.check_floors(scores, revision.thresholds)
    if scores["errors"]:
        failures.append(f"{scores['errors']} fixture(s) made the classifier fail (see findings); "
                        "their decisions are not measurements")
    not_checked = sorted(k for k in revision.thresholds if k not in metrics.OFFLINE_RATIOS
                         and not k.startswith(metrics.AUDIT_THRESHOLD_PREFIX))
    return LevelRun(level, results, scores, {"passed": not failures, "failures": failures,
                                             "not_checked": not_checked})


def evaluate(rules_spec: str | None, fixture_paths, *, level: str | None = None, sweep: bool = False,
             strict: bool = False, jobs: int | None = None, use_cache: bool = True) -> dict:
    """The report dict for one revision on a fixture set (see gate.evaluation.report.build_report).
    `use_cache`: the rules file and fixture files parsed before are read back from their caches
    (gate/engine/cache.py, gate/evaluation/fixturecache.py).

    Raises GateError only for a level the revision does not have (a usage error);
    unloadable rules or invalid fixtures produce an unmeasured report instead.
    """
    from gate.evaluation.fixtures import load_fixtures
    from gate.evaluation.report import build_report, unmeasured_report

    unmeasured, revision, classifier, fixtures = [], None, None, None
    if rules_spec is None:
        unmeasured.append({"what": "rules", "why": ["rules/: no rules file found; pass --rules PATH"]})
    else:
        try:
            revision, classifier = load_compiled(rules_spec, use_cache)
        except GateError as exc:
            unmeasured.append({"what": "rules", "why": [str(p) for p in exc.problems]})
    try:
        fixtures = load_fixtures(list(fixture_paths), use_cache=use_cache)
    except GateError as exc:
        unmeasured.append({"what": "fixtures", "why": [str(p) for p in exc.problems]})
    if unmeasured:
        return unmeasured_report(rules_spec, revision, fixtures, unmeasured, level=level, strict=strict)

    main_level = level or revision.default_level
    if main_level not in revision.levels:
        raise GateError(Problem(rules_spec, f"level '{main_level}' is not a level of this revision "
                                            f"(levels: {', '.join(revision.levels)})"))
    levels = list(revision.levels) if sweep else [main_level]
    results = classify_all(classifier, [f.window for f in fixtures], levels, jobs)
    runs = {lv: score_level(classifier, revision, fixtures, results[lv], lv, strict) for lv in levels}
    return build_report(rules_spec, revision, fixtures, runs[main_level],
                        sweep=runs if sweep else None, strict=strict)

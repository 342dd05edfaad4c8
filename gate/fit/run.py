"""`gate fit` end to end: mass-check, cross-validate, fit, choose thresholds, rewrite.

Pure of I/O except reading the rules and fixture files; the CLI writes the outputs.
"""

from __future__ import annotations

import hashlib
import itertools
import os
from dataclasses import dataclass

from gate.language.errors import GateError, Problem

LEXICON_ID = "learned-words"
NO_MATCH_CANDIDATES = ("ok", "thanks", "hm", "sure")


@dataclass
class FitOutcome:
    text: str  # the new rules file
    report: dict  # what `gate fit` prints (gate.fit.report)


def fit_revision(rules_path: str, fixture_paths, *, out_revision: str, folds: int = 5, seed: int = 13,
                 l2: float = 1.0, lexicon: int | None = None, min_df: int = 3, inner: bool = True,
                 recall_only=(), holdout=(), type_prior: float = 0.0, type_l2: float | None = None,
                 recall_weight: float = 1.0, rest_weight: float = 1.0, spread: int = 0,
                 progress=None) -> FitOutcome:
    """`fixture_paths` are fitted and cross-validated; those also in `recall_only` count
    toward an operating point's recall but not its precision. Files in `holdout` are neither
    fitted nor cross-validated, even inside a `fixture_paths` folder: a blind set kept to score
    the fitted revision on afterwards (`gate eval`). `recall_weight`: how much a knowledge
    window of a `recall_only` set counts in the durability fit (1: as any row). `spread`:
    cross-validate that many more times, under fold seeds seed+1.., and report each score's
    range over all the seeds (the written file does not change: the thresholds come from
    `seed`'s folds). `rest_weight`: how much a window of a `recall_only` set without knowledge
    counts in the durability fit (1: as any row); their flags cost no precision."""
    from gate.engine.compiler import compile_revision
    from gate.evaluation.fixtures import fixture_files, load_fixtures
    from gate.fit import crossval, groups, operating, rows as mass, weights as wt
    from gate.fit.rewrite import rewrite
    from gate.language.loader import load_revision

    say = progress or (lambda message: None)
    revision = load_revision(rules_path)
    try:
        with open(rules_path, encoding="utf-8") as handle:
            text = handle.read()
    except OSError as exc:  # pragma: no cover - load_revision read it a moment ago
        raise GateError(Problem(rules_path, f"cannot read: {exc}")) from None
    data = revision.source.data
    classifier = compile_revision(revision)
    if folds < 2:
        raise GateError(Problem("--folds", f"needs at least 2 folds, got {folds}"))
    if recall_weight != 1.0 and not recall_only:  # it weighs only recall-only rows: alone it would change nothing
        raise GateError(Problem("--recall-weight", "weighs the knowledge windows of --recall-only sets, "
                                                   "and none is named: add --recall-only PATH or drop it"))
    if rest_weight != 1.0 and not recall_only:
        raise GateError(Problem("--recall-only-rest-weight", "weighs the windows without knowledge of --recall-only "
                                                             "sets, and none is named: add --recall-only PATH or drop it"))

    fixture_paths = list(dict.fromkeys(list(fixture_paths) + list(recall_only)))
    # A file reached through two paths (a --recall-only file inside a --fixtures folder) is read
    # once, and belongs to its --recall-only set: that is the more specific thing said about it.
    files_of = {path: [os.path.normpath(f) for f in fixture_files([path])] for path in fixture_paths}
    for path, names in files_of.items():
        if not names:
            raise GateError(Problem(str(path), "holds no fixture files (*.yaml, *.yml)"))
    dataset_of_file = {}
    reached = {name for names in files_of.values() for name in names}
    held_out = set()
    for path in holdout:
        named = {os.path.normpath(f) for f in fixture_files([path])}
        if not named & reached:  # a held-out file the fit would not have read is a mistyped path
            raise GateError(Problem(str(path), "--holdout names no file among the --fixtures and --recall-only "
                                                "paths, so it holds nothing out"))
        held_out |= named
    for path in list(dict.fromkeys(list(recall_only) + fixture_paths)):
        for name in files_of[path]:
            if name not in held_out:
                dataset_of_file.setdefault(name, _dataset_name(path))
    if not dataset_of_file:
        raise GateError(Problem(str(fixture_paths[0]), "every fixture file is held out: nothing left to fit on"))
    fixtures = load_fixtures(sorted(dataset_of_file))
    if not fixtures:
        raise GateError(Problem(str(fixture_paths[0]), "holds no fixtures: nothing to fit on"))
    datasets = [dataset_of_file.get(f.file, _dataset_name(f.file)) for f in fixtures]
    group_keys = groups.groups(fixtures)
    if len(set(group_keys)) < 2:
        raise GateError(Problem(str(fixture_paths[0]), "cross-validation needs windows from two sources or more "
                                "(fixture files, or sources named in notes) that are not near-duplicates"))

    raw_signals = data["signals"]
    existing = next((s for s in raw_signals if "lexicon" in s["when"]), None)
    lexicon_id = existing["id"] if existing else (LEXICON_ID if lexicon else None)
    say(f"mass-check: {len(fixtures)} windows x {len(classifier.levels)} levels")
    rows = mass.mass_check(classifier, fixtures, datasets, group_keys,
                           lexicon_signal=existing["id"] if existing else None,
                           lexicon_role=existing["role"] if existing else "user",
                           recall_only=frozenset(_dataset_name(p) for p in recall_only))
    _require_both_kinds(rows, revision.default_level, fixture_paths)
    types = classifier.types
    plan = wt.Plan(
        types=types,
        signals=tuple(s["id"] for s in raw_signals) + ((lexicon_id,) if lexicon_id and not existing else ()),
        hand={s["id"]: wt.expand(s["weights"], types) for s in raw_signals},
        fixed=frozenset(s["id"] for s in raw_signals if s.get("fit", {}).get("fixed")),
        sign={s["id"]: s["fit"]["sign"] for s in raw_signals if "sign" in s.get("fit", {})},
        level=revision.default_level, l2=l2, seed=seed, lexicon_id=lexicon_id,
        lexicon_limit=lexicon or 0,
        lexicon_terms=tuple(existing["when"]["lexicon"]["terms"]) if existing else (), min_df=min_df,
        type_prior=type_prior, type_l2=type_l2, recall_weight=recall_weight, rest_weight=rest_weight)
    declared = data["flag"].get("operating_points")
    points = declared or {lv: operating.DEFAULT_POINTS[lv] for lv in revision.levels if lv in operating.DEFAULT_POINTS}
    missing = [lv for lv in revision.levels if lv not in points]
    if missing:
        raise GateError(revision.source.problem(("flag",), "flag.operating_points needs a point for level "
                                                + ", ".join(repr(m) for m in missing)
                                                + " (min_flag_precision or min_extract_recall)"))

    say(f"cross-validation: {folds} folds over {len(set(group_keys))} groups"
        + (", thresholds nested" if inner else ""))
    order, default = tuple(revision.levels), revision.default_level
    fold_of, scored, decisions, fold_thresholds = crossval.cross_validate(rows, plan, points, folds, seed,
                                                                         inner=inner, progress=say,
                                                                         order=order, default=default)
    thresholds = {lv: operating.choose_threshold(scored[lv], points[lv]) for lv in revision.levels}
    say("final fit on every window")
    final = wt.train(rows, plan)

    subsets = _subsets(datasets)
    table = crossval.table(rows, decisions, subsets)
    spread_report = None
    if spread:
        seeds = [seed + i for i in range(spread + 1)]
        tables = [table]
        for other in seeds[1:]:
            say(f"spread: cross-validation under fold seed {other}")
            tables.append(crossval.table(rows, crossval.cross_validate(rows, plan, points, folds, other, inner=inner,
                                                                       order=order, default=default)[2], subsets))
        spread_report = {"seeds": seeds, "cv": crossval.spread(tables)}
    final_scored = {lv: crossval.scored_rows(rows, final, plan, lv) for lv in revision.levels}
    leaks = {lv: [r.fixture.id for r, s in zip(rows, final_scored[lv])
                  if r.fixture.label == "drop" and operating.decide(s, thresholds[lv])[0] == "flag"]
             for lv in revision.levels}

    lexicon_block = None
    if lexicon_id is not None and (existing or final.terms):  # a new lexicon without terms is not written
        from gate.engine.conditions.lexicon import Lexicon

        matcher = Lexicon(final.terms)
        no_match = next((c for c in NO_MATCH_CANDIDATES if not matcher.find(c)), "")
        lexicon_block = {"id": lexicon_id, "base": final.lexicon_base, "terms": final.terms,
                         "limit": lexicon or len(plan.lexicon_terms), "no_match": no_match}
    digest = fixtures_digest(sorted(dataset_of_file))
    training = sum(1 for r in rows if not r.levels[default].dropped)
    fitted = {
        "from": revision.policy,
        "fixtures": {"digest": digest, "files": len(dataset_of_file),
                     "windows": len(rows), "training_windows": training},
        "folds": folds, "groups": len(set(group_keys)), "seed": seed, "regularization": _regularization(plan),
    }
    if recall_only:
        fitted["recall_only"] = sorted(_dataset_name(p) for p in recall_only)
        if recall_weight != 1.0:
            fitted["recall_weight"] = recall_weight
        if rest_weight != 1.0:
            fitted["rest_weight"] = rest_weight
    if holdout:  # what the weights never saw, so that a later score on it can be called blind
        fitted["held_out"] = sorted(_dataset_name(p) for p in holdout)
    if lexicon_id is not None:
        fitted["lexicon"] = {"terms": len(final.terms), "limit": lexicon_block["limit"] if lexicon_block else lexicon,
                             "min_df": min_df}
    fitted["thresholds"] = "chosen per operating point on cross-validated scores"
    fitted["cv"] = {lv: {name: _compact(cell) for name, cell in by_subset.items()} for lv, by_subset in table.items()}
    new_text = rewrite(text, revision=out_revision,
                       signal_weights={s: w for s, w in final.signals.items() if w is not None or s in plan.fixed},
                       thresholds=thresholds, points=None if declared else points, lexicon=lexicon_block,
                       fitted=fitted, origin=revision.revision)

    check = self_check(new_text, rows, final_scored, thresholds, order, default)
    report = {
        "rules": rules_path, "revision": out_revision, "from_policy": revision.policy, "fitted": fitted,
        "points": points, "thresholds": {lv: {"fitted": thresholds[lv], "hand": revision.flag_thresholds[lv],
                                              "folds": fold_thresholds[lv]} for lv in revision.levels},
        "cv": table, "default_level": default,
        "signals": _signal_rows(rows, plan, final, default),
        "lexicon": [{"term": t, "weights": w} for t, w in final.terms.items()],
        "drop_windows_flagged": leaks, "self_check": check,
    }
    if spread_report:
        report["spread"] = spread_report
    return FitOutcome(new_text, report)


def _regularization(plan) -> dict:
    """What the fitted block records; the type-part settings only when they are not the defaults."""
    out = {"l2": plan.l2}
    if plan.type_l2 is not None:
        out["type_l2"] = plan.type_l2
    if plan.type_prior:
        out["type_prior"] = plan.type_prior
    return out


def _dataset_name(path: str) -> str:
    name = os.path.basename(os.path.normpath(path))
    return os.path.splitext(name)[0] if os.path.isfile(path) else name


def _subsets(datasets) -> dict:
    names = list(dict.fromkeys(datasets))
    out = {name: [i for i, d in enumerate(datasets) if d == name] for name in names}
    if len(names) > 2:
        for a, b in itertools.combinations(names, 2):
            out[f"{a} + {b}"] = [i for i, d in enumerate(datasets) if d in (a, b)]
    if len(names) > 1:
        out["all"] = list(range(len(datasets)))
    return out


def _compact(cell: dict) -> dict:
    """{windows, metric: [fitted, hand]} for the fitted block."""
    out = {"windows": cell["windows"]}
    for name in cell["fitted"]:
        out[name] = [cell["fitted"][name], cell["hand"][name]]
    return out


def fixtures_digest(files) -> str:
    """sha256 of the fixture files' contents, independent of where they sit."""
    parts = []
    for name in files:
        with open(name, "rb") as handle:
            parts.append(hashlib.sha256(handle.read()).hexdigest())
    return "sha256:" + hashlib.sha256("".join(sorted(parts)).encode()).hexdigest()[:16]


def _signal_rows(rows, plan, final, level) -> list[dict]:
    """SpamAssassin's hit-frequencies: how often each signal fired on knowledge and on
    the rest of the training windows, with its hand and fitted weights."""
    fired_extract, fired_rest = {}, {}
    for r in rows:
        view = r.levels[level]
        if view.dropped:
            continue
        bucket = fired_extract if r.fixture.label == "extract" else fired_rest
        for s in view.fired:
            bucket[s] = bucket.get(s, 0) + 1
    out = []
    for s in plan.signals:
        if s == plan.lexicon_id:
            continue
        fitted = final.signals.get(s)
        out.append({"signal": s, "extract": fired_extract.get(s, 0), "rest": fired_rest.get(s, 0),
                    "hand": plan.hand.get(s, {}), "fitted": plan.hand.get(s, {}) if fitted is None else fitted,
                    "fixed": s in plan.fixed, "sign": plan.sign.get(s)})
    return out


def self_check(text: str, rows, scored, thresholds, order, default: str) -> dict:
    """Load the written file with the unchanged loader and compiler, classify every window,
    and count decisions that differ from what the fit computed (there must be none)."""
    from gate.engine.compiler import compile_revision
    from gate.fit.operating import decide, settle_spared
    from gate.language.loader import load_revision

    revision = load_revision("fitted.yaml", text=text, display_name="(fitted revision)")
    classifier = compile_revision(revision)
    computed = settle_spared({level: [decide(s, thresholds[level]) for s in level_scored]
                              for level, level_scored in scored.items()}, scored, order, default)
    differ = []
    for level, level_scored in scored.items():
        for row, fit in zip(rows, computed[level]):
            d = classifier.classify(row.fixture.window, level)
            if (d.action, d.type) != fit:
                differ.append({"fixture": row.fixture.id, "level": level, "file": (d.action, d.type), "fit": fit})
    return {"policy": revision.policy, "decisions": sum(len(v) for v in scored.values()), "differ": differ}


def _require_both_kinds(rows, level: str, paths) -> None:
    """Weights are learned from the difference between knowledge and the rest: a fit on one
    kind alone would learn a constant, and cross-validate nothing."""
    kept = [row for row in rows if not row.levels[level].dropped]
    knowledge = sum(1 for row in kept if row.fixture.label == "extract")
    if not knowledge or knowledge == len(kept):
        missing = "knowledge (label extract)" if not knowledge else "anything but knowledge (exclude, or drop)"
        raise GateError(Problem(str(paths[0]), f"the {len(kept)} windows the drop half keeps hold no {missing}: "
                                               "a fit learns from the difference between the two"))

"""Honest validation: grouped K-fold cross-validation, nested for the thresholds.

For each outer fold the weights (and lexicon terms) are fitted on the other folds,
and each level's threshold is chosen on inner cross-validated scores of those
training folds only; the fold's rows are then decided with both. So no reported
figure was computed on a row that its weights, terms or thresholds were fitted on.
The hand weights are scored on the same rows, at their own thresholds.
"""

from __future__ import annotations

from gate.engine.conditions.lexicon import Lexicon
from gate.evaluation import metrics
from gate.fit.groups import assign_folds
from gate.fit.operating import Result, Scored, choose_threshold, decide, settle_spared
from gate.fit.weights import contributions, score, train

REPORTED = ("extract_recall", "flag_precision", "type_accuracy", "hard_drop_recall", "exclude_suppressed_early")


def scored_rows(rows, weights, plan, level) -> list:
    lexicon = Lexicon(weights.terms) if plan.lexicon_id is not None else None
    out = []
    for row in rows:
        view = row.levels[level]
        if view.dropped:
            out.append(Scored(row.target, True, False, None, 0.0, row.judged))
            continue
        fired, best, value = score(contributions(view, weights, plan, lexicon), plan.types)
        out.append(Scored(row.target, False, fired, best, value, row.judged, view.spared))
    return out


def out_of_fold(rows, plan, levels, k: int, seed: int, on_fold=None):
    """(fold of each row, {level: Scored per row}) from models that never saw the row."""
    fold_of = assign_folds([r.group for r in rows], k, seed)
    scored = {level: [None] * len(rows) for level in levels}
    for fold in range(k):
        train_rows = [r for r, f in zip(rows, fold_of) if f != fold]
        test = [i for i, f in enumerate(fold_of) if f == fold]
        if not test or not train_rows:
            continue
        weights = train(train_rows, plan)
        for level in levels:
            for i, s in zip(test, scored_rows([rows[i] for i in test], weights, plan, level)):
                scored[level][i] = s
        if on_fold:
            on_fold(fold, train_rows, test, weights)
    return fold_of, scored


def cross_validate(rows, plan, points: dict, k: int, seed: int, *, inner: bool = True, progress=None,
                   order=None, default: str | None = None):
    """Out-of-fold decisions of the fitted weights per level, with nested thresholds.
    `order` (the levels, strictest first) and `default` settle what a spare kept at a
    stricter level as the classifier does (operating.settle_spared).

    Returns (fold_of, {level: Scored per row}, {level: (action, type) per row},
    {level: [threshold of each fold]})."""
    levels = list(points)
    decisions = {level: [None] * len(rows) for level in levels}
    fold_thresholds = {level: [] for level in levels}

    def on_fold(fold, train_rows, test, weights):
        if progress:
            progress(f"fold {fold + 1}/{k}: {len(train_rows)} training windows, {len(test)} held out")
        if inner:
            _, inner_scored = out_of_fold(train_rows, plan, levels, k, seed)
        else:  # thresholds on the training fit itself (faster, optimistic thresholds)
            inner_scored = {lv: scored_rows(train_rows, weights, plan, lv) for lv in levels}
        for level in levels:
            threshold = choose_threshold([s for s in inner_scored[level] if s is not None], points[level])
            fold_thresholds[level].append(threshold)
            for i, s in zip(test, scored_rows([rows[i] for i in test], weights, plan, level)):
                decisions[level][i] = decide(s, threshold)

    fold_of, scored = out_of_fold(rows, plan, levels, k, seed, on_fold)
    if order is not None and default is not None:
        settle_spared(decisions, scored, order, default)
    return fold_of, scored, decisions, fold_thresholds


def table(rows, decisions_by_level, subsets: dict) -> dict:
    """{level: {subset: {"fitted": scores, "hand": scores}}} on the same rows."""
    out = {}
    for level, decisions in decisions_by_level.items():
        out[level] = {}
        for name, members in subsets.items():
            fixtures = [rows[i].fixture for i in members]
            fitted = [Result(*decisions[i], None, (), None) for i in members]
            hand = [Result(*rows[i].levels[level].hand, None, (), None) for i in members]
            out[level][name] = {"windows": len(members),
                                "fitted": _pick(metrics.score(fixtures, fitted)),
                                "hand": _pick(metrics.score(fixtures, hand))}
    return out


def spread(tables) -> dict:
    """{level: {subset: {score: [lowest, highest]}}} of the fitted weights' scores over
    tables of the same rows cross-validated under different fold seeds (None where a
    score is not measured)."""
    out = {}
    for level, by_subset in tables[0].items():
        out[level] = {}
        for name in by_subset:
            cells = [t[level][name]["fitted"] for t in tables]
            out[level][name] = {score: _range([c[score] for c in cells if c[score] is not None])
                                for score in REPORTED}
    return out


def _range(values) -> list | None:
    return [min(values), max(values)] if values else None


def _pick(scores: dict) -> dict:
    return {name: None if scores[name] is None else round(scores[name], 3) for name in REPORTED}

"""Training one weight set, and scoring rows with it exactly as the classifier would.

`train` fits the free signals (and, with a lexicon, selects and fits its terms) on
the training rows; `score` sums the fired weights per type in the classifier's own
order and arithmetic, so a threshold chosen here decides as the written file will.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from gate.fit.rows import NONE
from gate.language.model import ALL_TYPES_KEY

ANY_TERM = "(any term)"  # the lexicon signal's own weights: added when any term is found


@dataclass(frozen=True)
class Plan:
    """What a fit may change, and how."""

    types: tuple  # the classifier's types, in categories order (ties go to the first)
    signals: tuple  # every signal id in file order, the lexicon's included
    hand: dict  # signal id -> its hand weights, all_types spread over the types
    fixed: frozenset  # signals whose hand weights are kept
    sign: dict  # signal id -> 'negative' | 'positive'
    level: str  # the level whose rows are the training rows (the default level)
    l2: float
    seed: int
    lexicon_id: str | None = None  # the lexicon signal's id, when there is one
    lexicon_limit: int = 0  # select at most this many terms (0: keep lexicon_terms)
    lexicon_terms: tuple = ()  # the terms of an existing lexicon, refitted when no selection
    min_df: int = 3
    type_scale: float = 0.5  # how much the type part adds to the durability part (see _two_part)
    type_l2: float | None = None  # the type part's L2 strength (None: l2)
    type_prior: float = 0.0  # pull the type part toward the hand weights' type evidence (0: toward zero)
    recall_weight: float = 1.0  # how much a knowledge window of a --recall-only set counts in the durability fit
    rest_weight: float = 1.0  # how much any other window of a --recall-only set counts there

    @property
    def free(self) -> tuple:
        return tuple(s for s in self.signals if s not in self.fixed and s != self.lexicon_id)


@dataclass(frozen=True)
class Weights:
    signals: dict  # signal id -> {type: weight}, rounded, zeros left out
    lexicon_base: dict = field(default_factory=dict)
    terms: dict = field(default_factory=dict)  # term -> {type: weight}, in table order


def expand(weights: dict, types) -> dict:
    """A signal's weights per type, `all_types` spread over each type."""
    spread = weights.get(ALL_TYPES_KEY, 0.0)
    return {t: weights.get(t, 0.0) + spread for t in types if weights.get(t, 0.0) + spread}


def train(rows, plan: Plan) -> Weights:
    import numpy as np

    from gate.fit import terms as lexicon_terms

    views = [r.levels[plan.level] for r in rows]
    keep = [i for i, v in enumerate(views) if not v.dropped]
    views = [views[i] for i in keep]
    y = [_label(rows[i].target, plan.types) for i in keep]
    free = plan.free
    column = {s: j for j, s in enumerate(free)}
    x = np.zeros((len(views), len(free)))
    offset = np.zeros((len(views), len(plan.types)))
    for i, view in enumerate(views):
        for s in view.fired:
            if s in column:
                x[i, column[s]] = 1.0
            elif s in plan.fixed:
                for t, w in plan.hand[s].items():
                    offset[i, plan.types.index(t)] += w
    bounds = [_bound(plan.sign.get(s)) for s in free]
    chosen = ()
    if plan.lexicon_id is not None:
        texts = [v.text for v in views]
        if plan.lexicon_limit:
            group_keys = [rows[i].group for i in keep]
            pool = lexicon_terms.candidates(texts, group_keys, min_df=plan.min_df)
            chosen = tuple(lexicon_terms.select(x, lexicon_terms.presence(texts, pool), y, pool,
                                                plan.lexicon_limit, seed=plan.seed))
        else:
            chosen = tuple(plan.lexicon_terms)
        found = lexicon_terms.presence(texts, chosen)
        any_term = (found.sum(axis=1) > 0).astype(float)[:, None]
        x = np.hstack([x, any_term, found])
        bounds += [_bound(plan.sign.get(plan.lexicon_id))] + [(None, None)] * len(chosen)
    # A --recall-only set's flags are not held against precision, so its windows without knowledge
    # may count less in the fit than a window whose false flag would cost precision.
    counts = [1.0 if rows[i].judged else plan.recall_weight if y[j] else plan.rest_weight for j, i in enumerate(keep)]
    fitted = _two_part(x, y, bounds, offset, plan, _type_prior(plan, column, bounds, x.shape[1]), counts)
    signals = {}
    for s in plan.signals:
        if s in plan.fixed:
            signals[s] = None  # keeps its hand weights as written
        elif s in column:
            signals[s] = _rounded(fitted[column[s]], plan.types)
    base, table = {}, {}
    if plan.lexicon_id is not None:
        base = _rounded(fitted[len(free)], plan.types)
        for j, term in enumerate(chosen):
            weights = _rounded(fitted[len(free) + 1 + j], plan.types)
            if weights:
                table[term] = weights
    return Weights(signals, base, table)


def _label(target: str, types) -> int:
    """0 for nothing durable, 1.. for a type the rules score; knowledge of a type no signal
    weighs toward (session_state, written by its own path) is durable with no type to learn:
    len(types) + 1, which the type part leaves out."""
    if target == NONE:
        return 0
    return 1 + types.index(target) if target in types else len(types) + 1


def _type_prior(plan, column, bounds, width):
    """What the type part's penalty pulls toward: type_prior x each free signal's hand weights
    less their mean over the types (their type evidence, in type-part units); None for zero.
    Signed signals carry no type part, and lexicon terms have no hand weights: theirs is zero."""
    import numpy as np

    if not plan.type_prior:
        return None
    prior = np.zeros((width, len(plan.types)))
    for s, j in column.items():
        if bounds[j] == (None, None):
            hand = [plan.hand[s].get(t, 0.0) for t in plan.types]
            mean = sum(hand) / len(hand)
            prior[j] = [plan.type_prior * (h - mean) / plan.type_scale for h in hand]
    return prior


def _two_part(x, y, bounds, offset, plan, prior=None, counts=None):
    """Weights per feature and type = durability + type_scale x type evidence.

    One multinomial model over {nothing durable} + types ranks windows by their best
    type's logit, which splits durability evidence between types; a flag decision wants
    it whole. So the durability part is a logistic fit of durable vs not (the same
    weight for every type, like `all_types`), and the type part a multinomial fit
    among the durable windows only; their sum is still one weight per signal and type.
    A signed signal (a counter-signal) carries durability only, so its sign holds.
    `counts` weighs each row in the durability fit: knowledge in a --recall-only set (long
    exchanges, where the platform filters what is sent) can count more than a one-off there
    costs, since losing it is the error that matters."""
    import numpy as np

    from gate.fit.model import fit_weights

    types = len(plan.types)
    durable = np.asarray([1 if t else 0 for t in y])
    spread = offset.mean(axis=1, keepdims=True)  # fixed signals: their mean weight is durability
    part_durable = fit_weights(x, durable, 1, l2=plan.l2, bounds=bounds, offset=spread, sample_weight=counts)[:, 0]
    extract = [i for i, t in enumerate(y) if 0 < t <= types]
    if not extract:
        return np.repeat(part_durable[:, None], types, axis=1)
    type_bounds = [(None, None) if b == (None, None) else (0.0, 0.0) for b in bounds]
    type_l2 = plan.l2 if plan.type_l2 is None else plan.type_l2
    part_type = fit_weights(x[extract], [y[i] - 1 for i in extract], types, l2=type_l2, bounds=type_bounds,
                            offset=(offset - spread)[extract] / plan.type_scale, reference=False, prior=prior)
    return part_durable[:, None] + plan.type_scale * part_type


def _bound(sign):
    return {"negative": (None, 0.0), "positive": (0.0, None)}.get(sign, (None, None))


def _rounded(row, types) -> dict:
    out = {}
    for t, w in zip(types, row):
        value = round(float(w), 2)
        if value:
            out[t] = value + 0.0  # never -0.0
    return out


def contributions(view, weights: Weights, plan: Plan, lexicon) -> list:
    """The weight dicts the classifier would add for this row, in its order."""
    out = []
    for s in plan.signals:
        if s == plan.lexicon_id:
            if lexicon is not None:
                hits = lexicon.find(view.text)
                if hits:  # as Lexicon.weigher: the signal's weights, then each term found in table order
                    totals = dict(weights.lexicon_base)
                    for index in hits:
                        for t, w in lexicon.weights[index].items():
                            totals[t] = totals.get(t, 0.0) + w
                    out.append(totals)
            continue
        if s in view.fired:
            fitted = weights.signals.get(s)
            out.append(plan.hand[s] if fitted is None else fitted)
    return out


def score(contribs, types) -> tuple:
    """(fired anything, best type, its score), as Classifier._classify computes them."""
    scores = dict.fromkeys(types, 0.0)
    for weights in contribs:
        spread = weights.get(ALL_TYPES_KEY, 0.0)
        for t in types:
            scores[t] += weights.get(t, 0.0) + spread
    best = max(types, key=lambda t: scores[t])
    return bool(contribs), best, scores[best]

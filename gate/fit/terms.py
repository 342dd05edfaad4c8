"""Lexicon terms: candidate words and two-word phrases, and a sparse selection of them.

Candidates are lowercase words of letters (no numbers, ids or paths) and pairs of
such words one space apart, in the text the lexicon reads. Function words are no
candidates alone, but the person's pronouns are: who speaks to whom ("i want", "we
all", "you keep") tells a preference from a convention when no cue word does. A
candidate must occur in at least `min_df` windows of at least MIN_GROUPS groups (a
word only one or two sources use is a name or a topic, not wording). An L1-penalized
multinomial logistic regression over the signals and every candidate picks what adds
evidence the signals lack; the N terms with the largest weights are kept, and their
weights are then fitted jointly with the signals' (gate.fit.model).
"""

from __future__ import annotations

import re
import warnings

import numpy as np

from gate.engine.conditions.lexicon import Lexicon

_TOKEN = re.compile(r"\w+(?:['’]\w+)*")  # "wasn't" is one token, never "wasn" and "t"
_WORD = re.compile(r"[a-z]{2,}|i")  # a letter alone is a variable or an initial, except "i"
MIN_GROUPS = 3  # sources a term must occur in: a word of one or two sources is their topic or a name
# Function words: alone they carry no evidence a reviewer could read (a pair with
# one of them, "instead of", still can).
STOPWORDS = frozenset("""a an the of and or to in on at for is are was were be been it its this that as by
with from we you i me my our your he she they them their his her there here if so but not no do does did
can will would should could has have had am just also then than too very all any some""".split())
# Who speaks to whom: candidates alone although function words (cross-validated type accuracy
# on fixtures + real wording rose from 0.771..0.778 to 0.801..0.816 over four fold seeds).
PRONOUNS = frozenset("i me my we our us you your".split())


def candidates(texts, group_keys, *, min_df: int) -> list[str]:
    """Words and two-word phrases found in at least `min_df` texts of MIN_GROUPS groups or more."""
    docs, sources = {}, {}
    for text, group in zip(texts, group_keys):
        for term in _terms_of(text):
            docs[term] = docs.get(term, 0) + 1
            sources.setdefault(term, set()).add(group)
    return sorted(t for t, n in docs.items() if n >= min_df and len(sources[t]) >= MIN_GROUPS)


def _terms_of(text: str) -> set:
    found = set()
    previous = None  # the last token, if it was a word, and where it ended
    for match in _TOKEN.finditer(text):
        token = match.group()
        if not _WORD.fullmatch(token):
            previous = None
            continue
        # two letters alone are an abbreviation or an id, unless a pronoun
        if token in PRONOUNS or (token not in STOPWORDS and len(token) >= 3):
            found.add(token)
        if previous is not None and previous[1] + 1 == match.start():  # one separator apart, as the matcher
            if not (previous[0] in STOPWORDS and token in STOPWORDS):
                found.add(previous[0] + " " + token)
        previous = (token, match.end())
    return found


def presence(texts, terms) -> np.ndarray:
    """rows x terms, 1 where the engine's own matcher finds the term in the text."""
    matcher = Lexicon({t: {} for t in terms})
    out = np.zeros((len(texts), len(terms)))
    for i, text in enumerate(texts):
        for j in matcher.find(text):
            out[i, j] = 1.0
    return out


def _l1_arguments() -> dict:
    """scikit-learn 1.8 names the L1 penalty l1_ratio=1 (and warns at penalty='l1')."""
    from sklearn import __version__

    major, minor = (int(p) for p in __version__.split(".")[:2])
    return {"l1_ratio": 1.0} if (major, minor) >= (1, 8) else {"penalty": "l1"}


def select(signal_x, term_x, y, terms, limit: int, *, seed: int, strength: float = 1.0) -> list[str]:
    """At most `limit` terms: an L1-penalized logistic fit per class (one against the
    rest, liblinear: fast and deterministic) beside the signals, each term ranked by
    its largest weight in any class (ties: the term)."""
    if limit <= 0 or not terms:
        return []
    from scipy import sparse
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.linear_model import LogisticRegression

    _L1 = _l1_arguments()
    x = sparse.hstack([sparse.csr_matrix(signal_x), sparse.csr_matrix(term_x)]).tocsr()
    y = np.asarray(y)
    size = np.zeros(term_x.shape[1])
    durable = np.flatnonzero(y > 0)
    # each class against all other windows (what is durable, and of which type), and each
    # type against the other types among durable windows (what tells the types apart)
    tasks = [(x, (y == label).astype(int)) for label in sorted(set(y.tolist()))]
    tasks += [(x[durable], (y[durable] == label).astype(int)) for label in sorted(set(y[durable].tolist()))]
    for rows, target in tasks:
        if target.min() == target.max():
            continue
        model = LogisticRegression(C=strength, solver="liblinear", max_iter=1000, random_state=seed, **_L1)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", category=ConvergenceWarning)
            warnings.simplefilter("ignore", category=FutureWarning)
            model.fit(rows, target)
        size = np.maximum(size, np.abs(model.coef_[0, signal_x.shape[1]:]))
    ranked = sorted((-round(float(v), 6), t) for v, t in zip(size, terms) if v > 1e-6)
    return [t for _, t in ranked[:limit]]

"""The fit itself: regularized multinomial logistic regression in the classifier's form.

The classifier scores each type as the sum of the weights of the signals that fired
and has no per-type intercept, so the model is exactly that: logit(class) = x . w_class,
with a reference class at logit 0 ('nothing durable') or without one (the types alone).
gate.fit.weights uses it twice: durable vs nothing durable, and type among the durable.
The loss is the summed cross-entropy (each row's term times its weight, 1 unless
given) plus an L2 penalty (strength `l2`) on every free weight. A signal marked
`fit: {fixed: true}` adds its hand weights as a constant offset; `sign` bounds all of
a feature's weights (a counter-signal stays one).

scipy's L-BFGS-B (the solver scikit-learn's LogisticRegression uses) minimizes it,
because scikit-learn's estimator cannot bound weights; it is deterministic.
"""

from __future__ import annotations

import numpy as np
from scipy.optimize import minimize
from scipy.special import logsumexp


def fit_weights(x, y, n_types: int, *, l2: float, bounds=None, offset=None, reference: bool = True,
                prior=None, sample_weight=None, max_iter: int = 3000):
    """Weights (features x types) minimizing cross-entropy + l2/2 |W - prior|^2.

    x: rows x features (0/1); with `reference`, y is 0 for the reference class (logit 0:
    nothing durable) and 1..n_types for a type; without, y is 0..n_types-1 and the
    classes are the types alone. bounds: per feature (low, high), None for unbounded;
    offset: rows x types, fixed; prior: features x types that the penalty pulls the weights
    toward (zero when None); sample_weight: per row, how much its cross-entropy counts (1 when None)."""
    x = np.asarray(x, dtype=float)
    rows, features = x.shape
    first = 1 if reference else 0
    onehot = np.zeros((rows, n_types + first))
    onehot[np.arange(rows), np.asarray(y, dtype=int)] = 1.0
    offset = np.zeros((rows, n_types)) if offset is None else np.asarray(offset, dtype=float)
    zero = np.zeros((rows, first))
    center = np.zeros(features * n_types) if prior is None else np.asarray(prior, dtype=float).ravel()
    counts = np.ones(rows) if sample_weight is None else np.asarray(sample_weight, dtype=float)

    def loss(flat):
        w = flat.reshape(features, n_types)
        logits = np.hstack([zero, x @ w + offset])
        norm = logsumexp(logits, axis=1)
        pull = flat - center
        value = float(np.sum(counts * (norm - np.sum(onehot * logits, axis=1)))) + 0.5 * l2 * float(pull @ pull)
        prob = np.exp(logits - norm[:, None])
        grad = x.T @ (counts[:, None] * (prob - onehot))[:, first:] + l2 * pull.reshape(features, n_types)
        return value, grad.ravel()

    box = None
    if bounds is not None:
        box = [b for b in bounds for _ in range(n_types)]
    start = center.copy()
    result = minimize(loss, start, jac=True, method="L-BFGS-B", bounds=box,
                      options={"maxiter": max_iter, "ftol": 1e-12, "gtol": 1e-7})
    return result.x.reshape(features, n_types)

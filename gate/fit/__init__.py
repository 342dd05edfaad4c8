"""gate fit: weights learned from labeled windows, written back as a plain rules file.

Owns the mass-check (every signal and drop rule run over every fixture), the grouped
cross-validation, the constrained multinomial logistic fit of signal weights and of a
word lexicon, operating points (a level's threshold chosen on cross-validated
predictions), and the round-trip rewrite of the rules file. Rank 4: imports
gate.evaluation, gate.engine and gate.language, nothing above. The fitting library
(numpy/scipy/scikit-learn, the `fit` extra) is imported only by gate.fit.model and
gate.fit.terms, never by classify or eval.
"""

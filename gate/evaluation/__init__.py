"""The evaluator: a revision scored on labeled windows.

Owns fixtures and their cache, the contract's metrics, evaluate, the report, diff of two
revisions, and lint (a revision checked against its own examples). May import gate.engine and
gate.language.
"""

"""The engine: a validated revision compiled and run on windows.

Owns the compiler, the classifier and its decisions, one module per condition kind (conditions/),
window normalization and features, the keyword prefilter and the RE2 pattern set, the
compiled-revision cache a hook loads from, and JSON Lines streaming. May import gate.language only.
"""

"""gate bench: LoCoMo through the gate, into a store, searched, answered and judged.

Owns the downstream benchmark: the dataset reader (dataset, cases), seeded noise (noise), the
systems compared (gating: no gate, a revision's drop form or full form), stores (stores/: embedded
SQLite FTS5, mem0 OSS, mem0 platform), answerers and judges (answering, llm), what a run records
(records), scores (metrics), the report and its table (report), the pipeline (runner), replay
(replay) and the safety gates (planning). Rank 4: may import gate.evaluation, gate.engine,
gate.language and gate.platform, never another capability or gate.cli. Only `gate bench` and
`gate bench-replay` import it.
"""

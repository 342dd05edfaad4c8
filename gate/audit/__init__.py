"""`gate audit`: what is already in a memory store, and which rules revision let it in.

Owns reading a store (an export file, the emulator's SQLite store, or a live scope through the
platform client, read-only), near-duplicate clustering by shape and similarity, noise by the
revision's markers and drop rules, attribution by policy id, type and day, and the report in
text, JSON and a self-contained HTML page, with `--check` against the revision's ceilings.

Rank 4: may import gate.evaluation, gate.engine, gate.language and gate.platform; nothing
below the CLI imports it, and `gate classify` never does.
"""

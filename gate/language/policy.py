"""Policy ids: a revision's name plus a hash of what it does.

Documentation (descriptions, examples, metadata) and formatting do not change
the id; any change of behaviour (a pattern, a weight, a level, the instructions
text) does. Every decision, report and stored memory carries the id, so a
memory traces back to the exact rules that admitted it.

Pure functions of the data the loader hands them; finding a file by its id is
gate.language.history's job.
"""

from __future__ import annotations

import copy
import hashlib
import json

_DOC_KEYS = ("description", "examples", "metadata")


def canonical_content(data: dict) -> dict:
    """The behaviour-bearing part of a parsed rules file."""
    content = copy.deepcopy(data)
    for key in ("description", "metadata", "fitted"):  # fitted: how gate fit got the weights
        content.pop(key, None)
    if isinstance(content.get("flag"), dict):
        content["flag"].pop("operating_points", None)  # read by gate fit only
    for list_name in ("drop_rules", "signals", "noise_markers"):
        for item in content.get(list_name, ()):
            for key in _DOC_KEYS + ("fit",):  # fit: controls for gate fit only
                item.pop(key, None)
    for table in ("vocabularies", "fragments"):
        for entry in content.get(table, {}).values():
            entry.pop("description", None)
    return content


def content_hash(canonical: dict) -> str:
    text = json.dumps(canonical, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:12]


def policy_id(revision: str, canonical: dict) -> str:
    return f"{revision}+{content_hash(canonical)}"

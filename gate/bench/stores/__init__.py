"""Memory stores the benchmark writes to and searches: one interface, three backends.

A store is opened per system under comparison (one revision, or no gate) and holds one scope per
conversation. Every backend isolates a run by its run id and cleans it up at the start and the end.

    store.reset(scopes)                      # clean start for these conversations
    store.add(scope, Memory)                 # one item; raises StoreError on failure
    store.search(scope, query, k) -> [Hit]   # best first
    store.close(); store.cleanup()
"""

from __future__ import annotations

from dataclasses import dataclass

BACKENDS = ("sqlite", "mem0-oss", "mem0-platform")
LIVE_BACKENDS = frozenset({"mem0-oss", "mem0-platform"})  # they need --allow-live


class StoreError(Exception):
    """A failed store call, with a message already redacted (no key, no auth header)."""


@dataclass(frozen=True)
class Memory:
    source: str  # the LoCoMo dia_id, or the noise item's id
    kind: str  # "real" or the noise kind
    text: str
    policy: str | None  # the policy id of the revision that let it through; None without a gate
    type: str | None = None  # the type the revision flagged it as; None when it was only not dropped


@dataclass(frozen=True)
class Hit:
    text: str
    source: str | None  # None when the backend did not return our metadata
    kind: str | None
    score: float | None

    def to_json(self) -> dict:
        return {"text": self.text, "source": self.source, "kind": self.kind, "score": self.score}

    @classmethod
    def from_json(cls, data: dict) -> "Hit":
        return cls(text=str(data.get("text", "")), source=data.get("source"), kind=data.get("kind"),
                   score=data.get("score"))


def scope_id(run_id: str, system: str, sample_id: str) -> str:
    """A run-scoped user id, safe in a URL: gate-bench-<run>-<system>-<conversation>."""
    import re

    raw = f"gate-bench-{run_id}-{system}-{sample_id}"
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", raw)

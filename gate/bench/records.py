"""What one run recorded: per system, the ingest; per question and system, the retrieval and answer.

These are the facts a report is computed from; a full report keeps them all, so `gate bench-replay`
can answer and judge again without touching a store.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from gate.bench.stores import Hit

STAGES = ("reset", "ingest", "search", "answer", "judge")


@dataclass
class FalseDrop:
    sample_id: str
    dia_id: str
    rule: str
    evidence: bool  # a QA question points at this turn

    def to_json(self) -> dict:
        return {"sample_id": self.sample_id, "dia_id": self.dia_id, "rule": self.rule, "evidence": self.evidence}


@dataclass
class Ingest:
    """One system's ingest of the run's conversations."""

    real_turns: int = 0
    real_stored: int = 0
    evidence_turns: int = 0
    evidence_kept: int = 0
    noise_injected: dict = field(default_factory=dict)  # kind -> count
    noise_stored: dict = field(default_factory=dict)  # kind -> count
    noise_dropped_by: dict = field(default_factory=dict)  # rule -> count
    false_drops: list = field(default_factory=list)
    stored_items: int = 0
    gate_ms: list = field(default_factory=list)
    add_ms: list = field(default_factory=list)
    failed: dict = field(default_factory=dict)  # sample_id -> (stage, redacted error)


@dataclass
class CaseResult:
    """One question asked of one system."""

    hits: list = field(default_factory=list)  # [Hit], best first, up to top_k
    answer: str = ""
    correct: bool = False
    detail: str = ""
    failure: dict | None = None  # {"stage": ..., "error": ...}
    search_ms: float | None = None
    answer_ms: float | None = None
    judge_ms: float | None = None
    usage: dict = field(default_factory=dict)  # {"answerer": {...}, "judge": {...}}

    def to_json(self, *, with_hits: bool) -> dict:
        out = {"answer": self.answer, "correct": self.correct, "detail": self.detail, "failure": self.failure,
               "search_ms": self.search_ms, "answer_ms": self.answer_ms, "judge_ms": self.judge_ms,
               "usage": self.usage}
        if with_hits:
            out["hits"] = [h.to_json() for h in self.hits]
        return out

    @classmethod
    def from_json(cls, data: dict) -> "CaseResult":
        return cls(hits=[Hit.from_json(h) for h in data.get("hits", [])], answer=data.get("answer", ""),
                   correct=bool(data.get("correct")), detail=data.get("detail", ""), failure=data.get("failure"),
                   search_ms=data.get("search_ms"), answer_ms=data.get("answer_ms"),
                   judge_ms=data.get("judge_ms"), usage=data.get("usage") or {})

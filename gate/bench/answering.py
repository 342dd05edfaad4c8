"""The deterministic, free answerer and judge, and the token scores beside them.

- extractive answerer: the retrieved memory that shares the most content words with the question;
- containment judge: correct when every content token of the gold answer appears in the context
  the answerer was given (the top memories), so it judges retrieval, not phrasing;
- token F1 between the answer and the gold answer, reported beside the judge.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from gate.bench.text import content_tokens


@dataclass(frozen=True)
class Answer:
    text: str
    usage: dict = field(default_factory=dict)  # {"input": tokens, "output": tokens} when a model answered


@dataclass(frozen=True)
class Judgment:
    correct: bool
    detail: str = ""
    usage: dict = field(default_factory=dict)


class ExtractiveAnswerer:
    name = "extractive"
    paid = False

    def answer(self, question: str, hits) -> Answer:
        wanted = set(content_tokens(question))
        best, best_overlap = None, -1
        for hit in hits:  # ties keep the better-ranked memory
            overlap = len(wanted & set(content_tokens(hit.text)))
            if overlap > best_overlap:
                best, best_overlap = hit, overlap
        return Answer(text=best.text if best is not None else "")


class ContainmentJudge:
    name = "containment"
    paid = False

    def judge(self, question: str, gold: str, answer: Answer, hits) -> Judgment:
        share = containment(gold, " ".join(h.text for h in hits))
        return Judgment(correct=share is not None and share >= 1.0,
                        detail=f"gold tokens in context: {share:.2f}" if share is not None else "gold has no content tokens")


def containment(gold: str, context: str) -> float | None:
    """The share of the gold answer's distinct content tokens found in the context."""
    wanted = set(content_tokens(gold))
    if not wanted:
        return None
    have = set(content_tokens(context))
    return len(wanted & have) / len(wanted)


def token_f1(answer: str, gold: str) -> float:
    predicted, expected = content_tokens(answer), content_tokens(gold)
    if not predicted or not expected:
        return float(predicted == expected)
    common = {}
    for token in predicted:
        common[token] = common.get(token, 0) + 1
    matched = 0
    for token in expected:
        if common.get(token, 0) > 0:
            common[token] -= 1
            matched += 1
    if not matched:
        return 0.0
    precision, recall = matched / len(predicted), matched / len(expected)
    return 2 * precision * recall / (precision + recall)

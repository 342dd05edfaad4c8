"""An OpenAI-compatible answerer and judge (any base URL serving /chat/completions).

Paid: the command refuses them without --allow-paid-llm. The key comes from an environment variable
and lives in a Secret: it is sent only in the Authorization header and is scrubbed from every error.
Token usage is counted from the server's `usage`; a cost is computed only from explicit rates.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

import httpx

from gate.bench.answering import Answer, Judgment
from gate.platform.secret import Secret, redact, safe_url

ANSWER_PROMPT = ("You answer questions about a long conversation between two people, using only the memories "
                 "given. Each memory starts with the date of its session. Answer with a short phrase. If the "
                 "memories do not hold the answer, reply: not mentioned.")
JUDGE_PROMPT = ("You grade an answer to a question about a conversation against the gold answer. Reply CORRECT "
                "if the answer means the same as the gold answer (other wording, or a date in another format "
                "that names the same time, is fine), otherwise WRONG. Reply with one word.")


class LLMError(Exception):
    """A failed model call; the message is redacted."""


@dataclass(frozen=True)
class Rates:
    input_per_1m: float | None = None
    output_per_1m: float | None = None

    def cost(self, usage: dict) -> float | None:
        if self.input_per_1m is None or self.output_per_1m is None:
            return None  # never a guessed price
        return (usage.get("input", 0) * self.input_per_1m + usage.get("output", 0) * self.output_per_1m) / 1e6


class ChatClient:
    def __init__(self, base_url: str, model: str, key: Secret, *, timeout: float = 60.0, max_tokens: int = 64):
        self.base_url = base_url.rstrip("/")
        self.model = model
        self.max_tokens = max_tokens
        self._key = key
        self._http = httpx.Client(base_url=self.base_url, timeout=timeout,
                                  headers={"Authorization": f"Bearer {key.reveal()}"})

    def describe(self) -> dict:
        return {"url": safe_url(self.base_url), "model": self.model, "api_key": bool(self._key)}

    def complete(self, system: str, user: str) -> tuple:
        body = {"model": self.model, "temperature": 0, "max_tokens": self.max_tokens,
                "messages": [{"role": "system", "content": system}, {"role": "user", "content": user}]}
        try:
            response = self._http.post("/chat/completions", json=body)
        except httpx.HTTPError as exc:
            raise LLMError(redact(f"POST /chat/completions: {type(exc).__name__}: {exc}", self._key)) from None
        if response.status_code >= 400:
            preview = " ".join((response.text or "").split())[:160]
            raise LLMError(redact(f"POST /chat/completions: HTTP {response.status_code}: {preview}", self._key))
        try:
            data = response.json()
            text = data["choices"][0]["message"]["content"] or ""
        except (ValueError, KeyError, IndexError, TypeError):
            raise LLMError("POST /chat/completions: the answer has no choices[0].message.content") from None
        usage = data.get("usage") if isinstance(data.get("usage"), dict) else {}
        return str(text).strip(), {"input": int(usage.get("prompt_tokens") or 0),
                                   "output": int(usage.get("completion_tokens") or 0)}

    def close(self) -> None:
        self._http.close()


class OpenAIAnswerer:
    name = "openai"
    paid = True

    def __init__(self, client: ChatClient):
        self.client = client

    def answer(self, question: str, hits) -> Answer:
        memories = "\n".join(f"{i}. {h.text}" for i, h in enumerate(hits, 1)) or "(no memories)"
        text, usage = self.client.complete(ANSWER_PROMPT, f"Memories:\n{memories}\n\nQuestion: {question}\nAnswer:")
        return Answer(text=text, usage=usage)


class OpenAIJudge:
    name = "openai"
    paid = True

    def __init__(self, client: ChatClient):
        self.client = client

    def judge(self, question: str, gold: str, answer: Answer, hits) -> Judgment:
        prompt = json.dumps({"question": question, "gold_answer": gold, "answer": answer.text}, ensure_ascii=False)
        text, usage = self.client.complete(JUDGE_PROMPT, prompt)
        verdict = text.strip().upper()
        if verdict.startswith("CORRECT"):
            return Judgment(correct=True, detail="CORRECT", usage=usage)
        if verdict.startswith("WRONG"):
            return Judgment(correct=False, detail="WRONG", usage=usage)
        raise LLMError(f"the judge replied neither CORRECT nor WRONG: {text[:40]!r}")

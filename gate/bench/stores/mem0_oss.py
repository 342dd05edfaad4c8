"""A self-hosted mem0 OSS REST server: POST /memories, POST /search, DELETE /memories.

Not the hosted platform's /v3 API. Search sends the run-scoped user id in `filters` and the
retrieval count as both `limit` (the lightweight wrapper's name) and `top_k` (the SDK's), so neither
server variant silently falls back to its default. Turns are stored as sent (`infer: false`): the
benchmark measures what the gate lets through, not the server's extractor. Our source metadata
travels on each memory so evidence can be traced when the server returns it on search.
"""

from __future__ import annotations

import httpx

from gate.bench.stores import Hit, Memory, StoreError, scope_id
from gate.platform.secret import Secret, redact, safe_url

MAX_PREVIEW = 160  # characters of an error body kept, redacted


class Mem0OssStore:
    live = True

    def __init__(self, base_url: str, run_id: str, system: str, *, api_key: Secret | None = None,
                 timeout: float = 30.0):
        self.base_url = base_url.rstrip("/")
        self.run_id = run_id
        self.system = system
        self._key = api_key
        headers = {"Accept": "application/json"}
        if api_key:
            headers["X-API-Key"] = api_key.reveal()
        self._http = httpx.Client(base_url=self.base_url, timeout=timeout, headers=headers)

    def describe(self) -> dict:
        return {"backend": "mem0-oss", "url": safe_url(self.base_url), "api_key": bool(self._key)}

    def user(self, scope: str) -> str:
        return scope_id(self.run_id, self.system, scope)

    def reset(self, scopes) -> None:
        for scope in scopes:
            self._call("DELETE", "/memories", params={"user_id": self.user(scope)})

    def add(self, scope: str, memory: Memory) -> None:
        metadata = {"source": memory.source, "kind": memory.kind, "run_id": self.run_id}
        if memory.policy:
            metadata["policy"] = memory.policy
        if memory.type:
            metadata["type"] = memory.type
        self._call("POST", "/memories", json={"messages": [{"role": "user", "content": memory.text}],
                                              "user_id": self.user(scope), "metadata": metadata,
                                              "infer": False})

    def flush(self) -> None:
        pass

    def search(self, scope: str, query: str, k: int) -> list:
        user = self.user(scope)
        data = self._call("POST", "/search", json={"query": query, "user_id": user, "filters": {"user_id": user},
                                                   "limit": k, "top_k": k})
        return [_hit(item) for item in _results(data)[:k]]

    def close(self) -> None:
        self._http.close()

    def cleanup(self, scopes=()) -> None:
        try:
            self.reset(scopes)
        finally:
            self.close()

    def _call(self, method: str, path: str, **kwargs):
        try:
            response = self._http.request(method, path, **kwargs)
        except httpx.HTTPError as exc:
            raise StoreError(self._redact(f"{method} {path}: {type(exc).__name__}: {exc}")) from None
        if response.status_code >= 400:
            preview = " ".join((response.text or "").split())[:MAX_PREVIEW]
            raise StoreError(self._redact(f"{method} {path}: HTTP {response.status_code} "
                                          f"{response.reason_phrase}: {preview}".rstrip(": ")))
        if not response.content:
            return None
        try:
            return response.json()
        except ValueError:
            raise StoreError(f"{method} {path}: the answer is not JSON") from None

    def _redact(self, text: str) -> str:
        return redact(text, self._key)


def _results(data) -> list:
    if isinstance(data, list):
        return data
    if isinstance(data, dict):
        for key in ("results", "memories"):
            if isinstance(data.get(key), list):
                return data[key]
    return []


def _hit(item) -> Hit:
    if not isinstance(item, dict):
        return Hit(text=str(item), source=None, kind=None, score=None)
    metadata = item.get("metadata") if isinstance(item.get("metadata"), dict) else {}
    score = item.get("score")
    return Hit(text=str(item.get("memory", item.get("text", ""))), source=metadata.get("source"),
               kind=metadata.get("kind"), score=float(score) if isinstance(score, (int, float)) else None)

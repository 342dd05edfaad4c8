"""The hosted Mem0 platform, through gate's contract-enforcing client (gate/platform/client.py).

Each conversation is one run-scoped user (user scope, so reads exclude app-scoped records).
Writes use infer=False, a direct import that is searchable at once: the benchmark measures what the
gate lets through, not the platform's extractor, and needs no read-after-write wait.
"""

from __future__ import annotations

from gate.bench.stores import Hit, Memory, StoreError, scope_id
from gate.platform import contract
from gate.platform.client import PlatformClient
from gate.platform.secret import Secret, safe_url


class Mem0PlatformStore:
    live = True

    def __init__(self, base_url: str, run_id: str, system: str, *, api_key: Secret, timeout: float = 30.0):
        self.run_id = run_id
        self.system = system
        self._client = PlatformClient(base_url, api_key, timeout=timeout, max_retries=3)

    def describe(self) -> dict:
        return {"backend": "mem0-platform", "url": safe_url(self._client.base_url), "api_key": True}

    def user(self, scope: str) -> str:
        return scope_id(self.run_id, self.system, scope)

    def reset(self, scopes) -> None:
        for scope in scopes:
            _check(self._client.delete_all(user_id=self.user(scope)))

    def add(self, scope: str, memory: Memory) -> None:
        metadata = {"type": memory.type, "source": memory.source, "kind": memory.kind, "run_id": self.run_id,
                    "policy": memory.policy}
        _check(self._client.add([{"role": "user", "content": memory.text}], user_id=self.user(scope), app_id=None,
                                metadata=metadata, infer=False, allow_untyped=True))

    def flush(self) -> None:
        pass

    def search(self, scope: str, query: str, k: int) -> list:
        result = _check(self._client.search(query, contract.user_scope(self.user(scope)), top_k=k))
        hits = []
        for item in (result.data or [])[:k]:
            if not isinstance(item, dict):
                continue
            metadata = item.get("metadata") if isinstance(item.get("metadata"), dict) else {}
            score = item.get("score")
            hits.append(Hit(text=str(item.get("memory", "")), source=metadata.get("source"), kind=metadata.get("kind"),
                            score=float(score) if isinstance(score, (int, float)) else None))
        return hits

    def close(self) -> None:
        self._client.close()

    def cleanup(self, scopes=()) -> None:
        try:
            self.reset(scopes)
        finally:
            self.close()


def _check(result):
    if not result.ok:
        raise StoreError(str(result.error))  # PlatformError's text is already redacted
    return result

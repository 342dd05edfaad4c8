"""An httpx client for the Mem0 platform that enforces the verified contract.

Errors come back as values (`Result.error`), never as exceptions: a status, a kind and a
short redacted body. 429 (honouring Retry-After) and 5xx are retried with backoff; a 4xx is
a contract problem and is not retried. Every call has a timeout. The key lives in a
`Secret` and is revealed only into the Authorization header.
"""

from __future__ import annotations

import email.utils
import json
import logging
import random
import time
from typing import Any, Callable

import httpx

from gate.platform import contract
from gate.platform.contract import Scope
from gate.platform.errors import (CONTRACT, DECODE, HTTP, NETWORK, TIMEOUT, ContractViolation,
                                  PlatformError, Result)
from gate.platform.secret import Secret, redact, safe_url  # noqa: F401 (re-exported)

log = logging.getLogger("gate.platform")

DEFAULT_BASE_URL = "https://api.mem0.ai"
MAX_BODY = 200  # characters of an error body kept in an error value
MAX_RETRY_AFTER = 60.0


def parse_retry_after(value: str | None) -> float | None:
    """Seconds to wait from a Retry-After header (delta-seconds or an HTTP date)."""
    if not value:
        return None
    value = value.strip()
    try:
        seconds = float(value)
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError):
            return None
        seconds = when.timestamp() - time.time()
    return max(0.0, min(seconds, MAX_RETRY_AFTER))


class PlatformClient:
    """One platform endpoint, one key, optionally one project override.

    `scope` is the override that every body-carrying call sends as both ids (never one of them,
    never as query params). Without it every call resolves to the key's own project.
    """

    def __init__(self, base_url: str, api_key: Secret, *, scope: Scope | None = None,
                 timeout: float = 30.0, max_retries: int = 5, backoff: float = 0.5,
                 max_backoff: float = 10.0, on_retry: Callable[[str], None] | None = None,
                 sleep: Callable[[float], None] = time.sleep):
        if not isinstance(api_key, Secret):
            raise TypeError("api_key must be a gate.platform.secret.Secret")
        self.base_url = safe_url(base_url).rstrip("/")
        self.scope = scope
        self.timeout = timeout
        self.max_retries = max_retries
        self.backoff = backoff
        self.max_backoff = max_backoff
        self.on_retry = on_retry
        self._sleep = sleep
        self._key = api_key
        self._http = httpx.Client(base_url=base_url.rstrip("/"), timeout=timeout,
                                  headers={"Authorization": f"Token {api_key.reveal()}",
                                           "Accept": "application/json"})
        self.stats = {"requests": 0, "retries": 0, "rate_limited": 0, "server_errors": 0}

    def __repr__(self) -> str:
        return f"PlatformClient(base_url={self.base_url!r}, scope={self.scope!r})"

    def close(self) -> None:
        self._http.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    # -- endpoints ---------------------------------------------------------------------------

    def ping(self) -> Result:
        """Who the key is: {user_email, org_id, project_id}."""
        return self._call("GET", "/v1/ping/", idempotent=True)

    def add(self, messages, *, user_id: str | None, app_id: str | None, metadata: dict,
            infer: bool = True, allow_untyped: bool = False) -> Result:
        """POST /v3/memories/add/. With infer=True the answer is {event_id, status: PENDING}."""
        try:
            body = contract.add_body(messages, user_id=user_id, app_id=app_id, metadata=metadata,
                                     infer=infer, scope=self.scope, allow_untyped=allow_untyped)
        except ContractViolation as e:
            return self._refuse("POST", "/v3/memories/add/", e)
        res = self._call("POST", "/v3/memories/add/", json=body, idempotent=False)
        if res.ok and isinstance(res.data, list):  # some deployments answer a one-item list
            res = Result(ok=True, status=res.status, data=res.data[0] if res.data else {},
                         attempts=res.attempts)
        return res

    def get_all_page(self, filters, *, page: int = 1, page_size: int = 100) -> Result:
        """POST /v3/memories/ is get_all: page/page_size in the query, filters in the body."""
        try:
            body = contract.read_body(filters, scope=self.scope)
        except ContractViolation as e:
            return self._refuse("POST", "/v3/memories/", e)
        return self._call("POST", "/v3/memories/", json=body,
                          params={"page": page, "page_size": page_size}, idempotent=True)

    def get_all(self, filters, *, page_size: int = 100, max_pages: int = 100) -> Result:
        """Every page of get_all; data is the list of memories."""
        memories: list = []
        attempts = 0
        for page in range(1, max_pages + 1):
            res = self.get_all_page(filters, page=page, page_size=page_size)
            attempts += res.attempts
            if not res.ok:
                return Result.failure(res.error, attempts)
            items, more = _page_items(res.data, page_size)
            memories.extend(items)
            if not more:
                break
        return Result(ok=True, status=200, data=memories, attempts=attempts)

    def search(self, query: str, filters, *, top_k: int = 10) -> Result:
        try:
            body = contract.read_body(filters, scope=self.scope, query=query, top_k=top_k)
        except ContractViolation as e:
            return self._refuse("POST", "/v3/memories/search/", e)
        res = self._call("POST", "/v3/memories/search/", json=body, idempotent=True)
        if res.ok:
            items, _ = _page_items(res.data, None)
            res = Result(ok=True, status=res.status, data=items, attempts=res.attempts)
        return res

    def delete_all(self, *, user_id: str | None = None, app_id: str | None = None) -> Result:
        """DELETE /v1/memories/ with query params only. Deletes are soft: confirm through reads."""
        try:
            params = contract.delete_params(user_id=user_id, app_id=app_id, scope=self.scope)
        except ContractViolation as e:
            return self._refuse("DELETE", "/v1/memories/", e)
        return self._call("DELETE", "/v1/memories/", params=params, idempotent=True)

    def event(self, event_id: str) -> Result:
        """GET /v1/event/{id}/: PENDING, RUNNING, SUCCEEDED or FAILED, with results when done."""
        if not event_id or "/" in event_id:
            return self._refuse("GET", "/v1/event/", ContractViolation("bad event id"))
        return self._call("GET", f"/v1/event/{event_id}/", idempotent=True)

    def get_project(self, org_id: str, project_id: str, fields=contract.PROJECT_FIELDS) -> Result:
        try:
            params = contract.project_fields_params(fields)
            path = _project_path(org_id, project_id)
        except ContractViolation as e:
            return self._refuse("GET", "/api/v1/orgs/organizations/.../projects/.../", e)
        return self._call("GET", path, params=params, idempotent=True)

    def update_project(self, org_id: str, project_id: str, *, instructions: str | None = None,
                       categories: dict | None = None) -> Result:
        body: dict = {}
        if instructions is not None:
            body["custom_instructions"] = instructions
        if categories is not None:
            body["custom_categories"] = contract.categories_payload(categories)
        try:
            if not body:
                raise ContractViolation("nothing to update")
            path = _project_path(org_id, project_id)
        except ContractViolation as e:
            return self._refuse("PATCH", "/api/v1/orgs/organizations/.../projects/.../", e)
        return self._call("PATCH", path, json=body, idempotent=True)

    # -- transport ---------------------------------------------------------------------------

    def _refuse(self, method: str, path: str, exc: Exception) -> Result:
        return Result.failure(PlatformError(kind=CONTRACT, message=str(exc), method=method, path=path),
                              attempts=0)

    def _call(self, method: str, path: str, *, json: Any = None, params=None,
              idempotent: bool) -> Result:
        attempt = 0
        while True:
            attempt += 1
            self.stats["requests"] += 1
            wait: float | None = None
            try:
                resp = self._http.request(method, path, json=json, params=params)
            except httpx.TimeoutException:
                err = PlatformError(TIMEOUT, f"no answer within {self.timeout:g}s", None, method, path)
                retry = idempotent
            except httpx.TransportError as e:
                err = PlatformError(NETWORK, self._short(type(e).__name__ + ": " + str(e)), None,
                                    method, path)
                # a refused connection never reached the server, so even a write is safe to resend
                retry = idempotent or isinstance(e, httpx.ConnectError)
            else:
                status = resp.status_code
                if 200 <= status < 300:
                    return self._decode(resp, method, path, attempt)
                err = PlatformError(HTTP, self._body_summary(resp), status, method, path)
                retry = status == 429 or status >= 500
                if status == 429:
                    self.stats["rate_limited"] += 1
                elif status >= 500:
                    self.stats["server_errors"] += 1
                wait = parse_retry_after(resp.headers.get("Retry-After")) if retry else None
            if not retry or attempt > self.max_retries:
                if attempt > 1:
                    log.debug("giving up on %s %s after %d attempts: %s", method, path, attempt, err)
                return Result.failure(err, attempt)
            if wait is None:
                wait = min(self.max_backoff, self.backoff * (2 ** (attempt - 1)))
                wait *= 0.75 + random.random() * 0.5  # jitter, so parallel clients spread out
            self.stats["retries"] += 1
            note = f"retrying {method} {path} in {wait:.2f}s after {err.status or err.kind}"
            log.debug(note)
            if self.on_retry:
                self.on_retry(note)
            self._sleep(wait)

    def _decode(self, resp: httpx.Response, method: str, path: str, attempt: int) -> Result:
        if not resp.content:
            return Result(ok=True, status=resp.status_code, data=None, attempts=attempt)
        try:
            data = resp.json()
        except (json.JSONDecodeError, UnicodeDecodeError, ValueError):
            err = PlatformError(DECODE, "answer is not JSON: " + self._short(resp.text), resp.status_code,
                                method, path)
            return Result.failure(err, attempt)
        return Result(ok=True, status=resp.status_code, data=data, attempts=attempt)

    def _body_summary(self, resp: httpx.Response) -> str:
        text = resp.text or ""
        try:
            data = resp.json()
        except ValueError:
            data = None
        if isinstance(data, dict):
            for k in ("detail", "error", "message"):
                if isinstance(data.get(k), str):
                    text = data[k]
                    break
        return self._short(text or resp.reason_phrase or "")

    def _short(self, text: str) -> str:
        text = " ".join(redact(str(text), self._key).split())
        return text if len(text) <= MAX_BODY else text[: MAX_BODY - 3] + "..."


def _project_path(org_id: str, project_id: str) -> str:
    for v in (org_id, project_id):
        if not v or "/" in v or "?" in v:
            raise ContractViolation("project configuration needs plain org and project ids")
    return f"/api/v1/orgs/organizations/{org_id}/projects/{project_id}/"


def _page_items(data: Any, page_size: int | None) -> tuple[list, bool]:
    """(items, more pages?) from either a bare list or a {results, next} page."""
    if isinstance(data, list):
        return data, bool(page_size) and len(data) >= page_size
    if isinstance(data, dict):
        items = data.get("results") or data.get("memories") or []
        more = bool(data.get("next")) if "next" in data else (bool(page_size) and len(items) >= page_size)
        return list(items), more
    return [], False

"""A local stand-in for the Mem0 platform, on loopback only.

It serves the endpoints gate uses with the quirks the contract verified:
- `POST /v3/memories/add/` with infer=True answers `{event_id, status: PENDING}`; the memories
  land after `delay_ms` and `GET /v1/event/{id}/` reports PENDING -> RUNNING -> SUCCEEDED;
  infer=False is immediate and keeps assistant turns too;
- identical facts are deduplicated; a contradicting fact supersedes the old one and
  `latest_only` hides the old one; deletes are soft;
- a `NOT` object is a 400; scope ids in query params are ignored (both must be in the body);
  `DELETE /v1/memories/` with a body is a 400; project `fields` must be repeated params;
- `POST /v3/memories/` is get_all with `page`/`page_size` in the query.

Switches for tests: extraction delay, late landing for some users, no event reporting, a leaking
heartbeat memory, 429s and 5xx at a rate, slow responses. State is SQLite, in memory by default.

In-process: `with Emulator(EmulatorConfig(delay_ms=50)) as emu: ... emu.url ...`
"""

from __future__ import annotations

import json
import random
import re
import socket
import sys
import threading
import time
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from ipaddress import ip_address
from urllib.parse import parse_qs, urlsplit

from gate.platform.emulator_store import ENTITY_FIELDS, FilterError, Store

KNOWN_PROJECT_FIELDS = ("custom_instructions", "custom_categories", "name", "decay")
_PROJECT_PATH = re.compile(r"^/api/v1/orgs/organizations/([^/]+)/projects/([^/]+)/$")
_EVENT_PATH = re.compile(r"^/v1/event/([^/]+)/$")


@dataclass
class EmulatorConfig:
    org_id: str = "org_emu"
    project_id: str = "proj_default"  # the project the key resolves to
    user_email: str = "dev@example.invalid"
    api_key: str | None = None  # None: any non-empty token is accepted
    delay_ms: int = 200  # infer=True extraction time
    late_ms: int = 0  # users matching late_match land after this instead
    late_match: str = ""  # substring of user_id; "" with late_ms > 0 means every add is late
    events: bool = True  # False: the event endpoint is not reported (404), callers must poll reads
    leak: bool = False  # store heartbeat sentences, from any turn
    fail_match: str = ""  # users matching this get a FAILED event and nothing stored
    rate_429: float = 0.0
    rate_5xx: float = 0.0
    retry_after: str | None = "1"  # Retry-After sent with 429 and 503 (None: not sent)
    slow_ms: int = 0  # added to every response
    honour_delete_scope: bool = True  # DELETE has no body, so its query ids are the only override
    seed: int = 0


@dataclass
class SeenRequest:
    method: str
    path: str
    query: dict
    body: object
    authorized: bool  # the header is never recorded, only whether it was accepted


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def handle_error(self, request, client_address):
        # a client that hung up mid-response (a timeout, a killed run) is not the server's error:
        # no traceback on the console of whoever runs the emulator
        if isinstance(sys.exc_info()[1], (BrokenPipeError, ConnectionResetError)):
            return
        super().handle_error(request, client_address)


class Emulator:
    def __init__(self, config: EmulatorConfig | None = None, *, host: str = "127.0.0.1", port: int = 0,
                 db: str = ":memory:"):
        if not _is_loopback(host):
            raise ValueError(f"the emulator only listens on loopback, not {host!r}")
        self.config = config or EmulatorConfig()
        self.store = Store(db)
        self.requests: list[SeenRequest] = []
        self.injected = {"429": 0, "5xx": 0}
        self._conns: set = set()
        self._lock = threading.Lock()
        self._rng = random.Random(self.config.seed)
        self._thread: threading.Thread | None = None
        handler = type("Handler", (_Handler,), {"emulator": self})
        self._server = _Server((host, port), handler)

    @property
    def port(self) -> int:
        return self._server.server_address[1]

    @property
    def url(self) -> str:
        host = self._server.server_address[0]
        host = f"[{host}]" if ":" in host else host
        return f"http://{host}:{self.port}"

    def start(self) -> "Emulator":
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05},
                                        name="gate-emulator", daemon=True)
        self._thread.start()
        return self

    def serve_forever(self) -> None:
        self._server.serve_forever(poll_interval=0.2)

    def stop(self) -> None:
        """Stop listening and drop open keep-alive connections too: to a client, the network is gone."""
        self._server.shutdown()
        self._server.server_close()
        with self._lock:
            conns, self._conns = list(self._conns), set()
        for conn in conns:
            try:
                conn.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        if self._thread:
            self._thread.join(timeout=5)
            self._thread = None

    def close(self) -> None:
        self.stop()
        self.store.close()

    def __enter__(self) -> "Emulator":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.close()

    # -- helpers for tests -------------------------------------------------------------------

    def writes_seen(self) -> list[SeenRequest]:
        with self._lock:
            return [r for r in self.requests if r.method in ("POST", "PATCH", "PUT", "DELETE")
                    and r.path not in ("/v3/memories/", "/v3/memories/search/")]

    def memories(self, project_id: str | None = None, org_id: str | None = None,
                 filters: dict | None = None) -> list[dict]:
        """What a latest_only read would return, straight from the store (no HTTP)."""
        return self.store.query(org_id or self.config.org_id, project_id or self.config.project_id,
                                filters or {"user_id": "*"}, latest_only=True)

    def _record(self, req: SeenRequest) -> None:
        with self._lock:
            self.requests.append(req)

    def _roll(self) -> str | None:
        with self._lock:
            x = self._rng.random()
            if x < self.config.rate_429:
                self.injected["429"] += 1
                return "429"
            if x < self.config.rate_429 + self.config.rate_5xx:
                self.injected["5xx"] += 1
                return "5xx"
        return None


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


class _Handler(BaseHTTPRequestHandler):
    emulator: Emulator
    protocol_version = "HTTP/1.1"
    server_version = "gate-emulator/1"
    # headers and body in one segment: without these, Nagle + delayed ACK add ~40 ms per request
    disable_nagle_algorithm = True
    wbufsize = -1

    def setup(self):
        super().setup()
        with self.emulator._lock:
            self.emulator._conns.add(self.connection)

    def finish(self):
        with self.emulator._lock:
            self.emulator._conns.discard(self.connection)
        super().finish()

    def log_message(self, format, *args):  # quiet: tests and demos read their own output
        pass

    def do_GET(self):
        self._handle("GET")

    def do_POST(self):
        self._handle("POST")

    def do_DELETE(self):
        self._handle("DELETE")

    def do_PATCH(self):
        self._handle("PATCH")

    def do_PUT(self):
        self._handle("PUT")

    # -- plumbing ----------------------------------------------------------------------------

    def _handle(self, method: str) -> None:
        emu = self.emulator
        cfg = emu.config
        split = urlsplit(self.path)
        path = split.path if split.path.endswith("/") else split.path + "/"
        query = parse_qs(split.query, keep_blank_values=True)
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        body: object = None
        bad_json = False
        if raw:
            try:
                body = json.loads(raw)
            except (ValueError, UnicodeDecodeError):
                bad_json = True
        auth = self.headers.get("Authorization") or ""
        token = auth[len("Token "):].strip() if auth.startswith("Token ") else ""
        authorized = bool(token) and (cfg.api_key is None or token == cfg.api_key)
        emu._record(SeenRequest(method, path, {k: list(v) for k, v in query.items()}, body, authorized))

        if cfg.slow_ms:
            time.sleep(cfg.slow_ms / 1000)
        if not authorized:
            return self._send(401, {"detail": "Invalid API key"})
        fault = emu._roll()
        if fault == "429":
            return self._send(429, {"detail": "Request was throttled."}, retry_after=True)
        if fault == "5xx":
            return self._send(503, {"detail": "Service temporarily unavailable"}, retry_after=True)
        if bad_json:
            return self._send(400, {"detail": "Malformed JSON body"})
        try:
            self._route(method, path, query, body)
        except FilterError as e:
            self._send(400, {"detail": str(e)})
        except (BrokenPipeError, ConnectionResetError):
            pass
        except Exception as e:  # the emulator must answer, not hang the client
            self._send(500, {"detail": f"emulator error: {type(e).__name__}"})

    def _send(self, status: int, payload, *, retry_after: bool = False) -> None:
        data = json.dumps(payload).encode()
        try:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            if retry_after and self.emulator.config.retry_after is not None:
                self.send_header("Retry-After", self.emulator.config.retry_after)
            self.end_headers()
            self.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):
            pass

    def _scope_from_body(self, body) -> tuple[str, str] | None:
        """Both ids in the body override the key's project; half an override is none."""
        cfg = self.emulator.config
        if isinstance(body, dict) and body.get("project_id") and body.get("org_id"):
            return body["org_id"], body["project_id"]
        return cfg.org_id, cfg.project_id

    def _forbidden_org(self, org_id: str) -> bool:
        return org_id != self.emulator.config.org_id

    # -- routes ------------------------------------------------------------------------------

    def _route(self, method: str, path: str, query: dict, body) -> None:
        cfg = self.emulator.config
        store = self.emulator.store
        if path == "/v1/ping/" and method == "GET":
            return self._send(200, {"status": "ok", "message": "API key is valid",
                                    "org_id": cfg.org_id, "project_id": cfg.project_id,
                                    "user_email": cfg.user_email})
        if path == "/v3/memories/add/" and method == "POST":
            return self._add(body)
        if path == "/v3/memories/" and method == "POST":
            return self._get_all(query, body)
        if path == "/v3/memories/search/" and method == "POST":
            return self._search(body)
        if path == "/v1/memories/" and method == "DELETE":
            return self._delete(query, body)
        m = _EVENT_PATH.match(path)
        if m and method == "GET":
            if not cfg.events:
                return self._send(404, {"detail": "Not found."})
            ev = store.event(m.group(1), cfg.org_id)
            return self._send(200, ev) if ev else self._send(404, {"detail": "Event not found"})
        m = _PROJECT_PATH.match(path)
        if m:
            return self._project(method, m.group(1), m.group(2), query, body)
        return self._send(404, {"detail": "Not found."})

    def _add(self, body) -> None:
        cfg = self.emulator.config
        if not isinstance(body, dict):
            return self._send(400, {"detail": "request body required"})
        messages = body.get("messages")
        if not isinstance(messages, list) or not messages or not all(
                isinstance(m, dict) and isinstance(m.get("content"), str) and isinstance(m.get("role"), str)
                for m in messages):
            return self._send(400, {"detail": "messages must be a list of {role, content}"})
        metadata = body.get("metadata") if body.get("metadata") is not None else {}
        if not isinstance(metadata, dict):
            return self._send(400, {"detail": "metadata must be an object"})
        entities = {k: body[k] for k in ENTITY_FIELDS if body.get(k)}
        if not entities:
            return self._send(400, {"detail": "at least one of user_id, agent_id, app_id, run_id is required"})
        org_id, project_id = self._scope_from_body(body)
        if self._forbidden_org(org_id):
            return self._send(403, {"detail": "You do not have access to this organization"})
        user = entities.get("user_id") or ""
        late = cfg.late_ms > 0 and (cfg.late_match in user)
        delay = (cfg.late_ms if late else cfg.delay_ms) / 1000
        fail = bool(cfg.fail_match) and cfg.fail_match in user
        result = self.emulator.store.add(org_id, project_id, messages=messages, entities=entities,
                                         metadata=metadata, infer=body.get("infer", True) is not False,
                                         delay=delay, leak=cfg.leak, fail=fail)
        self._send(200, result)

    def _get_all(self, query: dict, body) -> None:
        if not isinstance(body, dict) or "filters" not in body:
            return self._send(400, {"detail": "filters are required"})
        try:
            page = int((query.get("page") or ["1"])[0])
            size = int((query.get("page_size") or ["100"])[0])
        except ValueError:
            return self._send(400, {"detail": "page and page_size must be integers"})
        if page < 1 or not 1 <= size <= 1000:
            return self._send(400, {"detail": "invalid page or page_size"})
        org_id, project_id = self._scope_from_body(body)
        if self._forbidden_org(org_id):
            return self._send(403, {"detail": "You do not have access to this organization"})
        items = self.emulator.store.query(org_id, project_id, body["filters"],
                                          latest_only=body.get("latest_only") is True)
        start = (page - 1) * size
        chunk = items[start:start + size]
        more = start + size < len(items)
        base = "/v3/memories/"
        self._send(200, {"count": len(items),
                         "next": f"{base}?page={page + 1}&page_size={size}" if more else None,
                         "previous": f"{base}?page={page - 1}&page_size={size}" if page > 1 else None,
                         "results": chunk})

    def _search(self, body) -> None:
        if not isinstance(body, dict) or not isinstance(body.get("query"), str):
            return self._send(400, {"detail": "query is required"})
        if "filters" not in body:
            return self._send(400, {"detail": "filters are required"})
        org_id, project_id = self._scope_from_body(body)
        if self._forbidden_org(org_id):
            return self._send(403, {"detail": "You do not have access to this organization"})
        items = self.emulator.store.query(org_id, project_id, body["filters"],
                                          latest_only=body.get("latest_only") is True)
        words = set(re.findall(r"\w+", body["query"].lower()))
        for it in items:
            mem = set(re.findall(r"\w+", it["memory"].lower()))
            it["score"] = round(len(words & mem) / len(words), 4) if words else 0.0
        items.sort(key=lambda it: -it["score"])
        top_k = body.get("top_k") if isinstance(body.get("top_k"), int) else 10
        self._send(200, {"results": items[:top_k]})

    def _delete(self, query: dict, body) -> None:
        cfg = self.emulator.config
        if body is not None:  # a body is ignored by the platform's router: the filters are not seen
            return self._send(400, {"detail": "At least one filter is required to delete all memories."})
        entities = {k: query[k][0] for k in ENTITY_FIELDS if query.get(k) and query[k][0]}
        if not entities:
            return self._send(400, {"detail": "At least one filter is required to delete all memories."})
        org_id, project_id = cfg.org_id, cfg.project_id
        if cfg.honour_delete_scope and query.get("org_id") and query.get("project_id"):
            org_id, project_id = query["org_id"][0], query["project_id"][0]
        if self._forbidden_org(org_id):
            return self._send(403, {"detail": "You do not have access to this organization"})
        n = self.emulator.store.delete(org_id, project_id, entities)
        self._send(200, {"message": "Memories deleted successfully!", "deleted": n})

    def _project(self, method: str, org_id: str, project_id: str, query: dict, body) -> None:
        if self._forbidden_org(org_id):
            return self._send(403, {"detail": "You do not have access to this organization"})
        store = self.emulator.store
        if method == "GET":
            fields = query.get("fields") or []
            unknown = [f for f in fields if f not in KNOWN_PROJECT_FIELDS]
            if unknown:  # 'a,b' arrives as one unknown name: fields must be repeated params
                return self._send(400, {"detail": f"Invalid fields: {', '.join(unknown)}"})
            config = store.project(org_id, project_id)
            config.update({"name": project_id, "decay": False})
            wanted = fields or list(KNOWN_PROJECT_FIELDS)
            return self._send(200, {f: config.get(f) for f in wanted})
        if method in ("PATCH", "PUT"):
            if not isinstance(body, dict) or not body:
                return self._send(400, {"detail": "nothing to update"})
            changes = {}
            if "custom_instructions" in body:
                if not isinstance(body["custom_instructions"], str):
                    return self._send(400, {"detail": "custom_instructions must be a string"})
                changes["custom_instructions"] = body["custom_instructions"]
            if "custom_categories" in body:
                cats = body["custom_categories"]
                if not isinstance(cats, list) or not all(
                        isinstance(c, dict) and len(c) == 1 and all(isinstance(v, str) for v in c.values())
                        for c in cats):
                    return self._send(400, {"detail": "custom_categories must be a list of {name: description}"})
                changes["custom_categories"] = cats
            if not changes:
                return self._send(400, {"detail": "no updatable field given"})
            store.update_project(org_id, project_id, changes)
            return self._send(200, {"message": "Updated custom instructions"})
        self._send(405, {"detail": f"Method \"{method}\" not allowed."})

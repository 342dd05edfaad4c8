"""The platform client enforces the contract and returns errors as values (real HTTP, loopback)."""

from __future__ import annotations

import json
import logging
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from gate.platform import contract
from gate.platform.client import PlatformClient, parse_retry_after, safe_url
from gate.platform.contract import Scope
from gate.platform.errors import ContractViolation
from gate.platform.secret import Secret, key_from_env, redact
from platform_helpers import DEFAULT_PROJECT, KEY, ORG, SCRATCH, assert_no_key, emulator


def client(emu, scope=Scope(SCRATCH, ORG), **kw):
    sleeps = []
    kw.setdefault("backoff", 0.01)
    c = PlatformClient(emu.url, Secret(KEY), scope=scope, timeout=kw.pop("timeout", 5), sleep=sleeps.append, **kw)
    return c, sleeps


def last(emu, path):
    return [r for r in emu.requests if r.path == path][-1]


def test_the_key_never_shows_in_repr_str_or_format():
    s = Secret(KEY)
    assert KEY not in repr(s) and KEY not in str(s) and KEY not in f"{s}" and KEY not in "%s" % s
    with emulator() as emu:
        c, _ = client(emu)
        assert_no_key(repr(c), repr(c.__dict__), repr(c._http.headers))
    assert key_from_env("X", {"X": "  "}) is None and key_from_env("X", {"X": KEY}).reveal() == KEY
    assert redact(f"Authorization: Token {KEY} rest", None) == "Authorization: Token <redacted> rest"
    assert redact(f"bad key {KEY}", s) == "bad key <redacted>"


def test_ping_and_authorization_header():
    with emulator() as emu:
        c, _ = client(emu)
        res = c.ping()
        assert res.ok and res.data["project_id"] == DEFAULT_PROJECT
        assert last(emu, "/v1/ping/").authorized


def test_scope_override_travels_in_the_body_as_both_ids_never_in_the_query():
    with pytest.raises(ContractViolation):
        Scope.of(SCRATCH, None)
    assert Scope.of(None, None) is None
    with emulator(delay_ms=0) as emu:
        c, _ = client(emu)
        assert c.add([{"role": "user", "content": "We pin Node to the LTS line."}], user_id="u", app_id="a",
                     metadata={"type": "convention"}).ok
        seen = last(emu, "/v3/memories/add/")
        assert seen.body["project_id"] == SCRATCH and seen.body["org_id"] == ORG
        assert "project_id" not in seen.query and "org_id" not in seen.query
        assert "run_id" not in seen.body and "agent_id" not in seen.body
        c.get_all(contract.project_scope("u", "a"))
        seen = last(emu, "/v3/memories/")
        assert seen.body["project_id"] == SCRATCH and seen.query == {"page": ["1"], "page_size": ["100"]}
        c2, _ = client(emu, scope=None)
        c2.ping()
        c2.get_all({"user_id": "u"})
        assert "project_id" not in last(emu, "/v3/memories/").body


def test_every_read_sends_latest_only_and_not_as_a_list():
    with emulator(delay_ms=0) as emu:
        c, _ = client(emu)
        res = c.get_all({"AND": [{"user_id": "u"}, {"NOT": {"app_id": "*"}}]})
        assert res.ok  # the client turned the documented object shape into the list that works
        body = last(emu, "/v3/memories/").body
        assert body["latest_only"] is True
        assert body["filters"] == {"AND": [{"user_id": "u"}, {"NOT": [{"app_id": "*"}]}]}
        assert c.search("deploy", contract.user_scope("u")).ok
        body = last(emu, "/v3/memories/search/").body
        assert body["latest_only"] is True and body["filters"]["AND"][1] == {"NOT": [{"app_id": "*"}]}


def test_latest_only_hides_superseded_facts_through_the_client():
    with emulator(delay_ms=0) as emu:
        c, _ = client(emu)
        for text in ("We deploy on Fly.io for every service.", "We moved off Fly.io to Railway last month."):
            c.add([{"role": "user", "content": text}], user_id="u", app_id="a", metadata={"type": "decision"})
        res = c.get_all(contract.project_scope("u", "a"))
        assert [m["memory"] for m in res.data] == ["We moved off Fly.io to Railway last month."]
        hits = c.search("Railway", contract.type_filter("decision"))
        assert [m["memory"] for m in hits.data] == ["We moved off Fly.io to Railway last month."]


def test_writes_must_stamp_metadata_type_and_refusals_send_nothing():
    with emulator() as emu:
        c, _ = client(emu)
        msgs = [{"role": "user", "content": "We pin Node to the LTS line."}]
        for meta in ({}, {"type": "whatever"}, {"type": None}, None):
            res = c.add(msgs, user_id="u", app_id="a", metadata=meta)
            assert not res.ok and res.error.kind == "contract" and res.attempts == 0
        assert not c.add([], user_id="u", app_id="a", metadata={"type": "decision"}).ok
        assert not c.add(msgs, user_id=None, app_id=None, metadata={"type": "decision"}).ok
        assert not c.get_all({}).ok and not c.delete_all().ok
        assert not c.get_project(ORG, SCRATCH, fields=["custom_instructions,custom_categories"]).ok
        assert emu.requests == []
        # the eval harness may send an untyped exclude window, but only by saying so
        assert c.add(msgs, user_id="u", app_id="a", metadata={"type": None}, allow_untyped=True).ok


def test_delete_uses_query_params_and_no_body():
    with emulator(delay_ms=0) as emu:
        c, _ = client(emu)
        c.add([{"role": "user", "content": "The cache lives in Redis cluster B."}], user_id="u", app_id="a",
              metadata={"type": "insight"})
        res = c.delete_all(user_id="u", app_id="a")
        assert res.ok, res.error
        seen = last(emu, "/v1/memories/")
        assert seen.method == "DELETE" and seen.body is None
        assert seen.query["user_id"] == ["u"] and seen.query["project_id"] == [SCRATCH]
        assert c.get_all(contract.project_scope("u", "a")).data == []


def test_project_configuration_round_trip_with_repeated_fields():
    with emulator() as emu:
        c, _ = client(emu)
        assert c.update_project(ORG, SCRATCH, instructions="Only durable facts.",
                                categories={"decision": "A choice.", "runbook": "A procedure."}).ok
        res = c.get_project(ORG, SCRATCH)
        assert res.ok and res.data["custom_instructions"] == "Only durable facts."
        assert contract.categories_from_payload(res.data["custom_categories"]) == {
            "decision": "A choice.", "runbook": "A procedure."}
        assert last(emu, f"/api/v1/orgs/organizations/{ORG}/projects/{SCRATCH}/").query == {
            "fields": ["custom_instructions", "custom_categories"]}


def test_429_is_retried_honouring_retry_after_then_given_up_as_a_value():
    with emulator(rate_429=1.0) as emu:
        c, sleeps = client(emu, max_retries=3)
        res = c.ping()
        assert not res.ok and res.status == 429 and res.attempts == 4
        assert sleeps == [0.01, 0.01, 0.01]  # Retry-After, not our own backoff
        assert "throttled" in res.error.message and res.error.path == "/v1/ping/"
        assert_no_key(str(res.error), repr(res))


def test_5xx_is_retried_with_backoff_and_bursts_are_survived():
    with emulator(rate_5xx=1.0, retry_after=None) as emu:
        c, sleeps = client(emu, max_retries=2, backoff=0.2)
        res = c.ping()
        assert res.status == 503 and res.attempts == 3
        assert 0.15 <= sleeps[0] <= 0.25 and 0.3 <= sleeps[1] <= 0.5  # exponential, jittered
    with emulator(rate_429=0.2, rate_5xx=0.2, seed=7) as emu:
        c, sleeps = client(emu, max_retries=8)
        results = [c.ping() for _ in range(20)]
        assert all(r.ok for r in results) and sleeps
        assert emu.injected["429"] > 0 and emu.injected["5xx"] > 0


def test_4xx_is_not_retried():
    with emulator() as emu:
        c = PlatformClient(emu.url, Secret("m0-wrongKEYvalue123"), sleep=lambda s: None)
        res = c.ping()
        assert res.status == 401 and res.attempts == 1 and len(emu.requests) == 1
        c2, _ = client(emu)
        res = c2.get_all_page({"NOT": [{"app_id": "*"}]}, page=0)
        assert res.status == 400 and res.attempts == 1


def test_timeouts_and_network_errors_are_values():
    with emulator(slow_ms=300) as emu:
        c, sleeps = client(emu, timeout=0.1, max_retries=1)
        res = c.ping()
        assert not res.ok and res.error.kind == "timeout" and res.attempts == 2
        # a write that timed out is not resent: it may have been processed
        res = c.add([{"role": "user", "content": "We pin Node to the LTS line."}], user_id="u", app_id="a",
                    metadata={"type": "convention"})
        assert res.error.kind == "timeout" and res.attempts == 1
        port = emu.port
    c = PlatformClient(f"http://127.0.0.1:{port}", Secret(KEY), timeout=1, max_retries=1, sleep=lambda s: None)
    res = c.ping()
    assert not res.ok and res.error.kind == "network" and res.status is None
    assert_no_key(str(res.error))


class _EchoHandler(BaseHTTPRequestHandler):
    """A hostile server that echoes the Authorization header back in its error body."""

    def do_GET(self):
        body = json.dumps({"detail": f"bad credentials {self.headers.get('Authorization')}"}).encode()
        self.send_response(400)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *a):
        pass


def test_error_bodies_are_short_and_redacted_even_when_the_server_echoes_the_key(caplog):
    server = ThreadingHTTPServer(("127.0.0.1", 0), _EchoHandler)
    t = threading.Thread(target=server.serve_forever, daemon=True)
    t.start()
    try:
        caplog.set_level(logging.DEBUG)
        c = PlatformClient(f"http://127.0.0.1:{server.server_address[1]}", Secret(KEY))
        res = c.ping()
        assert res.status == 400 and "<redacted>" in res.error.message
        assert_no_key(str(res.error), repr(res), caplog.text)
    finally:
        server.shutdown()
        server.server_close()


def test_helpers():
    assert parse_retry_after("2") == 2.0 and parse_retry_after("999") == 60.0
    assert parse_retry_after("garbage") is None and parse_retry_after(None) is None
    assert safe_url("https://user:pw@api.mem0.ai/x?k=v#f") == "https://api.mem0.ai/x"
    assert contract.normalise_filters({"NOT": {"a": 1}}) == {"NOT": [{"a": 1}]}
    with pytest.raises(ContractViolation):
        contract.normalise_filters({"AND": {"user_id": "u"}})

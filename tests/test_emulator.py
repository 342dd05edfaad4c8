"""The emulator behaves like the platform contract says, over real HTTP on loopback."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import httpx
import pytest

from gate.platform.emulator import Emulator, EmulatorConfig
from platform_helpers import KEY, ORG, SCRATCH, DEFAULT_PROJECT, default_sigint, emulator

AUTH = {"Authorization": f"Token {KEY}"}
OVERRIDE = {"project_id": SCRATCH, "org_id": ORG}


def http(emu):
    return httpx.Client(base_url=emu.url, headers=AUTH, timeout=5)


def add(c, text, user="u1", app="a1", infer=True, role="user", **extra):
    body = {"messages": [{"role": role, "content": text}], "user_id": user, "app_id": app,
            "metadata": {"type": "decision"}, "infer": infer, **extra}
    return c.post("/v3/memories/add/", json=body)


def read(c, filters, latest_only=True, **extra):
    r = c.post("/v3/memories/", json={"filters": filters, "latest_only": latest_only, **extra})
    assert r.status_code == 200, r.text
    return [m["memory"] for m in r.json()["results"]]


def wait_for(pred, limit=3.0):
    end = time.monotonic() + limit
    while time.monotonic() < end:
        if pred():
            return True
        time.sleep(0.02)
    return False


def test_auth_is_a_token_header():
    with emulator() as emu:
        assert httpx.get(emu.url + "/v1/ping/").status_code == 401
        assert httpx.get(emu.url + "/v1/ping/", headers={"Authorization": f"Bearer {KEY}"}).status_code == 401
        assert httpx.get(emu.url + "/v1/ping/", headers={"Authorization": "Token wrong"}).status_code == 401
        r = httpx.get(emu.url + "/v1/ping/", headers=AUTH)
        assert r.status_code == 200
        assert (r.json()["org_id"], r.json()["project_id"]) == (ORG, DEFAULT_PROJECT)
        # the emulator records whether a request was authorised, never the header itself
        assert all(KEY not in repr(req) for req in emu.requests)


def test_infer_true_is_asynchronous_and_event_reports_progress():
    with emulator(delay_ms=300) as emu, http(emu) as c:
        r = add(c, "We deploy the API on Fly.io for staging.")
        assert r.status_code == 200
        body = r.json()
        assert body["status"] == "PENDING" and body["event_id"] and "results" not in body
        assert read(c, {"user_id": "u1"}) == []  # nothing visible yet
        seen = set()
        assert wait_for(lambda: seen.add(c.get(f"/v1/event/{body['event_id']}/").json()["status"])
                        or "SUCCEEDED" in seen)
        assert {"RUNNING", "SUCCEEDED"} <= seen
        ev = c.get(f"/v1/event/{body['event_id']}/").json()
        assert [x["memory"] for x in ev["results"]] == ["We deploy the API on Fly.io for staging."]
        assert read(c, {"user_id": "u1"}) == ["We deploy the API on Fly.io for staging."]
        assert c.get("/v1/event/nope/").status_code == 404


def test_infer_false_is_immediate_and_keeps_assistant_turns():
    with emulator(delay_ms=5000) as emu, http(emu) as c:
        r = add(c, "Session state: on branch feat/x, tests green.", infer=False, role="assistant")
        assert r.status_code == 200 and r.json()["results"]
        assert read(c, {"user_id": "u1"}) == ["Session state: on branch feat/x, tests green."]


def test_identical_facts_are_deduplicated():
    with emulator(delay_ms=0) as emu, http(emu) as c:
        add(c, "The report worker reads settings once at startup.")
        add(c, "the report worker reads settings once at startup")
        assert wait_for(lambda: read(c, {"user_id": "u1"}))
        assert len(read(c, {"user_id": "u1"})) == 1


def test_contradicted_fact_is_superseded_and_latest_only_hides_it():
    with emulator(delay_ms=0) as emu, http(emu) as c:
        add(c, "We deploy on Fly.io for every service.")
        add(c, "We moved off Fly.io to Railway last month.")
        time.sleep(0.05)
        both = read(c, {"user_id": "u1"}, latest_only=False)
        assert len(both) == 2
        assert read(c, {"user_id": "u1"}, latest_only=True) == ["We moved off Fly.io to Railway last month."]


def test_not_must_be_a_list_and_unknown_filters_are_400():
    with emulator(delay_ms=0) as emu, http(emu) as c:
        add(c, "Project scoped fact about the build cache.", app="a1")
        add(c, "User scoped preference for terse answers.", app=None)
        time.sleep(0.05)
        bad = c.post("/v3/memories/", json={"filters": {"AND": [{"user_id": "u1"}, {"NOT": {"app_id": "*"}}]}})
        assert bad.status_code == 400
        # implicit null scoping does not hold: user_id alone returns the project-scoped record too
        assert len(read(c, {"user_id": "u1"})) == 2
        assert read(c, {"AND": [{"user_id": "u1"}, {"NOT": [{"app_id": "*"}]}]}) == [
            "User scoped preference for terse answers."]
        assert c.post("/v3/memories/", json={"filters": {"colour": "red"}}).status_code == 400
        assert c.post("/v3/memories/", json={}).status_code == 400


def test_scope_override_only_in_the_body_and_only_both_ids():
    with emulator(delay_ms=0) as emu, http(emu) as c:
        c.post("/v3/memories/add/", params=OVERRIDE, json={
            "messages": [{"role": "user", "content": "Query params route nowhere special."}],
            "user_id": "u1", "metadata": {"type": "insight"}})
        c.post("/v3/memories/add/", json={
            "messages": [{"role": "user", "content": "Half an override is no override."}],
            "user_id": "u1", "metadata": {"type": "insight"}, "project_id": SCRATCH})
        c.post("/v3/memories/add/", json={
            "messages": [{"role": "user", "content": "Both ids in the body reach the scratch project."}],
            "user_id": "u1", "metadata": {"type": "insight"}, **OVERRIDE})
        time.sleep(0.05)
        default = sorted(m["memory"] for m in emu.memories(DEFAULT_PROJECT))
        scratch = [m["memory"] for m in emu.memories(SCRATCH)]
        assert default == ["Half an override is no override.", "Query params route nowhere special."]
        assert scratch == ["Both ids in the body reach the scratch project."]
        # reads follow the same rule
        assert read(c, {"user_id": "u1"}, **OVERRIDE) == scratch
        other = c.post("/v3/memories/", json={"filters": {"user_id": "u1"}, "project_id": "p", "org_id": "org_x"})
        assert other.status_code == 403


def test_delete_takes_query_params_is_soft_and_renames_the_entity():
    with emulator(delay_ms=0) as emu, http(emu) as c:
        add(c, "The nightly job runs at two in the morning.")
        time.sleep(0.05)
        r = c.request("DELETE", "/v1/memories/", params={"user_id": "u1"}, json={"user_id": "u1"})
        assert r.status_code == 400 and "filter" in r.json()["detail"]
        assert c.delete("/v1/memories/").status_code == 400
        assert c.delete("/v1/memories/", params={"user_id": "u1", "app_id": "a1"}).status_code == 200
        assert read(c, {"user_id": "u1"}) == []
        assert emu.store.count_all() == {"live": 0, "deleted": 1}  # the row persists, soft-deleted
        row = emu.store._db.execute("SELECT user_id, is_deleted FROM memories").fetchone()
        assert row["user_id"].startswith("u1_deleted_") and row["is_deleted"] == 1


def test_project_fields_must_be_repeated_params():
    with emulator() as emu, http(emu) as c:
        path = f"/api/v1/orgs/organizations/{ORG}/projects/{SCRATCH}/"
        assert c.patch(path, json={"custom_instructions": "Only durable facts.",
                                   "custom_categories": [{"decision": "A choice."}]}).status_code == 200
        assert c.get(path, params={"fields": "custom_instructions,custom_categories"}).status_code == 400
        r = c.get(path, params=[("fields", "custom_instructions"), ("fields", "custom_categories")])
        assert r.json() == {"custom_instructions": "Only durable facts.",
                            "custom_categories": [{"decision": "A choice."}]}
        assert c.get(f"/api/v1/orgs/organizations/org_other/projects/{SCRATCH}/").status_code == 403
        assert c.patch(path, json={"custom_categories": "decision"}).status_code == 400


def test_get_all_pages_in_the_query():
    with emulator(delay_ms=0) as emu, http(emu) as c:
        c.post("/v3/memories/add/", json={"messages": [{"role": "user", "content": f"Fact number {i} is here."}
                                                       for i in range(5)], "user_id": "u1",
                                          "metadata": {"type": "insight"}})
        time.sleep(0.05)
        p1 = c.post("/v3/memories/", params={"page": 1, "page_size": 2}, json={"filters": {"user_id": "u1"}}).json()
        p3 = c.post("/v3/memories/", params={"page": 3, "page_size": 2}, json={"filters": {"user_id": "u1"}}).json()
        assert p1["count"] == 5 and len(p1["results"]) == 2 and p1["next"]
        assert len(p3["results"]) == 1 and p3["next"] is None


def test_switches_no_events_leak_fail_and_faults():
    with emulator(delay_ms=0, events=False, leak=True, fail_match="doomed") as emu, http(emu) as c:
        ev = add(c, "Epoch 3/10 loss=0.41 ETA 12m. We use uv for every Python project.").json()
        assert c.get(f"/v1/event/{ev['event_id']}/").status_code == 404
        time.sleep(0.05)
        assert any("Epoch" in m for m in read(c, {"user_id": "u1"}))
        emu.config.events = True
        ev = add(c, "This fact never lands anywhere at all.", user="doomed-1").json()
        time.sleep(0.05)
        assert c.get(f"/v1/event/{ev['event_id']}/").json()["status"] == "FAILED"
        assert read(c, {"user_id": "doomed-1"}) == []
        emu.config.rate_429 = 1.0
        r = c.get("/v1/ping/")
        assert r.status_code == 429 and r.headers["Retry-After"] == "0.01"
        emu.config.rate_429, emu.config.rate_5xx = 0.0, 1.0
        assert c.get("/v1/ping/").status_code == 503
        assert emu.injected == {"429": 1, "5xx": 1}


def test_instructions_switch_the_stand_in_extractor_to_suppress_noise():
    with emulator(delay_ms=0) as emu, http(emu) as c:
        text = "Epoch 3/10 loss=0.41 ETA 12m. We use uv for every Python project."
        add(c, text, user="before")
        c.patch(f"/api/v1/orgs/organizations/{ORG}/projects/{DEFAULT_PROJECT}/",
                json={"custom_instructions": "No heartbeats."})
        add(c, text, user="after")
        time.sleep(0.05)
        assert len(read(c, {"user_id": "before"})) == 2
        assert read(c, {"user_id": "after"}) == ["We use uv for every Python project."]


def test_only_loopback_and_file_state_survives_a_restart(tmp_path):
    with pytest.raises(ValueError):
        Emulator(host="0.0.0.0")
    db = str(tmp_path / "emu.sqlite")
    with Emulator(EmulatorConfig(delay_ms=0), db=db) as emu, http(emu) as c:
        add(c, "State in a file outlives the process.")
    with Emulator(EmulatorConfig(delay_ms=0), db=db) as emu, http(emu) as c:
        assert read(c, {"user_id": "u1"}) == ["State in a file outlives the process."]


def test_cli_starts_on_an_ephemeral_port_and_stops_on_ctrl_c():
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    proc = subprocess.Popen([sys.executable, "-c", "from gate.cli.live import emulator; emulator()",
                             "--port", "0", "--delay-ms", "10"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env, preexec_fn=default_sigint)
    try:
        first = proc.stdout.readline()
        assert first.startswith("gate emulator listening on http://127.0.0.1:")
        url = first.split()[-1]
        assert httpx.get(url + "/v1/ping/", headers={"Authorization": "Token anything"}).status_code == 200
    finally:
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=10)
    assert proc.returncode == 0, err
    assert "stopped" in out


def test_a_client_that_hangs_up_mid_request_leaves_no_traceback(capfd):
    """A client reset before the reply (a timeout, a killed run) must not print a server
    traceback on the console of whoever runs the emulator; the server keeps serving."""
    import socket
    import struct

    with Emulator(EmulatorConfig(api_key=KEY)) as emu:
        for _ in range(5):
            with socket.create_connection(("127.0.0.1", emu.port)) as raw:
                raw.sendall(b"POST /v3/memories/ HTTP/1.1\r\nHost: x\r\nContent-Length: 400\r\n\r\n{")
                raw.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))  # close = reset
        time.sleep(0.3)  # the handler threads meet the reset
        with http(emu) as c:
            assert read(c, {"user_id": "u1"}) == []
    err = capfd.readouterr().err
    assert "Traceback" not in err and "ConnectionResetError" not in err, err

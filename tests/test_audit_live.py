"""`gate audit --live` against gate's emulator on loopback: it pages through a scope and writes nothing.

The emulator is a real HTTP server; it records every request, so the test can prove the audit
sent nothing but get_all reads (and never the key to its output).
"""

from __future__ import annotations

import json

import pytest

from auditkit import FACTS, HEARTBEATS, rules, run
from platform_helpers import KEY, KEY_ENV, ORG, SCRATCH, assert_no_key, emulator
from gate.platform.client import PlatformClient
from gate.platform.contract import Scope
from gate.platform.emulator import Emulator, EmulatorConfig
from gate.platform.secret import Secret


def _fill(emu, *, scope=None) -> None:
    """Heartbeats and facts for two users and two apps, written before the audit (infer=False: verbatim)."""
    client = PlatformClient(emu.url, Secret(KEY), scope=scope, max_retries=0)
    writes = [("lena", "billing", HEARTBEATS[i % 5], "p-old") for i in range(7)]
    writes += [("lena", "billing", f, "p-new") for f in FACTS[:4]]
    writes += [("lena", None, "Lena prefers tabs over spaces in every repository.", "p-new")]
    writes += [("omar", "billing", f, "p-new") for f in FACTS[4:]]
    for user, app, text, policy in writes:
        res = client.add([{"role": "user", "content": text}], user_id=user, app_id=app,
                         metadata={"type": "insight", "policy": policy}, infer=False)
        assert res.ok, res.error
    client.close()


@pytest.fixture
def env(monkeypatch):
    monkeypatch.setenv(KEY_ENV, KEY)


def _audit_live(emu, tmp_path, *extra):
    return run("--live", "--base-url", emu.url, "--api-key-env", KEY_ENV, "--rules", rules(tmp_path),
               "--format", "json", "--page-size", "3", "--jobs", "1", *extra)


def test_live_audit_pages_through_a_project_scope_and_sends_only_reads(env, tmp_path):
    with emulator() as emu:
        _fill(emu)
        before = len(emu.requests)
        stored = len(emu.memories())
        code, out, err = _audit_live(emu, tmp_path, "--user-id", "lena", "--app-id", "billing")
        assert code == 0, err
        report = json.loads(out)
        sent = emu.requests[before:]
        assert len(emu.memories()) == stored
    assert report["memories"] == 11
    assert {p["policy"]: p["memories"] for p in report["policies"]} == {"p-old": 7, "p-new": 4}
    assert report["clusters"][0]["size"] == 7
    assert len(sent) == 4  # 11 memories, 3 a page
    assert {(r.method, r.path) for r in sent} == {("POST", "/v3/memories/")}  # get_all, the platform's read
    assert [r.query["page"] for r in sent] == [["1"], ["2"], ["3"], ["4"]]
    for r in sent:
        assert r.body["latest_only"] is True
        assert r.body["filters"] == {"AND": [{"user_id": "lena"}, {"app_id": "billing"}]}
    assert emu.writes_seen()[-1].path == "/v3/memories/add/"  # the last write is still the test's own
    assert_no_key(out, err, json.dumps(report))


def test_live_audit_without_an_app_reads_every_memory_of_the_user(env, tmp_path):
    with emulator() as emu:
        _fill(emu)
        code, out, err = _audit_live(emu, tmp_path, "--user-id", "lena")
    assert code == 0, err
    report = json.loads(out)
    assert report["memories"] == 12  # project-scoped and user-scoped
    assert "user lena" in report["source"] and emu.url.split("//")[1] in report["source"]


def test_live_audit_reads_a_project_override_with_both_ids_in_the_body(env, tmp_path):
    with emulator() as emu:
        _fill(emu, scope=Scope(project_id=SCRATCH, org_id=ORG))
        code, out, _ = _audit_live(emu, tmp_path, "--user-id", "lena", "--app-id", "billing")
        assert json.loads(out)["memories"] == 0  # the key's own project holds nothing
        before = len(emu.requests)
        code, out, err = _audit_live(emu, tmp_path, "--user-id", "lena", "--app-id", "billing",
                                     "--project-id", SCRATCH, "--org-id", ORG)
        sent = emu.requests[before:]
    assert code == 0, err
    assert json.loads(out)["memories"] == 11
    assert all(r.body["project_id"] == SCRATCH and r.body["org_id"] == ORG for r in sent)
    assert all("project_id" not in r.query for r in sent)


def test_live_audit_errors_are_one_line_and_never_show_the_key(env, tmp_path, monkeypatch):
    with emulator() as emu:
        code, _, err = _audit_live(emu, tmp_path, "--user-id", "lena", "--project-id", SCRATCH)
        assert code == 2 and "needs both project_id and org_id" in err
        code, _, err = run("--live", "--user-id", "lena", "--base-url", emu.url, "--api-key-env", "GATE_NO_SUCH_KEY",
                           "--rules", rules(tmp_path))
        assert code == 2 and "set GATE_NO_SUCH_KEY" in err
        monkeypatch.setenv(KEY_ENV, KEY + "-wrong")
        code, out, err = _audit_live(emu, tmp_path, "--user-id", "lena")
    assert code == 2
    assert err.startswith("error: live read, page 1: POST /v3/memories/: 401") and len(err.strip().splitlines()) == 1
    assert_no_key(out, err)


def test_the_emulators_sqlite_store_is_an_export_read_read_only(tmp_path):
    db = tmp_path / "emu.sqlite"
    with Emulator(EmulatorConfig(api_key=KEY), db=str(db)) as emu:
        _fill(emu)
        client = PlatformClient(emu.url, Secret(KEY), max_retries=0)
        client.delete_all(user_id="omar")  # deleted memories are not in the store's reads
        client.close()
    before = db.read_bytes()
    code, out, err = run(str(db), "--rules", rules(tmp_path), "--format", "json", "--jobs", "1")
    assert code == 0, err
    assert json.loads(out)["memories"] == 12
    assert db.read_bytes() == before

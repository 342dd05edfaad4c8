"""gate bench against network backends and paid models, all stand-ins on loopback: the mem0 OSS
adapter's requests, stage failures, the safety gates, and the OpenAI-compatible answerer and judge."""

from __future__ import annotations

import json

from click.testing import CliRunner

from benchkit import LLM_KEY, MEM0_KEY, LlmHandler, LlmState, Mem0OssHandler, Mem0State, serve, write_dataset
from gate.cli import main
from gate.cli.common import newest_rules

RULES = newest_rules("rules")


def bench(tmp_path, *args, env=None):
    out = tmp_path / "report.json"
    result = CliRunner().invoke(main, ["bench", "--dataset", write_dataset(tmp_path), "--report-out", str(out),
                                       "--case-set", "full", *args], env=env or {})
    report = json.loads(out.read_text()) if result.exit_code == 0 and out.exists() else None
    return result, report


def test_mem0_oss_adapter_speaks_the_oss_api(tmp_path):
    state = Mem0State(key=MEM0_KEY)
    with serve(Mem0OssHandler, state) as url:
        result, report = bench(tmp_path, "--backend", "mem0-oss", "--mem0-url", url, "--allow-live", "--no-gate",
                               "--rules", RULES, "--noise-rate", "0.5", "--run-id", "r1", "--report-mode", "full",
                               env={"MEM0_API_KEY": MEM0_KEY})
    assert result.exit_code == 0, result.output
    assert all(key_ok for *_, key_ok in state.requests)
    deletes = [(q["user_id"]) for m, p, q, _, _ in state.requests if m == "DELETE"]
    users = {f"gate-bench-r1-{system}-{conv}" for system in ("no-gate", report["systems"][1]["name"])
             for conv in ("conv-a", "conv-b")}
    assert sorted(deletes) == sorted(list(users) * 2)  # each run-scoped user, at the start and at the end
    adds = [b for m, p, _, b, _ in state.requests if m == "POST" and p == "/memories"]
    assert {b["user_id"] for b in adds} == users
    assert all(b["infer"] is False and b["metadata"]["run_id"] == "r1" for b in adds)
    assert {b["metadata"]["kind"] for b in adds} >= {"real"}
    revision = report["systems"][1]
    for body in adds:  # every memory a revision let through is stamped with its policy id, none without
        gated = body["user_id"].startswith(f"gate-bench-r1-{revision['name']}-")
        assert body["metadata"].get("policy") == (revision["policy"] if gated else None)
        assert "type" not in body["metadata"] or gated
    searches = [b for m, p, _, b, _ in state.requests if p == "/search"]
    assert len(searches) == 2 * 10
    for body in searches:
        assert body["filters"] == {"user_id": body["user_id"]} and body["limit"] == body["top_k"] == 50
    assert state.memories == {}  # cleaned up at the end
    metrics = report["metrics"]["no-gate"]
    assert metrics["source_metadata_returned"] == 1.0
    assert metrics["by_category"]["single-hop"]["judge_accuracy"] == 1.0
    assert report["config"]["backend_url"] == url
    text = json.dumps(report) + result.output
    assert MEM0_KEY not in text


def test_stage_failures_are_scored_and_redacted(tmp_path):
    state = Mem0State(key=MEM0_KEY, fail_add="no-gate-conv-b", fail_search="-conv-a")
    with serve(Mem0OssHandler, state) as url:
        result, report = bench(tmp_path, "--backend", "mem0-oss", "--mem0-url", url, "--allow-live", "--no-gate",
                               "--run-id", "r2", env={"MEM0_API_KEY": MEM0_KEY})
    assert result.exit_code == 0, result.output
    metrics = report["metrics"]["no-gate"]
    assert list(metrics["ingest"]["failed_conversations"]) == ["conv-b"]
    assert metrics["ingest"]["failed_conversations"]["conv-b"]["stage"] == "ingest"
    assert metrics["stage_failures"] == {"search": 6, "ingest": 4}  # every question of both, none skipped
    assert metrics["overall"]["questions"] == 8 and metrics["overall"]["stage_failures"] == 8
    assert metrics["overall"]["judge_accuracy"] == 0.0
    errors = [f["error"] for f in report["failures"]]
    assert any("HTTP 500" in e for e in errors) and any("HTTP 503" in e for e in errors)
    assert MEM0_KEY not in json.dumps(report) + result.output  # the server echoed the key in its error
    assert "<redacted>" in json.dumps(report)
    assert "stage failures" in result.output


def test_no_network_without_allow_live(tmp_path):
    state = Mem0State()
    with serve(Mem0OssHandler, state) as url:
        result, _ = bench(tmp_path, "--backend", "mem0-oss", "--mem0-url", url, "--no-gate")
        platform, _ = bench(tmp_path, "--backend", "mem0-platform", "--mem0-url", url, "--no-gate",
                            env={"MEM0_API_KEY": MEM0_KEY})
    assert result.exit_code == 2 and "--allow-live" in result.output
    assert platform.exit_code == 2 and "--allow-live" in platform.output
    assert state.requests == []


def test_no_paid_call_without_allow_paid_llm(tmp_path):
    llm = LlmState()
    with serve(LlmHandler, llm) as url:
        for role in ("--answerer", "--judge"):
            result, _ = bench(tmp_path, "--no-gate", role, "openai", "--llm-base-url", f"{url}/v1",
                              "--answerer-model", "m", "--judge-model", "m", env={"OPENAI_API_KEY": LLM_KEY})
            assert result.exit_code == 2 and "--allow-paid-llm" in result.output
        missing, _ = bench(tmp_path, "--no-gate", "--answerer", "openai", "--allow-paid-llm", "--llm-base-url",
                           f"{url}/v1", "--answerer-model", "m", env={"OPENAI_API_KEY": "", "GATE_BENCH_OPENAI_API_KEY": ""})
        assert missing.exit_code == 2 and "needs a key in $GATE_BENCH_OPENAI_API_KEY or $OPENAI_API_KEY" in missing.output
    assert llm.requests == []


def test_preflight_sends_nothing_and_shows_no_key(tmp_path):
    state, llm = Mem0State(), LlmState()
    with serve(Mem0OssHandler, state) as mem0_url, serve(LlmHandler, llm) as llm_url:
        result = CliRunner().invoke(main, [
            "bench", "--dataset", write_dataset(tmp_path), "--backend", "mem0-oss", "--mem0-url", mem0_url,
            "--allow-live", "--answerer", "openai", "--judge", "openai", "--allow-paid-llm", "--answerer-model",
            "a", "--judge-model", "j", "--llm-base-url", f"{llm_url}/v1", "--preflight-only", "--case-set", "full",
            "--report-out", str(tmp_path / "r.json")], env={"MEM0_API_KEY": MEM0_KEY, "OPENAI_API_KEY": LLM_KEY})
    assert state.requests == [] and llm.requests == []
    assert not (tmp_path / "r.json").exists()
    checks = json.loads(result.output)
    assert result.exit_code == 0 and checks["ready"] is True
    assert checks["backend"]["key_present"] is True and checks["llm"]["key_present"] is True
    assert checks["dataset"]["conversations"] == 2 and checks["dataset"]["turns"] == 14
    assert MEM0_KEY not in result.output and LLM_KEY not in result.output
    fast = CliRunner().invoke(main, ["bench", "--dataset", write_dataset(tmp_path), "--preflight-only"])
    assert fast.exit_code == 1 and "case set underfilled" in fast.output  # the tiny set has < 10 per category


def test_openai_answerer_and_judge_with_costs(tmp_path):
    llm = LlmState()
    with serve(LlmHandler, llm) as url:
        result, report = bench(tmp_path, "--no-gate", "--answerer", "openai", "--judge", "openai",
                               "--allow-paid-llm", "--llm-base-url", f"{url}/v1", "--answerer-model", "ans-1",
                               "--judge-model", "judge-1", "--answerer-input-usd-per-1m", "2",
                               "--answerer-output-usd-per-1m", "8", env={"OPENAI_API_KEY": LLM_KEY})
    assert result.exit_code == 0, result.output
    assert all(ok for *_, ok in llm.requests)
    models = [m for _, m, _ in llm.requests]
    assert models.count("ans-1") == 8 and models.count("judge-1") == 8  # scored questions only
    tokens = report["metrics"]["no-gate"]["tokens"]
    assert tokens["answerer"]["input"] > 0 and tokens["judge"]["output"] == 8
    expected = (tokens["answerer"]["input"] * 2 + tokens["answerer"]["output"] * 8) / 1e6
    assert report["costs_usd"]["answerer"]["no-gate"] == expected
    assert report["costs_usd"]["judge"].startswith("not priced")
    assert LLM_KEY not in json.dumps(report) + result.output


def test_a_judge_that_answers_nonsense_is_a_judge_stage_failure(tmp_path):
    llm = LlmState(garbage_judge=True)
    with serve(LlmHandler, llm) as url:
        result, report = bench(tmp_path, "--no-gate", "--judge", "openai", "--allow-paid-llm", "--llm-base-url",
                               f"{url}/v1", "--judge-model", "j", env={"OPENAI_API_KEY": LLM_KEY})
    assert result.exit_code == 0, result.output
    metrics = report["metrics"]["no-gate"]
    assert metrics["stage_failures"] == {"judge": 8}
    assert metrics["overall"]["judge_accuracy"] == 0.0
    assert "neither CORRECT nor WRONG" in report["failures"][0]["error"]


def test_mem0_platform_backend_through_gate_client(tmp_path):
    from gate.platform.emulator import Emulator, EmulatorConfig

    with Emulator(EmulatorConfig(api_key=MEM0_KEY)) as emulator:
        result, report = bench(tmp_path, "--backend", "mem0-platform", "--mem0-url", emulator.url, "--allow-live",
                               "--no-gate", "--run-id", "p1", env={"MEM0_API_KEY": MEM0_KEY})
        seen = list(emulator.requests)
    assert result.exit_code == 0, result.output
    metrics = report["metrics"]["no-gate"]
    assert metrics["ingest"]["stored_items"] == 14 and not metrics["stage_failures"]
    assert metrics["by_category"]["single-hop"]["questions"] == 3
    searches = [r for r in seen if r.path.startswith("/v3/memories/search")]
    assert len(searches) == 10 and all(r.body["latest_only"] is True for r in searches)
    assert MEM0_KEY not in json.dumps(report) + result.output

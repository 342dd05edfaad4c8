"""What a run will touch, decided before anything is sent: backend, answerer, judge, credentials.

`refusal` is the safety gate (no network without --allow-live, no paid model without
--allow-paid-llm, no paid model without its key and model); `preflight` reports the same checks
and the dataset's shape without sending anything. Keys are reported present or absent, never shown.
"""

from __future__ import annotations

import os
import secrets
import tempfile
import time
from dataclasses import dataclass

from gate.bench import cases
from gate.bench.dataset import CATEGORIES
from gate.bench.stores import LIVE_BACKENDS
from gate.platform.secret import Secret, key_from_env, safe_url

DEFAULT_PLATFORM_URL = "https://api.mem0.ai"


@dataclass(frozen=True)
class Plan:
    backend: str | None  # None for a replay
    mem0_url: str | None
    mem0_key_env: str | None
    answerer: str
    judge: str
    llm_base_url: str
    llm_key_envs: tuple
    answerer_model: str | None
    judge_model: str | None
    allow_live: bool
    allow_paid_llm: bool
    rates: dict  # role -> (input per 1M, output per 1M)

    @property
    def paid_roles(self) -> list:
        return [role for role, name in (("answerer", self.answerer), ("judge", self.judge)) if name == "openai"]

    def llm_key(self) -> tuple:
        """(env var name, Secret) of the first model key set, or (None, None)."""
        for name in self.llm_key_envs:
            key = key_from_env(name)
            if key:
                return name, key
        return None, None

    def mem0_key(self) -> Secret | None:
        return key_from_env(self.mem0_key_env) if self.mem0_key_env else None


def refusal(plan: Plan) -> str | None:
    """Why the run must not start, in one line; None when it may."""
    if plan.backend in LIVE_BACKENDS and not plan.allow_live:
        return f"the {plan.backend} backend sends the conversations over the network: pass --allow-live"
    if plan.backend == "mem0-oss" and not plan.mem0_url:
        return "the mem0-oss backend needs --mem0-url (or GATE_BENCH_MEM0_URL)"
    if plan.backend == "mem0-platform" and not plan.mem0_key():
        return f"the mem0-platform backend needs a key in ${plan.mem0_key_env}"
    if plan.paid_roles and not plan.allow_paid_llm:
        return f"the openai {' and '.join(plan.paid_roles)} calls a paid model: pass --allow-paid-llm"
    for role in plan.paid_roles:
        if not getattr(plan, f"{role}_model"):
            return f"the openai {role} needs --{role}-model (or GATE_BENCH_{role.upper()}_MODEL)"
    if plan.paid_roles and plan.llm_key()[1] is None:
        return f"the openai {' and '.join(plan.paid_roles)} needs a key in ${' or $'.join(plan.llm_key_envs)}"
    return None


def preflight(dataset, case_set: str, plan: Plan, rules_paths, store_dir: str | None = None) -> dict:
    """Every check a run makes before it starts, and nothing sent."""
    from gate.language.errors import GateError

    selected = cases.select(dataset.questions, case_set)
    short = cases.shortfall(dataset.questions, case_set)
    revisions = {}
    for path in rules_paths:
        try:
            from gate.engine.cache import load_classifier

            revisions[path] = {"ok": True, "policy": load_classifier(path).policy}
        except GateError as exc:
            revisions[path] = {"ok": False, "error": str(exc).splitlines()[0]}
    key_name, key = plan.llm_key()
    refused = refusal(plan)
    checks = {
        "dataset": {**dataset_info(dataset), "case_set": case_set, "questions_selected": len(selected),
                    "fast_categories_short": short},
        "rules": revisions,
        "backend": {"name": plan.backend, "live": plan.backend in LIVE_BACKENDS, "allow_live": plan.allow_live,
                    "url": safe_url(plan.mem0_url) if plan.mem0_url else None,
                    "key_present": bool(plan.mem0_key()) if plan.backend in LIVE_BACKENDS else None},
        "llm": {"answerer": plan.answerer, "judge": plan.judge, "paid": bool(plan.paid_roles),
                "allow_paid_llm": plan.allow_paid_llm,
                "base_url": safe_url(plan.llm_base_url) if plan.paid_roles else None,
                "answerer_model": plan.answerer_model if plan.answerer == "openai" else None,
                "judge_model": plan.judge_model if plan.judge == "openai" else None,
                "key_present": key is not None if plan.paid_roles else None,
                "key_env": key_name if plan.paid_roles else None},
        "sent": "nothing (preflight only)",
    }
    blockers = ([refused] if refused else []) + [f"rules {p}: {r['error']}" for p, r in revisions.items() if not r["ok"]]
    if plan.backend == "sqlite":
        directory = store_dir or default_store_dir()
        checks["backend"]["store_dir"] = directory
        checks["backend"]["store_dir_writable"] = _writable(directory)
        if not checks["backend"]["store_dir_writable"]:
            blockers.append(f"cannot create databases under {directory}")
    if short:
        blockers.append("case set underfilled: " + ", ".join(f"{k} has {v}" for k, v in short.items()))
    checks["ready"] = not blockers
    checks["blockers"] = blockers
    return checks


def store_opener(plan: Plan, run_id: str, directory: str, *, keep: bool = False):
    """A function: system name -> an empty store of the planned backend for that system."""

    def open_store(system: str):
        if plan.backend == "sqlite":
            from gate.bench.stores.sqlite import SqliteStore

            return SqliteStore(directory, system, keep=keep)
        if plan.backend == "mem0-oss":
            from gate.bench.stores.mem0_oss import Mem0OssStore

            return Mem0OssStore(plan.mem0_url, run_id, system, api_key=plan.mem0_key())
        if plan.backend == "mem0-platform":
            from gate.bench.stores.mem0_platform import Mem0PlatformStore

            return Mem0PlatformStore(plan.mem0_url or DEFAULT_PLATFORM_URL, run_id, system, api_key=plan.mem0_key())
        raise ValueError(f"unknown backend {plan.backend!r}")

    return open_store


def answerer_and_judge(plan: Plan):
    from gate.bench.answering import ContainmentJudge, ExtractiveAnswerer

    answerer, judge = ExtractiveAnswerer(), ContainmentJudge()
    if plan.paid_roles:
        from gate.bench.llm import ChatClient, OpenAIAnswerer, OpenAIJudge

        _, key = plan.llm_key()
        if plan.answerer == "openai":
            answerer = OpenAIAnswerer(ChatClient(plan.llm_base_url, plan.answerer_model, key, max_tokens=64))
        if plan.judge == "openai":
            judge = OpenAIJudge(ChatClient(plan.llm_base_url, plan.judge_model, key, max_tokens=8))
    return answerer, judge


def close(*parts) -> None:
    for part in parts:
        client = getattr(part, "client", None)
        if client is not None:
            client.close()


def add_costs(report: dict, plan: Plan) -> None:
    """Token costs from explicit per-million rates only; without both rates a role is 'not priced'."""
    from gate.bench.llm import Rates

    costs = {}
    for role in plan.paid_roles:
        rates = Rates(*plan.rates.get(role, (None, None)))
        costs[role] = {name: rates.cost(values["tokens"][role]) for name, values in report["metrics"].items()}
        if rates.input_per_1m is None or rates.output_per_1m is None:
            costs[role] = "not priced (pass both --{0}-input-usd-per-1m and --{0}-output-usd-per-1m)".format(role)
    report["costs_usd"] = costs or "no paid model used"


def dataset_info(dataset) -> dict:
    by_category = {}
    for q in dataset.questions:
        name = CATEGORIES.get(q.category, str(q.category))
        by_category[name] = by_category.get(name, 0) + 1
    return {"path": dataset.path, "conversations": len(dataset.conversations), "turns": dataset.turn_count,
            "questions": len(dataset.questions), "questions_by_category": by_category,
            "unresolved_evidence_refs": sum(len(q.unresolved) for q in dataset.questions)}


def report_config(plan: Plan, settings, forms, kept_store: str | None) -> dict:
    config = {"case_set": settings.case_set, "noise_rate": settings.noise_rate, "seed": settings.seed,
              "backend": plan.backend, "top_k": settings.top_k, "cutoffs": list(settings.cutoffs),
              "context_k": settings.context_k, "answerer": plan.answerer, "judge": plan.judge,
              "gate_forms": list(forms)}
    if plan.backend in LIVE_BACKENDS and plan.mem0_url:
        config["backend_url"] = safe_url(plan.mem0_url)
    if plan.paid_roles:
        config["llm"] = {"base_url": safe_url(plan.llm_base_url), "answerer_model": plan.answerer_model,
                         "judge_model": plan.judge_model}
    if kept_store:
        config["store_dir"] = kept_store
    return config


def summary(report: dict, path: str) -> str:
    lines = [f"{report['seconds']:.1f} s; report: {path} ({report['mode']})"]
    for name, values in report["metrics"].items():
        drops = values["ingest"]["false_drops"]
        if drops:
            listed = ", ".join(f"{d['sample_id']} {d['dia_id']} by {d['rule']}"
                               for d in values["ingest"]["false_drop_list"][:5])
            more = f" and {drops - 5} more" if drops > 5 else ""
            lines.append(f"{name}: {drops} real turn(s) dropped: {listed}{more}")
        failures = sum(values["stage_failures"].values()) + len(values["ingest"]["failed_conversations"])
        if failures:
            lines.append(f"{name}: stage failures {values['stage_failures']}, failed conversations "
                         f"{sorted(values['ingest']['failed_conversations'])} (see the report)")
    return "\n".join(lines)


def _writable(directory: str) -> bool:
    """Whether a directory can be made in it, or in the nearest existing parent it would be created in
    (tried, not inferred from permission bits: root passes every access check)."""
    path = os.path.abspath(directory)
    while not os.path.exists(path) and os.path.dirname(path) != path:
        path = os.path.dirname(path)
    try:
        os.rmdir(tempfile.mkdtemp(prefix=".gate-bench-probe-", dir=path))
    except OSError:
        return False
    return True


def fresh_run_id() -> str:
    return time.strftime("%Y%m%d-%H%M%S", time.gmtime()) + "-" + secrets.token_hex(3)


def default_store_dir() -> str:
    return os.path.join(tempfile.gettempdir(), "gate-bench")

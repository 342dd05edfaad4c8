"""`gate bench` and `gate bench-replay`: the downstream LoCoMo benchmark (gate/bench/).

Only click at module level: gate.bench is imported inside the commands, so `gate classify` never
loads it. Safety first: nothing is sent over the network without --allow-live, no paid model is
called without --allow-paid-llm, and --preflight-only sends nothing at all.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import sys

import click

from gate.cli.common import EXIT_BAD_INPUT

DEFAULT_LLM_URL = "https://api.openai.com/v1"
KEY_ENVS = ("GATE_BENCH_OPENAI_API_KEY", "OPENAI_API_KEY")  # the model key: first one set wins
REVISIONS_BY_DEFAULT = 2  # without --rules: the two newest revisions in rules/, plus no gate
RUN_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")


def _bad(message: str) -> None:
    click.echo(f"gate bench: {message}", err=True)
    sys.exit(EXIT_BAD_INPUT)


def _rate(name: str):
    return click.option(f"--{name}-usd-per-1m", type=float, default=None,
                        envvar=f"GATE_BENCH_{name.replace('-', '_').upper()}_USD_PER_1M",
                        help="Price per million tokens, for a cost in the report (none is guessed).")


@click.command("bench")
@click.option("--dataset", "dataset_path", required=True, help="A LoCoMo JSON file (locomo10.json).")
@click.option("--rules", "rules_paths", multiple=True,
              help="A revision to compare (repeatable). Default: the two newest in rules/, plus --no-gate.")
@click.option("--no-gate", is_flag=True, help="Also store everything, ungated: the baseline.")
@click.option("--gate-form", type=click.Choice(["drop", "full", "both"]), default="drop", show_default=True,
              help="drop: the drop half only (what is not dropped is stored); full: only flagged windows.")
@click.option("--noise-rate", type=click.FloatRange(0, 10), default=0.0, show_default=True,
              help="Noise turns injected per real turn (0.3: 3 for every 10).")
@click.option("--seed", type=int, default=0, show_default=True, help="Noise seed.")
@click.option("--backend", type=click.Choice(["sqlite", "mem0-oss", "mem0-platform"]), default="sqlite",
              show_default=True)
@click.option("--store-dir", default=None, help="sqlite: where the run's databases go (default: the temp dir).")
@click.option("--keep-store", is_flag=True, help="sqlite: keep the databases after the run.")
@click.option("--mem0-url", envvar="GATE_BENCH_MEM0_URL", default=None,
              help="mem0-oss: the server's base URL; mem0-platform: default https://api.mem0.ai.")
@click.option("--mem0-key-env", default="MEM0_API_KEY", show_default=True,
              help="The environment variable holding the mem0 key (never pass a key itself).")
@click.option("--case-set", default="fast", show_default=True,
              help="fast, full, or fast-<category> (multi-hop, temporal, open-domain, single-hop, adversarial).")
@click.option("--top-k", type=click.IntRange(1, 1000), default=50, show_default=True, help="Memories retrieved.")
@click.option("--top-k-cutoff", "cutoffs", type=click.IntRange(1, 1000), multiple=True,
              help="Evidence recall and noise are reported at each cutoff (repeatable). Default: 5 10 20 50.")
@click.option("--context-k", type=click.IntRange(1, 1000), default=10, show_default=True,
              help="Memories the answerer and the containment judge see.")
@click.option("--answerer", type=click.Choice(["extractive", "openai"]), default="extractive", show_default=True)
@click.option("--judge", type=click.Choice(["containment", "openai"]), default="containment", show_default=True)
@click.option("--llm-base-url", envvar="GATE_BENCH_LLM_BASE_URL", default=DEFAULT_LLM_URL, show_default=True,
              help="Any OpenAI-compatible server (…/v1).")
@click.option("--llm-key-env", default=None,
              help="The environment variable holding the model key (default: GATE_BENCH_OPENAI_API_KEY, "
                   "then OPENAI_API_KEY).")
@click.option("--answerer-model", envvar="GATE_BENCH_ANSWERER_MODEL", default=None)
@click.option("--judge-model", envvar="GATE_BENCH_JUDGE_MODEL", default=None)
@_rate("answerer-input")
@_rate("answerer-output")
@_rate("judge-input")
@_rate("judge-output")
@click.option("--report-out", default="bench_report.json", show_default=True)
@click.option("--report-mode", type=click.Choice(["compact", "full"]), default="compact", show_default=True,
              help="full keeps every retrieved memory (what bench-replay needs).")
@click.option("--preflight-only", is_flag=True, help="Check dataset, backend and credentials; send nothing.")
@click.option("--allow-live", is_flag=True, help="Allow calls to a network backend.")
@click.option("--allow-paid-llm", is_flag=True, help="Allow calls to a paid model (answerer or judge).")
@click.option("--run-id", default=None, help="Isolates the run's store state (default: a fresh id).")
def bench(dataset_path, rules_paths, no_gate, gate_form, noise_rate, seed, backend, store_dir, keep_store,
          mem0_url, mem0_key_env, case_set, top_k, cutoffs, context_k, answerer, judge, llm_base_url,
          llm_key_env, answerer_model, judge_model, answerer_input_usd_per_1m, answerer_output_usd_per_1m,
          judge_input_usd_per_1m, judge_output_usd_per_1m, report_out, report_mode, preflight_only,
          allow_live, allow_paid_llm, run_id):
    """LoCoMo through the gate, into a store, searched, answered and judged, beside no gate."""
    from gate.bench import cases, planning
    from gate.bench.dataset import DatasetError, load_dataset

    try:
        dataset = load_dataset(dataset_path)
    except DatasetError as exc:
        _bad(str(exc))
    if case_set not in cases.NAMES:
        _bad(f"unknown --case-set {case_set!r}; expected one of {', '.join(cases.NAMES)}")
    if not rules_paths and not no_gate:
        from gate.bench.gating import default_rules

        rules_paths, no_gate = tuple(default_rules("rules", REVISIONS_BY_DEFAULT)), True
        if not rules_paths:
            _bad("no rules/v*.yaml here to compare; pass --rules PATH (or --no-gate alone)")
    cutoffs = tuple(sorted(set(cutoffs))) if cutoffs else tuple(k for k in (5, 10, 20, 50) if k <= top_k) or (top_k,)
    if max(cutoffs) > top_k:
        _bad(f"--top-k-cutoff {max(cutoffs)} is above --top-k {top_k}: nothing is retrieved that deep")
    plan = planning.Plan(
        backend=backend, mem0_url=mem0_url, mem0_key_env=mem0_key_env, answerer=answerer, judge=judge,
        llm_base_url=llm_base_url, llm_key_envs=(llm_key_env,) if llm_key_env else KEY_ENVS,
        answerer_model=answerer_model, judge_model=judge_model, allow_live=allow_live,
        allow_paid_llm=allow_paid_llm,
        rates={"answerer": (answerer_input_usd_per_1m, answerer_output_usd_per_1m),
               "judge": (judge_input_usd_per_1m, judge_output_usd_per_1m)})
    if preflight_only:
        checks = planning.preflight(dataset, case_set, plan, rules_paths, store_dir)
        click.echo(json.dumps(checks, indent=2))
        sys.exit(0 if checks["ready"] else 1)
    problem = planning.refusal(plan)
    if problem:
        _bad(problem)
    if run_id is not None and not RUN_ID.fullmatch(run_id):
        _bad(f"--run-id {run_id!r}: use 1-64 letters, digits, '.', '_' or '-' (it names store scopes and a directory)")

    from gate.bench.gating import systems_for
    from gate.bench.report import build_report, render_table
    from gate.bench.runner import Settings, run_bench
    from gate.language.errors import GateError

    forms = ("drop", "full") if gate_form == "both" else (gate_form,)
    try:
        systems = systems_for(rules_paths, no_gate=no_gate, forms=forms)
    except GateError as exc:
        for line in str(exc).splitlines():
            click.echo(line, err=True)
        sys.exit(EXIT_BAD_INPUT)
    names = [s.name for s in systems]
    if len(set(names)) < len(names):
        _bad(f"two systems would share a name ({', '.join(names)}): pass each revision once")
    run_id = run_id or planning.fresh_run_id()
    settings = Settings(case_set=case_set, noise_rate=noise_rate, seed=seed, top_k=top_k, cutoffs=cutoffs,
                        context_k=context_k, run_id=run_id)
    directory = os.path.join(store_dir or planning.default_store_dir(), run_id)
    answerer_impl, judge_impl = planning.answerer_and_judge(plan)
    try:
        run = run_bench(dataset, systems, planning.store_opener(plan, run_id, directory, keep=keep_store),
                        answerer_impl, judge_impl, settings, progress=_progress)
    finally:
        planning.close(answerer_impl, judge_impl)
    report = build_report(run, mode=report_mode, dataset_info=planning.dataset_info(dataset),
                          config=planning.report_config(plan, settings, forms, directory if keep_store else None))
    planning.add_costs(report, plan)
    _write(report, report_out)
    click.echo(render_table(report))
    click.echo("")
    click.echo(planning.summary(report, report_out))


@click.command("bench-replay")
@click.option("--report", "report_path", required=True, help="A report written with --report-mode full.")
@click.option("--top-k-cutoff", "cutoffs", type=click.IntRange(1, 1000), multiple=True,
              help="Cutoffs to report (repeatable). Default: the source report's.")
@click.option("--context-k", type=click.IntRange(1, 1000), default=None,
              help="Memories the answerer and judge see. Default: the source report's.")
@click.option("--answerer", type=click.Choice(["extractive", "openai"]), default="extractive", show_default=True)
@click.option("--judge", type=click.Choice(["containment", "openai"]), default="containment", show_default=True)
@click.option("--llm-base-url", envvar="GATE_BENCH_LLM_BASE_URL", default=DEFAULT_LLM_URL, show_default=True,
              help="Any OpenAI-compatible server (…/v1).")
@click.option("--llm-key-env", default=None, help="The environment variable holding the model key.")
@click.option("--answerer-model", envvar="GATE_BENCH_ANSWERER_MODEL", default=None)
@click.option("--judge-model", envvar="GATE_BENCH_JUDGE_MODEL", default=None)
@_rate("answerer-input")
@_rate("answerer-output")
@_rate("judge-input")
@_rate("judge-output")
@click.option("--allow-paid-llm", is_flag=True, help="Allow calls to a paid model (answerer or judge).")
@click.option("--report-out", default="bench_replay.json", show_default=True)
@click.option("--report-mode", type=click.Choice(["compact", "full"]), default="compact", show_default=True)
@click.option("--run-id", default=None)
def bench_replay(report_path, cutoffs, context_k, answerer, judge, llm_base_url, llm_key_env, answerer_model,
                 judge_model, answerer_input_usd_per_1m, answerer_output_usd_per_1m, judge_input_usd_per_1m,
                 judge_output_usd_per_1m, allow_paid_llm, report_out, report_mode, run_id):
    """Answer and judge again on a full report's saved retrieval; no store is touched."""
    from gate.bench import planning
    from gate.bench.replay import ReplayError, load_full_report, replay
    from gate.bench.report import render_table

    try:
        source = load_full_report(report_path)
    except ReplayError as exc:
        _bad(str(exc))
    plan = planning.Plan(backend=None, mem0_url=None, mem0_key_env=None, answerer=answerer, judge=judge,
                      llm_base_url=llm_base_url, llm_key_envs=(llm_key_env,) if llm_key_env else KEY_ENVS,
                      answerer_model=answerer_model, judge_model=judge_model, allow_live=False,
                      allow_paid_llm=allow_paid_llm,
                      rates={"answerer": (answerer_input_usd_per_1m, answerer_output_usd_per_1m),
                             "judge": (judge_input_usd_per_1m, judge_output_usd_per_1m)})
    problem = planning.refusal(plan)
    if problem:
        _bad(problem)
    answerer_impl, judge_impl = planning.answerer_and_judge(plan)
    try:
        report = replay(source, answerer_impl, judge_impl, cutoffs=cutoffs or None, context_k=context_k,
                        mode=report_mode, run_id=run_id)
    finally:
        planning.close(answerer_impl, judge_impl)
    planning.add_costs(report, plan)
    _write(report, report_out)
    click.echo(render_table(report))
    click.echo("")
    click.echo(planning.summary(report, report_out))


@contextlib.contextmanager
def _progress(label: str, total: int):
    """A progress bar on stderr when it is a terminal; silent otherwise (logs, CI, pipes)."""
    if not sys.stderr.isatty() or total <= 0:
        class _Silent:
            def update(self, n: int = 1) -> None:
                pass

        yield _Silent()
        return
    with click.progressbar(length=total, label=f"{label:<7}", file=sys.stderr, show_pos=True) as bar:
        yield bar


def _write(report: dict, path: str) -> None:
    try:
        directory = os.path.dirname(os.path.abspath(path))
        os.makedirs(directory, exist_ok=True)
        tmp = f"{path}.tmp"
        with open(tmp, "w", encoding="utf-8") as handle:
            json.dump(report, handle, indent=1, ensure_ascii=False)
            handle.write("\n")
        os.replace(tmp, path)
    except OSError as exc:
        _bad(f"{path}: cannot write the report: {exc.strerror or exc}")

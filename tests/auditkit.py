"""Shared pieces for the `gate audit` tests: a small revision with audit ceilings, exports, a runner.

Memory texts are written here in the shapes the audit must recognise (heartbeat frames in
several forms, facts, restated facts), with numbers that vary; nothing is copied from shared data.
"""

from __future__ import annotations

import json

from click.testing import CliRunner

from platform_helpers import RULES_YAML

CEILINGS = "  audit_max_near_duplicate_share: {dup}\n  audit_max_noise_share: {noise}\n"

HEARTBEATS = [
    "Epoch 3/10 loss=0.4121 ETA 12m",
    "epoch 7/10 - loss: 0.1873 - ETA 3m",
    "Epoch 9/10 loss=0.0912 ETA 1m",
    "[14:02:11] epoch 4/20 loss=0.3310 ETA 41m",
    "Epoch 12/50 loss=0.2231 ETA 2h",
]
FACTS = [
    "We decided to keep invoices in Postgres because reconciling two stores cost a day a month.",
    "Migration files start with a UTC timestamp prefix.",
    "Lena prefers small pull requests with the reason in the description.",
    "The PDF worker leaks memory on fonts it cannot embed.",
    "Rotate the Stripe key in Vault first, then deploy, then revoke the old key.",
    "Staging uses its own Stripe account, so customer ids never match production.",
]


def rules(tmp_path, *, dup: float | None = 0.5, noise: float | None = 0.5, name: str = "rules.yaml") -> str:
    """The platform tests' tiny revision (a heartbeat drop rule, epoch and ETA markers) with ceilings."""
    text = RULES_YAML
    if dup is not None or noise is not None:
        extra = ""
        if dup is not None:
            extra += f"  audit_max_near_duplicate_share: {dup}\n"
        if noise is not None:
            extra += f"  audit_max_noise_share: {noise}\n"
        text = text.replace("  extract_recall: 0.8\n", "  extract_recall: 0.8\n" + extra)
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def memory(text: str, *, policy: str | None = "p-old", mtype: str | None = "insight", day: int = 1,
           categories=(), hour: int = 10, **extra) -> dict:
    metadata = {"type": mtype}
    if policy is not None:
        metadata["policy"] = policy
    out = {"id": f"m-{abs(hash((text, policy, day, hour))) % 10**9}", "memory": text, "metadata": metadata,
           "categories": list(categories), "created_at": f"2026-11-{day:02d}T{hour:02d}:00:00Z"}
    out.update(extra)
    return out


def write_jsonl(path, memories) -> str:
    with open(path, "w", encoding="utf-8") as handle:
        for m in memories:
            handle.write(json.dumps(m) + "\n")
    return str(path)


def run(*args) -> tuple[int, str, str]:
    """`gate audit ARGS` through the real command line; (exit code, stdout, stderr)."""
    from gate.cli import main

    try:
        runner = CliRunner(mix_stderr=False)  # click < 8.2 mixes the streams unless told not to
    except TypeError:
        runner = CliRunner()
    result = runner.invoke(main, ["audit", *args], catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


def run_json(*args) -> tuple[int, dict, str]:
    code, out, err = run(*args, "--format", "json")
    return code, (json.loads(out) if out.strip().startswith("{") else None), err

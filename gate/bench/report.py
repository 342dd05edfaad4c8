"""The benchmark report: JSON (compact or full) and the side-by-side table printed after a run.

Compact keeps the metrics, the deltas, every false drop (up to a limit) and the first failures.
Full also keeps every question's retrieved memories, answer and judgment: what replay needs.
"""

from __future__ import annotations

import datetime as _dt

from gate.bench.dataset import CATEGORIES, UNSCORED
from gate.bench.metrics import case_metrics, ingest_metrics

FORMAT = "gate-bench/1"
FIRST_FAILURES = 20
MODES = ("compact", "full")


def build_report(run, *, mode: str, dataset_info: dict, config: dict) -> dict:
    systems = [{"name": s.name, "revision": s.revision, "policy": s.policy, "form": s.form,
                "rules": getattr(s, "path", None)} for s in run.systems]
    metrics = {s.name: {"ingest": ingest_metrics(run.ingest[s.name]),
                        **case_metrics(run.questions, run.results[s.name], config["cutoffs"], config["context_k"])}
               for s in run.systems}
    return assemble(systems=systems, questions=run.questions, results=run.results, metrics=metrics, mode=mode,
                    run_id=run.settings.run_id, seconds=run.seconds, dataset_info=dataset_info, config=config)


def assemble(*, systems, questions, results, metrics, mode, run_id, seconds, dataset_info, config) -> dict:
    names = [s["name"] for s in systems]
    report = {
        "format": FORMAT,
        "mode": mode,
        "run_id": run_id,
        "generated_at": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "seconds": round(seconds, 2),
        "dataset": dataset_info,
        "config": config,
        "systems": systems,
        "baseline": baseline(names),
        "metrics": metrics,
    }
    report["deltas"] = deltas(metrics, report["baseline"])
    report["failures"] = first_failures(questions, results, names)
    report["wrong_answers"] = first_wrong(questions, results, names)
    if mode == "full":
        report["cases"] = [{"key": q.key, "sample_id": q.sample_id, "category": q.category,
                            "question": q.question, "gold": q.answer, "evidence": list(q.evidence),
                            "results": {n: results[n][q.key].to_json(with_hits=True) for n in names}}
                           for q in questions]
    return report


def baseline(names) -> str | None:
    if "no-gate" in names:
        return "no-gate"
    return names[0] if names else None


# (label, path into a system's metrics, format); the table and the deltas read the same rows
ROWS = (
    ("real turns stored", ("ingest", "real_stored"), "int"),
    ("false drops (real turns dropped)", ("ingest", "false_drops"), "int"),
    ("false drops per 1,000 real turns", ("ingest", "false_drops_per_1k_real_turns"), "2f"),
    ("evidence retention", ("ingest", "evidence_retention"), "3f"),
    ("noise stored (of injected)", ("ingest", "noise_stored"), "int"),
    ("noise stored share", ("ingest", "noise_stored_share"), "3f"),
    ("stored items", ("ingest", "stored_items"), "int"),
)


def metric_rows(report: dict) -> list:
    cutoffs = report["config"]["cutoffs"]
    context_k = report["config"]["context_k"]
    rows = list(ROWS)
    for k in cutoffs:
        rows.append((f"evidence recall@{k}", ("retrieval", str(k), "evidence_recall"), "3f"))
    for k in cutoffs:
        rows.append((f"noise share of top-{k}", ("retrieval", str(k), "noise_in_top_k"), "3f"))
    judge = report["config"]["judge"]
    rows += [
        (f"judge accuracy ({judge}, top-{context_k})", ("overall", "judge_accuracy"), "3f"),
        ("answer containment", ("overall", "containment"), "3f"),
        ("answer token F1", ("overall", "token_f1"), "3f"),
    ]
    for number, name in CATEGORIES.items():
        if number not in UNSCORED:
            rows.append((f"  {name}: accuracy", ("by_category", name, "judge_accuracy"), "3f"))
    rows += [
        ("stage failures", ("overall", "stage_failures"), "int"),
        ("gate ms per window", ("ingest", "latency_ms", "gate_per_window"), "3f"),
        ("ingest ms per item", ("ingest", "latency_ms", "ingest_per_item"), "3f"),
        ("search ms", ("latency_ms", "search"), "2f"),
        ("answer ms", ("latency_ms", "answer"), "3f"),
    ]
    return rows


def deltas(metrics: dict, base: str | None) -> dict:
    if base is None:
        return {}
    out = {}
    for name, values in metrics.items():
        if name == base:
            continue
        row = {}
        for label, path, _ in ROWS:
            row[".".join(path)] = _delta(_get(values, path), _get(metrics[base], path))
        for k, ret in values["retrieval"].items():
            for key in ("evidence_recall", "noise_in_top_k"):
                row[f"retrieval.{k}.{key}"] = _delta(ret[key], metrics[base]["retrieval"].get(k, {}).get(key))
        for key in ("judge_accuracy", "containment", "token_f1"):
            row[f"overall.{key}"] = _delta(values["overall"][key], metrics[base]["overall"][key])
        out[name] = row
    return out


def first_failures(questions, results, names) -> list:
    out = []
    for name in names:
        for q in questions:
            failure = results[name][q.key].failure
            if failure:
                out.append({"system": name, "key": q.key, "category": CATEGORIES.get(q.category), **failure})
                if len(out) >= FIRST_FAILURES:
                    return out
    return out


def first_wrong(questions, results, names) -> list:
    from gate.bench.text import content_tokens

    out = []
    for q in questions:
        if not q.scored:
            continue
        for name in names:
            r = results[name][q.key]
            if r.failure or r.correct:
                continue
            seen = set()
            for hit in r.hits:
                seen.update(content_tokens(hit.text))
            found = {h.source for h in r.hits}
            out.append({"system": name, "key": q.key, "category": CATEGORIES.get(q.category),
                        "evidence_retrieved": [e for e in q.evidence if e in found],
                        "evidence_missing": [e for e in q.evidence if e not in found],
                        "gold_tokens_missing": sorted(set(content_tokens(q.answer)) - seen)})
            if len(out) >= FIRST_FAILURES:
                return out
    return out


def render_table(report: dict) -> str:
    names = [s["name"] for s in report["systems"]]
    base = report["baseline"]
    metrics = report["metrics"]
    header = ["metric"] + [n if n == base else f"{n} (Δ vs {base})" if base else n for n in names]
    lines = []
    for label, path, fmt in metric_rows(report):
        cells = [label]
        for name in names:
            value = _get(metrics[name], path)
            text = _fmt(value, fmt)
            if path == ("ingest", "noise_stored"):
                text += f"/{metrics[name]['ingest']['noise_injected']}"
            if name != base and base is not None and path[0] != "latency_ms" and "latency_ms" not in path:
                delta = _delta(value, _get(metrics[base], path))
                if delta is not None:
                    text += f" ({_signed(delta, fmt)})"
            cells.append(text)
        lines.append(cells)
    unscored = [metrics[n]["by_category"].get("adversarial", {}).get("questions", 0) for n in names]
    if any(unscored):
        lines.append(["adversarial questions (reported, unscored)"] + [str(n) for n in unscored])
    widths = [max(len(row[i]) for row in [header] + lines) for i in range(len(header))]
    out = ["  ".join(h.ljust(w) for h, w in zip(header, widths)).rstrip(),
           "  ".join("-" * w for w in widths)]
    out += ["  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip() for row in lines]
    return "\n".join(out)


def _get(values: dict, path):
    for key in path:
        if not isinstance(values, dict) or key not in values:
            return None
        values = values[key]
    return values


def _delta(value, base):
    if value is None or base is None:
        return None
    return value - base


def _fmt(value, fmt: str) -> str:
    if value is None:
        return "n/m"  # not measured
    if fmt == "int":
        return str(int(value))
    return f"{value:.{fmt[0]}f}"


def _signed(value, fmt: str) -> str:
    if fmt == "int":
        return f"{int(value):+d}"
    text = f"{value:+.{fmt[0]}f}"
    return "+" + text[1:] if float(text) == 0 else text  # no "-0.000"

"""What `gate fit` prints: the cross-validated table per level (fitted beside hand
weights on the same folds), the thresholds, the per-signal frequency table, the
lexicon, and the drop windows the new weights would flag. As text, JSON or markdown."""

from __future__ import annotations

import json

from gate.fit.crossval import REPORTED

_SHORT = {"extract_recall": "recall", "flag_precision": "precision", "type_accuracy": "type acc",
          "hard_drop_recall": "drop kept", "exclude_suppressed_early": "excl held"}


def render(report: dict, fmt: str) -> str:
    if fmt == "json":
        return json.dumps(report, indent=2, sort_keys=False, ensure_ascii=False) + "\n"
    return (_markdown if fmt == "markdown" else _text)(report)


def _cell(cell: dict, name: str) -> str:
    return f"{_num(cell['fitted'][name])} / {_num(cell['hand'][name])}"


def _num(value) -> str:
    return "-" if value is None else f"{value:.3f}"


def _cv_rows(report):
    for level, by_subset in report["cv"].items():
        for subset, cell in by_subset.items():
            yield level, subset, cell


def _text(report: dict) -> str:
    f = report["fitted"]
    lines = ["gate fit", f"  FROM {report['rules']}  policy {report['from_policy']}",
             f"  NEW  revision {report['revision']}  (self-check policy {report['self_check']['policy']})",
             f"  fixtures {f['fixtures']['digest']}: {f['fixtures']['windows']} windows in {f['fixtures']['files']} "
             f"files, {f['fixtures']['training_windows']} reach the signals (training windows)",
             f"  {f['folds']} folds over {f['groups']} groups (source file, near-duplicate cluster), seed {f['seed']}, "
             f"l2 {f['regularization']['l2']:g}"
             + "".join(f", {k.replace('_', ' ')} {f['regularization'][k]:g}" for k in ("type_l2", "type_prior")
                       if k in f["regularization"])
             + (f", recall-only knowledge weighted {f['recall_weight']:g}" if "recall_weight" in f else "")
             + (f", recall-only rest weighted {f['rest_weight']:g}" if "rest_weight" in f else "")
             + (f", lexicon {f['lexicon']['terms']} terms" if "lexicon" in f else ""), "",
             "cross-validated, fitted / hand weights on the same windows (no row scored by weights fitted on it)"]
    header = ["level", "set", "windows"] + [_SHORT[n] for n in REPORTED]
    body = [[lv, subset, str(cell["windows"])] + [_cell(cell, n) for n in REPORTED] for lv, subset, cell in _cv_rows(report)]
    lines += _table(header, body)
    if "spread" in report:
        lines += ["", f"spread over fold seeds {_seeds(report)} (fitted weights, lowest..highest)"]
        lines += _table(["level", "set"] + [_SHORT[n] for n in REPORTED], list(_spread_rows(report)))
    lines += ["", "thresholds (operating point -> fitted threshold, hand threshold; per-fold range)"]
    for level, t in report["thresholds"].items():
        point = ", ".join(f"{k} {v:g}" for k, v in report["points"][level].items())
        folds = t["folds"]
        span = f"{min(folds):g}..{max(folds):g}" if folds else "-"
        lines.append(f"  {level:<13} {point:<26} {t['fitted']:g}  (hand {t['hand']:g}; folds {span})")
    lines += ["", "signals on the training windows (fired on extract / rest), hand -> fitted weights"]
    body = [[s["signal"], str(s["extract"]), str(s["rest"]), _weights(s["hand"]),
             ("fixed" if s["fixed"] else _weights(s["fitted"])) + (f" ({s['sign']})" if s["sign"] else "")]
            for s in report["signals"]]
    lines += _table(["signal", "extract", "rest", "hand", "fitted"], body)
    if report["lexicon"]:
        lines += ["", f"lexicon: {len(report['lexicon'])} terms; the heaviest"]
        heaviest = sorted(report["lexicon"], key=lambda t: -max(abs(v) for v in t["weights"].values()))[:15]
        lines += [f"  {t['term']:<22} {_weights(t['weights'])}" for t in heaviest]
    lines += [""]
    for level, ids in report["drop_windows_flagged"].items():
        lines.append(f"drop windows the new weights would flag at {level}: {len(ids)}"
                     + (": " + ", ".join(ids) if ids else ""))
    differ = report["self_check"]["differ"]
    lines.append(f"self-check: the written file, loaded by the unchanged interpreter, decides "
                 f"{report['self_check']['decisions'] - len(differ)} of {report['self_check']['decisions']} "
                 f"window-levels as the fit computed" + ("" if not differ else f"; DIFFERS on {len(differ)}"))
    return "\n".join(lines) + "\n"


def _markdown(report: dict) -> str:
    header = ["level", "set", "windows"] + [f"{n} (fitted / hand)" for n in REPORTED]
    lines = [f"**gate fit** `{report['rules']}` -> `{report['revision']}`: cross-validated, "
             f"{report['fitted']['folds']} grouped folds, fitted / hand weights on the same windows", "",
             "| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for lv, subset, cell in _cv_rows(report):
        lines.append(f"| {lv} | {subset} | {cell['windows']} | " + " | ".join(_cell(cell, n) for n in REPORTED) + " |")
    if "spread" in report:
        lines += ["", f"Spread over fold seeds {_seeds(report)} (fitted weights, lowest..highest):", "",
                  "| level | set | " + " | ".join(REPORTED) + " |", "|" + "---|" * (2 + len(REPORTED))]
        lines += ["| " + " | ".join(row) + " |" for row in _spread_rows(report)]
    lines += ["", "| level | operating point | fitted threshold | hand threshold |", "|---|---|---|---|"]
    for level, t in report["thresholds"].items():
        point = ", ".join(f"{k} {v:g}" for k, v in report["points"][level].items())
        lines.append(f"| {level} | {point} | {t['fitted']:g} | {t['hand']:g} |")
    return "\n".join(lines) + "\n"


def _seeds(report) -> str:
    return ", ".join(str(seed) for seed in report["spread"]["seeds"])


def _spread_rows(report):
    for level, by_subset in report["spread"]["cv"].items():
        for subset, ranges in by_subset.items():
            yield [level, subset] + ["-" if ranges[n] is None else f"{ranges[n][0]:.3f}..{ranges[n][1]:.3f}"
                                     for n in REPORTED]


def _weights(weights: dict) -> str:
    return " ".join(f"{k[:4]}{v:+g}" for k, v in weights.items()) or "0"


def _table(header, body) -> list[str]:
    widths = [max(len(str(r[i])) for r in [header] + body) for i in range(len(header))]
    fmt = "  ".join("{:<%d}" % w for w in widths)
    return ["  " + fmt.format(*header).rstrip()] + ["  " + fmt.format(*r).rstrip() for r in body]

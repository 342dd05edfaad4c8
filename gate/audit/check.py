"""`gate audit --check`: the store's near-duplicate and noise shares against the revision's ceilings.

The ceilings are the revision's `thresholds.audit_max_near_duplicate_share` and
`thresholds.audit_max_noise_share`. There is no default: a revision without one cannot check
the store, and says which key is missing (a scheduled audit that quietly checks nothing must
not pass), and neither does an audit that read no memory at all.
"""

from __future__ import annotations

CEILINGS = (
    ("audit_max_near_duplicate_share", ("near_duplicates", "share"), "near-duplicate share"),
    ("audit_max_noise_share", ("noise", "share"), "noise share"),
)
_EPSILON = 1e-12


def check(report: dict, thresholds: dict, rules_path: str) -> dict:
    """{"passed", "failures": [line], "missing": [line], "ceilings": {key: value}}."""
    failures, missing, ceilings = [], [], {}
    for key, (section, field), label in CEILINGS:
        ceiling = thresholds.get(key)
        if ceiling is None:
            missing.append(f"{rules_path}: thresholds.{key} is not set; --check needs it "
                           f"(the ceiling on the store's {label}, e.g. {key}: 0.10)")
            continue
        ceiling = float(ceiling)
        ceilings[key] = ceiling
        value = report[section][field]
        if value > ceiling + _EPSILON:
            part = report[section]["memories"]
            failures.append(f"{label} {value:.1%} ({part:,} of {report['memories']:,} memories) "
                            f"is above the ceiling {ceiling:.1%} ({key})")
    if not report["memories"] and not missing:
        # a scheduled audit of a wrong scope reads nothing; that must not read as a clean store
        failures.append("no memories were read: nothing to check (an empty export, or a scope that holds none)")
    return {"passed": not failures and not missing, "failures": failures, "missing": missing,
            "ceilings": ceilings}

"""The live evaluation: replay fixtures against a (scratch) Mem0 project and score what it stored.

`run_live` is what `gate eval --live` calls; `run_rescore` and `run_apply` back `gate rescore`
and `gate apply`. Scoring is pure (`gate.live.scoring`), so a saved report can be re-scored
with another revision's noise markers and thresholds without any network.
"""


def run_live(*args, **kwargs) -> int:
    from gate.live.runner import run_live as _run_live

    return _run_live(*args, **kwargs)


def run_rescore(*args, **kwargs) -> int:
    from gate.live.rescore import run_rescore as _run_rescore

    return _run_rescore(*args, **kwargs)


def run_apply(*args, **kwargs) -> int:
    from gate.live.apply import run_apply as _run_apply

    return _run_apply(*args, **kwargs)

"""The `gate` command: a click group and one module per command family.

Each command module is a thin layer over the packages below (parse arguments, call one function,
print) and imports its heavy machinery inside the command body, so `gate classify` starts fast.
Nothing below gate.cli imports it.
"""

from __future__ import annotations

import click


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="gate")
def main() -> None:
    """gate: the write gate for coding-assistant memory, with rules as data."""


def _register() -> None:
    from gate.cli import audit, bench, capture, classify, evaluation, fit, init, live, replay, rules

    commands = [
        rules.lint, classify.classify, rules.hash_, rules.policy,
        evaluation.eval_, evaluation.diff, evaluation.fixtures,
        live.emulator, live.apply, live.rescore,
        audit.audit,
        bench.bench, bench.bench_replay,
        fit.fit,
        replay.replay,
        init.init,
        capture.hook, capture.flush, capture.spool,
    ]
    for command in commands:
        main.add_command(command)


_register()

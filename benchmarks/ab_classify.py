"""Two rules revisions, the same windows, interleaved: what one costs beside the other.

`python benchmarks/ab_classify.py rules/v2.4.yaml rules/v2.5.yaml` prints, per round, each
revision's classify throughput on the same fresh windows (benchmarks/speed.py's corpus) in
wall-clock and CPU time, and the cold start of `gate classify` for each, alternating A and B.

speed.py measures one revision at a time; on a shared machine its figures move by more than a
10% budget between runs. Interleaving A and B on identical windows, and reading CPU time beside
wall time, leaves the difference between the two revisions and little of the machine's load.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import statistics
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from corpus import corpus  # noqa: E402  (benchmarks/ is not a package)
from speed import gate_command, run_timed  # noqa: E402


def throughput(classifier, windows, level) -> tuple[float, float]:
    """(windows per wall second, windows per CPU second)."""
    wall, cpu = time.perf_counter(), time.process_time()
    for window in windows:
        classifier.classify(window, level)
    return len(windows) / (time.perf_counter() - wall), len(windows) / (time.process_time() - cpu)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("a")
    parser.add_argument("b")
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument("--windows", type=int, default=3000, help="typical windows per round")
    parser.add_argument("--cold", type=int, default=15, help="cold starts of each, alternating")
    parser.add_argument("--seed", type=int, default=5)
    args = parser.parse_args(argv)
    from gate.engine.cache import load_classifier

    try:  # one core, as speed.py
        os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[-1]})
    except (AttributeError, OSError):
        pass
    revisions = {name: load_classifier(name, use_cache=False) for name in (args.a, args.b)}
    warm, _ = corpus(args.windows, 0, seed=args.seed)
    for classifier in revisions.values():  # pattern sets built, DFAs warmed on other windows
        for window in warm:
            classifier.classify(window)
    rows = {name: [] for name in revisions}
    for round_ in range(args.rounds):
        windows, _ = corpus(args.windows, 0, seed=args.seed + 1000 * (round_ + 1))
        gc.collect()
        gc.freeze()
        order = list(revisions) if round_ % 2 == 0 else list(reversed(revisions))
        for name in order:
            rows[name].append(throughput(revisions[name], windows, revisions[name].default_level))
        print(f"round {round_ + 1}: " + "  ".join(f"{name} {rows[name][-1][0]:,.0f}/s wall {rows[name][-1][1]:,.0f}/s cpu"
                                                   for name in revisions), flush=True)
    cold = {name: [] for name in revisions}
    with tempfile.TemporaryDirectory(prefix="gate-ab-") as tmp:
        env = dict(os.environ, GATE_CACHE_DIR=os.path.join(tmp, "cache"))
        window = os.path.join(tmp, "one.json")
        with open(window, "w", encoding="utf-8") as handle:
            json.dump([{"role": "user", "content": "From now on, run the linter before you show me a diff, "
                                                   "because CI rejects unformatted code."}], handle)
        argvs = {name: gate_command() + ["classify", "--rules", os.path.abspath(name), window] for name in revisions}
        for argv in argvs.values():
            run_timed(argv, env=env)  # fills the compiled-revision cache, as a session's first call does
        for _ in range(args.cold):
            for name, argv in argvs.items():
                cold[name].append(run_timed(argv, env=env)[0] * 1e3)
    print()
    base = args.a
    for name in revisions:
        wall = statistics.median(r[0] for r in rows[name])
        cpu = statistics.median(r[1] for r in rows[name])
        ratio = cpu / statistics.median(r[1] for r in rows[base])
        print(f"{name}: classify {wall:,.0f}/s wall, {cpu:,.0f}/s cpu (median of {args.rounds}; "
              f"cpu {ratio:.3f}x of {base}); cold start median {statistics.median(cold[name]):.0f} ms, "
              f"min {min(cold[name]):.0f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""How fast is the gate? `python benchmarks/speed.py [--quick]`.

Prints a table and writes benchmarks/last_speed.json. Figures:
- classify in one process (pinned to one core): windows/s over a seeded corpus of
  typical windows, and per-window latency p50 / p99 / max, at each level; the
  same over a tail of large pastes (4 KB to 50 KB), and over typical windows made
  not plain ASCII (accented words, CJK, no-break spaces). Every run judges windows
  the classifier has not seen, after a warm-up on others: its steady state;
- cold start of `gate classify` on one window: process start to decision, median;
- `gate classify` over a 200,000-window JSON Lines file: windows/s and peak memory,
  with --jobs 1 and --jobs 2 (and peak memory at a tenth of the size, to show it
  does not grow with the input);
- `gate eval` on 100,000 generated fixtures, all different; `gate lint` on a revision.

Each figure is the median of --repeat runs: the machine may be shared.
Speed is measured here, never asserted in a timed test.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import platform
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)

from corpus import corpus, not_plain_window  # noqa: E402  (benchmarks/ is not a package)


def machine() -> dict:
    model = "unknown"
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as handle:
            for line in handle:
                if line.startswith("model name"):
                    model = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return {"nproc": os.cpu_count(), "cpu": model, "python": platform.python_version(),
            "platform": platform.platform(), "load_average": list(os.getloadavg())}


def newest_rules() -> str:
    """The highest-versioned rules file (v2.10 after v2.9), as `gate` picks it."""
    from gate.cli.common import newest_rules as gates_pick

    return gates_pick(os.path.join(ROOT, "rules"))


def gate_command() -> list[str]:
    """The console script an editor hook runs (the real one, not a version-manager shim)."""
    beside = os.path.join(os.path.dirname(sys.executable), "gate")
    if os.path.exists(beside):
        return [beside]
    found = shutil.which("gate")
    return [found] if found else [sys.executable, "-c", "from gate.cli import main; main()"]


# -- classify in one process ------------------------------------------------------

def _percentile(sorted_values, q):
    if not sorted_values:
        return 0.0
    index = min(len(sorted_values) - 1, int(round(q * (len(sorted_values) - 1))))
    return sorted_values[index]


def time_windows(classify, windows, level) -> dict:
    clock = time.perf_counter_ns
    latencies = []
    started = clock()
    for window in windows:
        t0 = clock()
        classify(window, level)
        latencies.append(clock() - t0)
    total = (clock() - started) / 1e9
    latencies.sort()
    return {"windows_per_s": len(windows) / total, "p50_us": _percentile(latencies, 0.5) / 1e3,
            "p99_us": _percentile(latencies, 0.99) / 1e3, "max_ms": latencies[-1] / 1e6}


def _median_runs(runs: list[dict]) -> dict:
    out = {k: statistics.median(r[k] for r in runs) for k in runs[0]}
    out["max_ms_worst"] = max(r["max_ms"] for r in runs)
    return out


class FreshWindows:
    """Windows the classifier has not judged before, seeded: run k of a figure gets
    corpus(seed + k). A window judged twice would flatter the figure: the RE2 sets
    build their DFA states on first sight of a text, as a long stream does."""

    def __init__(self, n_typical: int, n_large: int, seed: int):
        self.n_typical, self.n_large, self.seed, self.runs = n_typical, n_large, seed, 0

    def next(self) -> tuple[list, list]:
        self.runs += 1
        windows = corpus(self.n_typical, self.n_large, seed=self.seed + 1000 * self.runs)
        _out_of_collector_reach()
        return windows


def _out_of_collector_reach() -> None:
    """Move what the benchmark holds (its corpora: hundreds of thousands of objects) out of
    the cycle collector's reach. Otherwise a full collection, triggered by the classifier's
    allocations, walks them all inside one timed window: 13-34 ms that a hook or a stream,
    whose heap is small, never pays. The classifier's own garbage is still collected."""
    gc.collect()
    gc.freeze()


def bench_classify(rules, fresh: FreshWindows, repeat) -> dict:
    from gate.engine.cache import load_classifier

    try:  # one core: the figure is per core, and the other core is someone else's
        os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[-1]})
    except (AttributeError, OSError):
        pass
    classifier = load_classifier(rules, use_cache=False)
    # Steady state, as a long stream reaches it: the sets built, their DFAs warmed on other windows.
    warm_typical, warm_large = fresh.next()
    rng = random.Random(fresh.seed)
    for window in warm_typical + warm_large + [not_plain_window(w, rng) for w in warm_typical]:
        classifier.classify(window)
    out = {}
    for level in classifier.levels:
        typical_runs, large_runs = [], []
        for _ in range(repeat):
            typical, large = fresh.next()
            typical_runs.append(time_windows(classifier.classify, typical, level))
            large_runs.append(time_windows(classifier.classify, large, level))
        out[level] = {"typical": _median_runs(typical_runs), "large": _median_runs(large_runs)}
    # Windows with accented letters, CJK, no-break spaces...: the sets' wide forms.
    level = classifier.default_level
    runs = []
    for _ in range(repeat):
        typical, _ = fresh.next()
        not_plain = [not_plain_window(w, rng) for w in typical]
        _out_of_collector_reach()
        runs.append(time_windows(classifier.classify, not_plain, level))
    out["not_plain"] = {"level": level, "typical": _median_runs(runs)}
    try:
        os.sched_setaffinity(0, set(range(os.cpu_count() or 1)))
    except (AttributeError, OSError):
        pass
    return out


# -- the command line -------------------------------------------------------------------

# Runs a command and reports (seconds, exit code, peak RSS in KB) of it alone. A child
# forked from this process would count this process's own memory (by now hundreds of MB
# of corpus) in its peak RSS: Linux carries the high-water mark across fork and exec.
# So a small fresh interpreter starts the command and measures it.
_LAUNCHER = """
import os, subprocess, sys, time
out, argv = sys.argv[1], sys.argv[2:]
started = time.perf_counter()
proc = subprocess.Popen(argv, stdin=sys.stdin, stdout=subprocess.DEVNULL, stderr=sys.stderr)
_, status, usage = os.wait4(proc.pid, 0)
elapsed = time.perf_counter() - started
with open(out, "w") as handle:
    handle.write(f"{elapsed} {os.waitstatus_to_exitcode(status)} {usage.ru_maxrss}")
"""


def run_timed(argv, *, stdin_path=None, env=None) -> tuple[float, int, int]:
    """(wall seconds, exit code, peak RSS in KB of the process and its reaped children)."""
    stdin = open(stdin_path, "rb") if stdin_path else subprocess.DEVNULL
    fd, out = tempfile.mkstemp(suffix=".timed")
    os.close(fd)
    try:
        proc = subprocess.run([sys.executable, "-c", _LAUNCHER, out, *argv], stdin=stdin, stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE, env=env, cwd=ROOT)
        with open(out, encoding="utf-8") as handle:
            elapsed, code, rss = handle.read().split()
        if int(code) not in (0, 1) and proc.stderr:
            print(proc.stderr.decode("utf-8", "replace")[-2000:], file=sys.stderr)
    finally:
        if stdin_path:
            stdin.close()
        os.unlink(out)
    return float(elapsed), int(code), int(rss)


def bench_cold_start(rules, runs, env) -> dict:
    window = os.path.join(env["GATE_BENCH_TMP"], "one.json")
    with open(window, "w", encoding="utf-8") as handle:
        json.dump([{"role": "user", "content": "From now on, run the linter before you show me a diff, "
                                               "because CI rejects unformatted code."}], handle)
    gate = gate_command()
    argv = gate + ["classify", "--rules", rules, window]
    run_timed(argv, env=env)  # fills the compiled-revision cache, as the first call of a session does
    times = [run_timed(argv, env=env)[0] for _ in range(runs)]
    bare = [run_timed([sys.executable, "-c", "pass"], env=env)[0] for _ in range(max(5, runs // 2))]
    return {"median_ms": statistics.median(times) * 1e3, "min_ms": min(times) * 1e3,
            "python_startup_ms": statistics.median(bare) * 1e3, "runs": runs, "command": " ".join(gate)}


def write_jsonl(path, windows, count) -> int:
    with open(path, "w", encoding="utf-8") as handle:
        for i in range(count):
            handle.write(json.dumps(windows[i % len(windows)], ensure_ascii=False))
            handle.write("\n")
    return os.path.getsize(path)


def _supports_jobs(env) -> bool:
    probe = subprocess.run(gate_command() + ["classify", "--help"], capture_output=True, env=env)
    return b"--jobs" in probe.stdout


def bench_stream(rules, windows, count, repeat, env) -> dict:
    tmp = env["GATE_BENCH_TMP"]
    big, small = os.path.join(tmp, "big.jsonl"), os.path.join(tmp, "small.jsonl")
    size = write_jsonl(big, windows, count)
    write_jsonl(small, windows, max(1, count // 10))
    gate = gate_command()
    out = {"windows": count, "mbytes": round(size / 1e6, 1)}
    for jobs in (1, 2):
        if jobs > 1 and not _supports_jobs(env):
            out[f"jobs{jobs}"] = None
            continue
        extra = ["--jobs", str(jobs)] if jobs > 1 else []
        runs = [run_timed(gate + ["classify", "--rules", rules, *extra, big], env=env) for _ in range(repeat)]
        small_runs = [run_timed(gate + ["classify", "--rules", rules, *extra, small], env=env) for _ in range(repeat)]
        wall = statistics.median(r[0] for r in runs)
        out[f"jobs{jobs}"] = {"windows_per_s": count / wall, "seconds": wall,
                              "peak_rss_mb": statistics.median(r[2] for r in runs) / 1024,
                              "peak_rss_mb_tenth_input": statistics.median(r[2] for r in small_runs) / 1024,
                              "exit_codes": sorted({r[1] for r in runs})}
    return out


def write_fixtures(folder, windows, count, per_file=10_000) -> None:
    """`count` fixtures in YAML files of `per_file`, labels cycled (what eval scores is not the point here)."""
    import yaml

    dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
    labels = (("extract", "preference"), ("drop", None), ("exclude", None), ("extract", "insight"))
    os.makedirs(folder, exist_ok=True)
    for start in range(0, count, per_file):
        entries = []
        for i in range(start, min(count, start + per_file)):
            label, kind = labels[i % len(labels)]
            entries.append({"id": f"gen-{i:06d}", "window": windows[i % len(windows)], "label": label,
                            "expect_type": kind, "note": "generated for the speed benchmark"})
        with open(os.path.join(folder, f"gen-{start // per_file:03d}.yaml"), "w", encoding="utf-8") as handle:
            yaml.dump(entries, handle, Dumper=dumper, allow_unicode=True, sort_keys=False, width=100_000)


def bench_eval(rules, windows, count, repeat, env) -> dict:
    """Parsing every fixture file (--no-cache: a first run, or CI), and again with the
    files parsed before read back from the cache (a rerun after a rules edit)."""
    folder = os.path.join(env["GATE_BENCH_TMP"], "fixtures")
    write_fixtures(folder, windows, count)
    report = os.path.join(env["GATE_BENCH_TMP"], "report.json")
    argv = gate_command() + ["eval", "--rules", rules, "--fixtures", folder, "--report", report]
    out = {"fixtures": count}
    for name, extra in (("parsed", ["--no-cache"]), ("cached", [])):
        if name == "cached":
            run_timed(argv, env=env)  # fills the cache
        runs = [run_timed(argv + extra, env=env) for _ in range(repeat)]
        out[name] = {"seconds": statistics.median(r[0] for r in runs),
                     "peak_rss_mb": statistics.median(r[2] for r in runs) / 1024,
                     "exit_codes": sorted({r[1] for r in runs})}
    return out


def bench_lint(rules, repeat, env) -> dict:
    runs = [run_timed(gate_command() + ["lint", rules], env=env) for _ in range(repeat)]
    return {"seconds": statistics.median(r[0] for r in runs), "exit_codes": sorted({r[1] for r in runs})}


# -- report -------------------------------------------------------------------------------

def table(result) -> str:
    rows = []
    m = result["machine"]
    rows.append(f"machine: {m['nproc']} cores, {m['cpu']}, Python {m['python']}, "
                f"load {m['load_average'][0]:.2f} at start")
    rows.append(f"corpus: {result['corpus']['typical']} typical windows (mean {result['corpus']['typical_mean_bytes']} B), "
                f"{result['corpus']['large']} large pastes (mean {result['corpus']['large_mean_bytes']} B) a run, "
                f"new ones each run, seed {result['corpus']['seed']}; medians of {result['repeat']} runs")
    rows.append(f"files for eval and the stream: {result['corpus'].get('distinct_for_files', 0):,} different windows")
    rows.append("")
    rows.append(f"{'figure':<52} {'value':>14}  target")
    rows.append("-" * 80)
    for level, parts in result.get("classify", {}).items():
        if level == "not_plain":
            t = parts["typical"]
            rows.append(f"{'classify ' + parts['level'] + ': typical, not plain ASCII /s':<52} "
                        f"{t['windows_per_s']:>14,.0f}")
            rows.append(f"{'  latency p50 / p99 (µs)':<52} {t['p50_us']:>6.0f} / {t['p99_us']:<6.0f}")
            continue
        t, g = parts["typical"], parts["large"]
        rows.append(f"{'classify ' + level + ': typical windows/s':<52} {t['windows_per_s']:>14,.0f}  >= 40,000")
        rows.append(f"{'  latency p50 / p99 (µs)':<52} {t['p50_us']:>6.0f} / {t['p99_us']:<6.0f}  p99 < 150")
        rows.append(f"{'  typical max (ms)':<52} {t['max_ms_worst']:>14.2f}")
        rows.append(f"{'  large pastes: windows/s, p99 (ms), max (ms)':<52} "
                    f"{g['windows_per_s']:>6,.0f} {g['p99_us'] / 1e3:>5.1f} {g['max_ms_worst']:>5.1f}  max < 50")
    if "cold_start" in result:
        c = result["cold_start"]
        rows.append(f"{'gate classify cold start, median (ms)':<52} {c['median_ms']:>14.0f}  < 120")
        rows.append(f"{'  (bare python -c pass on this machine, ms)':<52} {c['python_startup_ms']:>14.0f}")
    if "stream" in result:
        s = result["stream"]
        for jobs in ("jobs1", "jobs2"):
            r = s.get(jobs)
            if r is None:
                rows.append(f"{'gate classify ' + str(s['windows']) + ' lines, --' + jobs[:-1] + ' ' + jobs[-1]:<52} {'n/a':>14}")
                continue
            rows.append(f"{'gate classify ' + format(s['windows'], ',') + ' lines --jobs ' + jobs[-1] + ': windows/s':<52} "
                        f"{r['windows_per_s']:>14,.0f}")
            rows.append(f"{'  peak RSS MB (full / a tenth of the input)':<52} "
                        f"{r['peak_rss_mb']:>6.0f} / {r['peak_rss_mb_tenth_input']:<6.0f}  constant")
    failed = [name for name, part in (("cold start", result.get("cold_start")),
                                      ("eval", (result.get("eval") or {}).get("parsed")),
                                      ("lint", result.get("lint")), ("stream", (result.get("stream") or {}).get("jobs1")))
              if part and any(code not in (0, 1) for code in part.get("exit_codes", ()))]
    if failed:
        rows.append(f"!! exited with an error (figures not valid): {', '.join(failed)}")
    if "eval" in result:
        e = result["eval"]
        rows.append(f"{'gate eval on ' + format(e['fixtures'], ',') + ' fixtures (s)':<52} {e['parsed']['seconds']:>14.1f}  < 10")
        rows.append(f"{'  again, fixture files read from the cache (s)':<52} {e['cached']['seconds']:>14.1f}")
    if "lint" in result:
        rows.append(f"{'gate lint ' + os.path.basename(result['rules']) + ' (s)':<52} {result['lint']['seconds']:>14.1f}")
    return "\n".join(rows)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="small sizes, one run each: a smoke test")
    parser.add_argument("--rules", default=None, help="rules file (default: the newest in rules/)")
    parser.add_argument("--repeat", type=int, default=None, help="runs per figure (default 3; 1 with --quick)")
    parser.add_argument("--seed", type=int, default=5)
    parser.add_argument("--only", default="classify,cold,stream,eval,lint",
                        help="comma-separated sections to run (default: all)")
    parser.add_argument("--out", default=os.path.join(HERE, "last_speed.json"))
    args = parser.parse_args(argv)
    args.rules = os.path.abspath(args.rules or newest_rules())
    quick = args.quick
    repeat = args.repeat or (1 if quick else 3)
    sections = set(args.only.split(","))
    n_typical, n_large = (1_000, 35) if quick else (5_000, 140)
    n_distinct = 10_000 if quick else 100_000  # windows in the eval and stream files, all different
    typical, large = corpus(n_typical, n_large, seed=args.seed)
    result = {"machine": machine(), "quick": quick, "repeat": repeat, "rules": os.path.relpath(args.rules, ROOT),
              "when": time.strftime("%Y-%m-%d %H:%M:%S"),
              "corpus": {"seed": args.seed, "typical": len(typical), "large": len(large),
                         "typical_mean_bytes": round(statistics.mean(len(json.dumps(w)) for w in typical)),
                         "large_mean_bytes": round(statistics.mean(len(json.dumps(w)) for w in large)),
                         "distinct_for_files": n_distinct}}
    with tempfile.TemporaryDirectory(prefix="gate-speed-") as tmp:
        env = dict(os.environ, GATE_CACHE_DIR=os.path.join(tmp, "cache"), GATE_BENCH_TMP=tmp)
        if "classify" in sections:
            result["classify"] = bench_classify(args.rules, FreshWindows(n_typical, n_large, args.seed), repeat)
        if "cold" in sections:
            result["cold_start"] = bench_cold_start(args.rules, 5 if quick else 20, env)
        if sections & {"stream", "eval"}:
            distinct, _ = corpus(n_distinct, 0, seed=args.seed + 7)
        if "stream" in sections:
            # The tail mixed in at its natural rate: one large paste per ~200 windows.
            mixed = [w for i, w in enumerate(distinct)
                     for w in ([w, large[i // 200 % len(large)]] if i % 200 == 199 else [w])]
            result["stream"] = bench_stream(args.rules, mixed, 20_000 if quick else 200_000, repeat, env)
        if "eval" in sections:
            result["eval"] = bench_eval(args.rules, distinct, n_distinct, repeat, env)
        if "lint" in sections:
            result["lint"] = bench_lint(args.rules, repeat, env)
    print(table(result))
    with open(args.out, "w", encoding="utf-8") as handle:
        json.dump(result, handle, indent=2)
        handle.write("\n")
    print(f"\nwritten: {os.path.relpath(args.out)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

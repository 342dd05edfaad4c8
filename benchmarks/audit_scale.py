"""How fast `gate audit` reads a large store, and in how much memory.

Generates N memories (default 1,000,000) as a JSON Lines export: about a fifth heartbeat frames in
several forms (the share the v1 corpus had), session-status lines, facts restated with changed
numbers, and distinct facts built from word lists (so most shapes are unique, the hard case for
memory), across three policies and 90 days. Then runs `gate audit EXPORT --format json` as a child
process and prints the wall time and the peak resident memory of the audit's whole process
tree (the main process and its workers, sampled every 50 ms from /proc), beside the machine's
core count. The main process's own CPU is printed apart: the workers do the reading and
judging, and the main process should stay far off the hot path.

    python benchmarks/audit_scale.py              # 1,000,000 memories
    python benchmarks/audit_scale.py --n 200000 --jobs 1
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import subprocess
import sys
import tempfile
import threading
import time

POLICIES = ("v2.2+dc2e16318735", "v2.3+4b32449fe8f7", "v2.4+000000000000")
SUBJECTS = ("the billing api", "the ingest worker", "our staging cluster", "the auth service", "the search index",
            "the mobile client", "the nightly export", "the ledger", "the admin tool", "the webhook consumer",
            "the pdf renderer", "the scheduler", "the cache layer", "the payments gateway", "the analytics job")
VERBS = ("uses", "depends on", "writes to", "reads from", "was moved to", "must not call", "retries against",
         "is deployed with", "logs through", "is tested against", "caches results from", "is rate limited by")
OBJECTS = ("postgres", "redis", "kafka", "sqs", "the feature flag service", "s3", "the vault", "grafana",
           "a sidecar proxy", "the shared volume", "the event bus", "sentry", "the job queue", "cloudflare",
           "the legacy crm", "bigquery", "the config repo", "the secrets manager", "the tax service")
REASONS = ("since the last outage", "because the old path timed out", "per the security review",
           "to keep costs down", "after the migration", "so rollbacks are scripted", "until the vendor fixes it",
           "because finance asked", "to avoid double writes", "for the audit trail", "to cut latency")
WORDS = ("alpha", "bravo", "canary", "delta", "ember", "fjord", "gamma", "harbor", "indigo", "juniper", "kestrel",
         "lumen", "meridian", "nimbus", "onyx", "polar", "quartz", "raven", "sierra", "tundra", "umber", "vesper")


def generate(path: str, n: int, seed: int = 7) -> None:
    rng = random.Random(seed)
    start = 1_790_000_000  # a fixed epoch second
    with open(path, "w", encoding="utf-8") as out:
        for i in range(n):
            when = start + int(i * 90 * 86_400 / n)
            day_policy = POLICIES[min(2, i * 3 // n)]
            roll = rng.random()
            if roll < 0.2:
                e, total = rng.randint(1, 50), 50
                form = rng.randrange(3)
                if form == 0:
                    text = f"Epoch {e}/{total} loss={rng.random():.4f} ETA {rng.randint(1, 59)}m{rng.randint(0, 59):02d}s"
                elif form == 1:
                    text = f"processed {rng.randint(1, 900)} of 900 chunks ({rng.randint(1, 99)}%) pid {rng.randint(1000, 99999)}"
                else:
                    text = f"step {rng.randint(1, 9999)}/10000 {rng.uniform(1, 90):.1f}it/s loss {rng.random():.3f}"
                mtype = rng.choice(("session_state", "insight", None))
            elif roll < 0.25:
                text = f"At {rng.randint(0, 23):02d}:{rng.randint(0, 59):02d} the {rng.choice(WORDS)} deploy was still running"
                mtype = "session_state"
            elif roll < 0.3:
                text = (f"{rng.choice(SUBJECTS).capitalize()} timeout is {rng.choice((10, 15, 30, 45, 60))} seconds "
                        "for outbound calls")
                mtype = "convention"
            else:  # a distinct fact, 60-120 characters, as the platform's extractor writes them
                text = (f"{rng.choice(SUBJECTS).capitalize()} {rng.choice(VERBS)} {rng.choice(OBJECTS)} "
                        f"{rng.choice(REASONS)} for the {rng.choice(WORDS)}-{rng.choice(WORDS)} team")
                if rng.random() < 0.3:
                    text += f" (ticket {rng.choice(WORDS).upper()}-{rng.randint(1, 9999)})"
                mtype = rng.choice(("decision", "convention", "insight", "runbook", "preference"))
            categories = [mtype] if mtype and rng.random() < 0.9 else []
            out.write(json.dumps({"id": f"m{i}", "memory": text, "user_id": "bench", "app_id": "bench-app",
                                  "metadata": {"type": mtype, "policy": day_policy},
                                  "categories": categories,
                                  "created_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(when))}) + "\n")


def tree_sample(root: int, proportional: bool = False) -> tuple[int, float, int]:
    """(resident memory in KB of `root` and all its descendants, CPU seconds `root` itself has
    used so far, and with `proportional` their proportional set size in KB), from /proc
    (Linux). Forked workers share their parent's pages, and RSS counts a shared page in every
    process that maps it; PSS divides it among them, so it is what the tree really takes."""
    children: dict = {}
    total, own_cpu = 0, 0.0
    try:
        pids = [int(p) for p in os.listdir("/proc") if p.isdigit()]
    except OSError:
        return 0, 0.0, 0
    rss = {}
    for pid in pids:
        try:
            with open(f"/proc/{pid}/stat") as f:
                parts = f.read().rsplit(")", 1)[1].split()
            children.setdefault(int(parts[1]), []).append(pid)
            rss[pid] = int(parts[21]) * (os.sysconf("SC_PAGE_SIZE") // 1024)
            if pid == root:
                own_cpu = (int(parts[11]) + int(parts[12])) / os.sysconf("SC_CLK_TCK")
        except (OSError, ValueError, IndexError):
            continue
    stack, pss = [root], 0
    while stack:
        pid = stack.pop()
        total += rss.get(pid, 0)
        if proportional:
            pss += _pss_kb(pid)
        stack.extend(children.get(pid, ()))
    return total, own_cpu, pss


def _pss_kb(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/smaps_rollup") as f:
            for line in f:
                if line.startswith("Pss:"):
                    return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        pass
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=1_000_000, help="memories to generate")
    parser.add_argument("--jobs", type=int, default=None, help="gate audit --jobs (default: its own)")
    parser.add_argument("--rules", default=None, help="rules file (default: the newest in rules/)")
    parser.add_argument("--keep", default=None, help="keep the generated export at this path")
    parser.add_argument("--skip-drop-rules", dest="extra", action="append_const", const="--skip-drop-rules",
                        default=[], help="pass --skip-drop-rules to gate audit (noise markers only)")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="gate-audit-bench-") as tmp:
        export = args.keep or os.path.join(tmp, "export.jsonl")
        t0 = time.perf_counter()
        generate(export, args.n)
        size = os.path.getsize(export)
        print(f"generated {args.n:,} memories ({size / 1e6:.0f} MB) in {time.perf_counter() - t0:.1f} s")
        cmd = [sys.executable, "-c", "from gate.cli import main; main()", "audit", export, "--format", "json", *args.extra,
               "--out", os.path.join(tmp, "report.json")]
        if args.rules:
            cmd += ["--rules", args.rules]
        if args.jobs:
            cmd += ["--jobs", str(args.jobs)]
        peak, main_cpu, peak_pss = 0, 0.0, 0
        cpu0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        done = threading.Event()

        def sample():
            nonlocal peak, main_cpu, peak_pss
            ticks = 0
            while not done.is_set():
                rss, own, pss = tree_sample(proc.pid, proportional=ticks % 5 == 0)  # PSS costs more to read
                peak, main_cpu, peak_pss = max(peak, rss), max(main_cpu, own), max(peak_pss, pss)
                ticks += 1
                done.wait(0.05)

        sampler = threading.Thread(target=sample, daemon=True)
        sampler.start()
        _, err = proc.communicate()
        elapsed = time.perf_counter() - t0
        cpu1 = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = (cpu1.ru_utime - cpu0.ru_utime) + (cpu1.ru_stime - cpu0.ru_stime)
        done.set()
        sampler.join()
        if proc.returncode != 0:
            print(err.decode(errors="replace"), file=sys.stderr)
            return proc.returncode
        report = json.load(open(os.path.join(tmp, "report.json")))
        mode = "markers only" if args.extra else "markers and drop rules"
        print(f"gate audit ({mode}, rules {report['rules']['path']}): {report['memories']:,} memories in {elapsed:.1f} s "
              f"({report['memories'] / elapsed:,.0f}/s) on {os.cpu_count()} cores; "
              f"peak RSS of the process tree {peak / 1024:.0f} MB (PSS {peak_pss / 1024:.0f} MB)")
        print(f"  CPU time of the process tree {cpu:.1f} s, of which the main process {main_cpu:.1f} s (on an idle "
              f"machine the wall time is about CPU / cores when the workers keep every core busy); "
              f"load average now {os.getloadavg()[0]:.1f}")
        print(f"  {report['distinct_shapes']:,} distinct shapes; near-duplicate share "
              f"{report['near_duplicates']['share']:.1%} in {report['near_duplicates']['clusters']:,} clusters; "
              f"noise share {report['noise']['share']:.1%}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Make examples/audit/sample-export.jsonl: a small memory store, written through gate's emulator.

Six days of one developer's sessions on one project, written through the platform API of the
emulator (`gate.platform.emulator`) and read back with get_all, as an export would be:
- days 1-3 under the policy of rules/v2.2.yaml, with no custom instructions on the project and
  a writer that also sends the training job's progress frames (the injected heartbeats);
- days 3-6 under the policy of rules/v2.3.yaml, with the revision's instructions pushed to the
  project: the heartbeats stop, but a batch counter of a form the instructions miss gets through.
Durable facts (decisions, conventions, preferences, runbooks, insights) are written throughout,
a few of them twice with a changed number, the way a fact restated in another session comes back.

Run from the repository root: `python examples/audit/make_sample_export.py` (seeded: the same
texts, days and policies each run; memory ids are the emulator's uuids).
"""

from __future__ import annotations

import json
import os
import random
import sys
from datetime import datetime, timezone

from gate.engine.cache import load_revision_cached
from gate.platform.client import PlatformClient
from gate.platform.emulator import Emulator, EmulatorConfig
from gate.platform.secret import Secret

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "sample-export.jsonl")
USER, APP = "dev-lena", "acme-billing-api"
START = datetime(2026, 11, 23, 8, 0, tzinfo=timezone.utc).timestamp()
DAY = 86_400

FACTS = [
    ("decision", "We decided to keep invoices in Postgres and drop the DynamoDB mirror because reconciling the two cost a day a month."),
    ("decision", "Billing webhooks go through the retry queue now, since Stripe resends anyway and double handling caused refunds."),
    ("decision", "The team chose Alembic over hand-written SQL migrations so rollbacks are scripted."),
    ("decision", "Feature flags live in LaunchDarkly, not in env vars, so product can flip them without a deploy."),
    ("convention", "Every migration file starts with a UTC timestamp prefix and a verb, like add_invoice_index."),
    ("convention", "Money is stored as integer cents with a currency code column, never as floats."),
    ("convention", "Public API handlers validate input with pydantic models that live next to the route."),
    ("convention", "Tests that touch the database use the tx_rollback fixture so nothing leaks between tests."),
    ("convention", "Log lines are JSON with a request_id field; plain prints fail the lint step."),
    ("preference", "Lena wants small pull requests, one concern each, with the why in the description."),
    ("preference", "Lena prefers pytest parametrize over loops inside a test."),
    ("preference", "Lena likes type hints on every public function and does not want Any in signatures."),
    ("runbook", "To replay a failed webhook, run make replay-webhook ID=<event id> against staging first."),
    ("runbook", "Rotating the Stripe key: add the new key in Vault, deploy, then revoke the old one in the dashboard."),
    ("runbook", "When the invoice PDF worker stalls, restart it with systemctl restart pdf-worker on the batch host."),
    ("insight", "The nightly reconciliation job is slow because it loads every invoice row; paging by id fixed staging."),
    ("insight", "Timezone bugs in billing periods came from naive datetimes in the proration helper."),
    ("insight", "The flaky test_refund_partial depends on dict ordering from the mock gateway."),
    ("insight", "Staging uses a separate Stripe account, so customer ids never match production."),
    ("insight", "Connection pool exhaustion happens when the PDF worker holds a session across the render."),
    ("decision", "Tax rates come from the tax service at invoice time; we stopped caching them after the VAT change."),
    ("decision", "Dunning emails moved from cron to the scheduler service so retries survive a deploy."),
    ("decision", "Refunds over 500 EUR need a second approver in the admin tool, per finance."),
    ("decision", "The ledger table is append-only; corrections are new rows with a reversal flag."),
    ("convention", "Branch names are ticket id plus a short slug, e.g. BILL-231-proration-fix."),
    ("convention", "Enum values in the API are lower snake case and never renamed once released."),
    ("convention", "Background jobs are idempotent and keyed by the event id they process."),
    ("convention", "Every endpoint returns errors as problem+json with a stable type URI."),
    ("preference", "Lena reviews in the morning; ping her before noon for anything blocking."),
    ("preference", "Lena wants commit messages in the imperative and under 72 characters in the subject."),
    ("preference", "No squash merges on release branches, Lena wants the history kept."),
    ("runbook", "Before a release, run make check-migrations to catch a migration that locks the invoices table."),
    ("runbook", "To reissue a corrupted invoice PDF, delete the blob in storage and enqueue render_invoice with the id."),
    ("runbook", "Local setup: docker compose up db redis, then make seed to load the fixture customers."),
    ("runbook", "If the ledger and Stripe disagree, run the reconcile script with --dry-run and attach its diff to the ticket."),
    ("insight", "Proration rounding differs from Stripe by one cent on 31-day months unless we round half even."),
    ("insight", "The admin export times out past 50k rows because it renders in the request; it should stream."),
    ("insight", "Customer ids from the old CRM have trailing spaces, which broke the dedupe of accounts."),
    ("insight", "Webhook signatures fail on staging whenever the ngrok tunnel rewrites the body encoding."),
    ("insight", "The PDF renderer leaks memory on fonts it cannot embed; pinning the font set stopped it."),
]
# restated later with a changed number: the same shape, so a near-duplicate pair
RESTATED = [
    ("convention", "The API request timeout is {n} seconds for every outbound call to the payment gateway."),
    ("decision", "We cap invoice line items at {n} per invoice to keep PDF rendering under a second."),
    ("runbook", "Scale the webhook consumers to {n} replicas before the monthly billing run starts."),
]
STATUS = "At {hh:02d}:{mm:02d} the {job} was still running on the batch host."
JOBS = ("invoice backfill", "nightly reconciliation", "PDF re-render", "ledger migration")
NARRATION = [
    "Let me look at the failing test first and then come back to the migration.",
    "Okay so the next thing is checking why the worker keeps restarting.",
    "I will push the branch once the linter is happy with it.",
]


def heartbeat(rng: random.Random, epoch: int, total: int) -> str:
    """One frame of the training job's progress, in one of the forms its logger prints."""
    loss, lr = rng.uniform(0.05, 1.2), rng.choice(["1e-4", "3e-4", "5e-5"])
    eta = f"{rng.randint(1, 59)}m{rng.randint(0, 59):02d}s"
    form = rng.randrange(4)
    if form == 0:
        return f"Epoch {epoch}/{total} loss={loss:.4f} ETA {eta}"
    if form == 1:
        return f"epoch {epoch}/{total} - loss: {loss:.3f} - lr {lr} - ETA {eta}"
    if form == 2:
        return f"Epoch {epoch}/{total}, step {rng.randint(100, 900)}/1000, loss={loss:.4f}, {rng.uniform(5, 40):.1f}it/s"
    return f"[{rng.randint(8, 18):02d}:{rng.randint(0, 59):02d}:{rng.randint(0, 59):02d}] epoch {epoch}/{total} loss={loss:.4f} ETA {eta}"


def batch_counter(rng: random.Random) -> str:
    """The invoice backfill's counter: a form the v2.3 instructions do not catch."""
    done = rng.randint(1, 60) * 1000
    return f"Backfill wrote {done} of 60000 invoices to the new ledger table so far"


def main() -> int:
    rng = random.Random(20261123)
    policies = {name: load_revision_cached(os.path.join("rules", f"{name}.yaml")) for name in ("v2.2", "v2.3")}
    clock = [START]
    with Emulator(EmulatorConfig(delay_ms=0, api_key="sample-key")) as emu:
        emu.store.clock = lambda: clock[0]
        client = PlatformClient(emu.url, Secret("sample-key"), max_retries=0)

        def write(text: str, policy: str, mtype: str | None, role: str = "user") -> None:
            res = client.add([{"role": role, "content": text}], user_id=USER, app_id=APP,
                             metadata={"type": mtype, "policy": policies[policy].policy, "editor": "claude-code"},
                             infer=True, allow_untyped=mtype is None)
            if not res.ok:
                raise SystemExit(f"emulator refused a write: {res.error}")
            clock[0] += rng.uniform(20, 240)

        facts = FACTS[:]
        rng.shuffle(facts)
        for day in range(6):
            clock[0] = START + day * DAY
            if day == 3:  # the new revision's instructions reach the project
                revision = policies["v2.3"]
                res = client.update_project("org_emu", "proj_default", instructions=revision.instructions)
                if not res.ok:
                    raise SystemExit(f"emulator refused the instructions: {res.error}")
            for session in range(3):
                # the rollout day: the first session still runs the old hook
                policy = "v2.2" if day < 3 or (day == 3 and session == 0) else "v2.3"
                for i in range(rng.choice([2, 3])):
                    if facts:
                        mtype, text = facts.pop()
                        write(text, policy, mtype)
                    if policy == "v2.2" and i == 0 and session != 2:
                        total = rng.choice([10, 20, 50])
                        for epoch in sorted(rng.sample(range(1, total + 1), rng.randint(2, 5))):
                            write(heartbeat(rng, epoch, total), policy, rng.choice(["insight", "session_state", None]))
                    if policy == "v2.3" and session != 1 and i == 1:
                        write(batch_counter(rng), policy, "session_state")
                write(STATUS.format(hh=rng.randint(8, 19), mm=rng.randint(0, 59), job=rng.choice(JOBS)),
                      policy, "session_state")
                if rng.random() < 0.7:
                    mtype, template = rng.choice(RESTATED)
                    write(template.format(n=rng.choice([15, 20, 30, 45, 60])), policy, mtype)
                write(rng.choice(NARRATION), policy, None)
        clock[0] = START + 7 * DAY
        res = client.get_all({"AND": [{"user_id": USER}, {"app_id": APP}]}, page_size=500)
        client.close()
    if not res.ok:
        raise SystemExit(f"emulator read failed: {res.error}")
    with open(OUT, "w", encoding="utf-8") as handle:
        for memory in sorted(res.data, key=lambda m: m["created_at"]):
            handle.write(json.dumps(memory, ensure_ascii=False) + "\n")
    print(f"wrote {len(res.data)} memories to {os.path.relpath(OUT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""The drop half from v2.4 on: every noise class is an explicit drop, and no drop
rule takes a person's prose for a phrase it shares with machine output.

Windows are generated from shapes with varied numbers, tools, tags and
phrasings (a seeded generator), so a rule that learned one fixture's text fails.
Structured person prompts in several languages are paired with pasted files of
the same words: only a file's own evidence (a path header, front matter, a file
named as pasted) may make the difference.
"""

from __future__ import annotations

import glob
import os
import random

import pytest

from enginekit import revision_spread, revision_version
from gate.engine.cache import load_classifier

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


# the newest four and a spread of the older: see enginekit.revision_spread
REVISIONS = revision_spread([p for p in glob.glob(os.path.join(ROOT, "rules", "v*.yaml")) if revision_version(p) >= (2, 4)],
                            12, newest=4)


@pytest.fixture(scope="module", params=REVISIONS, ids=os.path.basename)
def judge(request):
    return load_classifier(request.param)


def user(text):
    return [{"role": "user", "content": text}]


def assistant(text):
    return [{"role": "assistant", "content": text}]


def assert_dropped(judge, windows):
    kept = [(w[-1]["content"][:80], d.trace[-1:]) for w in windows
            for d in [judge.classify(w)] if d.action != "drop"]
    assert kept == [], kept


def assert_kept(judge, windows):
    dropped = [(w[-1]["content"][:80], d.rule) for w in windows
               for d in [judge.classify(w)] if d.action == "drop"]
    assert dropped == [], dropped


R = random.Random(12)


def pick(options):
    return R.choice(options)


# --- harness notices --------------------------------------------------------------

def harness_notices():
    paths = ["/home/ana/src/billing/api.py", "/Users/kim/work/ui/src/App.vue", "C:/code/etl/load_orders.sql",
             "/srv/repo/docs/plan.md", "/tmp/scratch/notes.txt"]
    for path in paths:
        yield user(f"<ide_opened_file>The user opened the file {path} in the IDE. "
                   "This may or may not be related to the current task.</ide_opened_file>")
        start = R.randint(1, 300)
        yield user(f"<ide_selection>The user selected the lines {start} to {start + R.randint(1, 30)} "
                   f"from {path}:\nreturn total\n</ide_selection>")
    for command in ["deploy-preview", "standup", "lint:fix", "x"]:
        yield user(f"Unknown slash command: {command}")
        yield user(f"<command-name>/{command}</command-name>\n<command-message>{command}</command-message>\n"
                   "<command-args></command-args>")
    yield user("[Request interrupted by user]")
    yield user("<local-command-stdout>Compacted conversation</local-command-stdout>")


def test_harness_notices_are_dropped(judge):
    assert_dropped(judge, list(harness_notices()))


def test_a_notice_beside_the_persons_words_keeps_the_turn(judge):
    notice = ("<ide_opened_file>The user opened the file /srv/app/settings.py in the IDE. "
              "This may or may not be related to the current task.</ide_opened_file>")
    words = "the cache TTL in this file must stay at 300 seconds, the CDN assumes it"
    for text in (f"{notice}\n{words}", f"{words}\n{notice}"):
        decision = judge.classify(user(text))
        assert decision.action != "drop" and words in decision.payload[0]["content"]


# --- tool calls and results as text markup ---------------------------------------

def markup_turns():
    commands = ["pytest -x tests/test_api.py", "npm run build", "cargo clippy -- -D warnings",
                "kubectl get pods -n payments", "terraform plan -out tf.plan"]
    for command in commands:
        tool = pick(["Bash", "shell", "run_command"])
        yield assistant(f'<tool_use name="{tool}">{{"command": "{command}"}}</tool_use>')
        yield user(f"<tool_result>\n{command.split()[0]}: {R.randint(2, 90)} passed in {R.randint(1, 59)}.{R.randint(0, 9)}s\n"
                   "</tool_result>")
        yield assistant(f"Running {command.split()[0]} now.\n<tool_use name=\"{tool}\">{{\"command\": \"{command}\"}}"
                        f"</tool_use>\n<tool_result>exit {R.randint(0, 2)}</tool_result>")
        yield assistant(f"<function_calls>\n<invoke name=\"{tool}\">\n<parameter name=\"command\">{command}"
                        "</parameter>\n</invoke>\n</function_calls>")
        yield assistant(f"<tool_call>{{\"name\": \"{tool}\", \"arguments\": {{\"cmd\": \"{command}\"}}}}</tool_call>")


def test_textual_tool_markup_is_dropped(judge):
    assert_dropped(judge, list(markup_turns()))


def test_markup_in_a_persons_sentence_or_beside_their_words_is_kept(judge):
    assert_kept(judge, [
        user("our transcript flattener writes <tool_use name=...> blocks inline, so the indexer must skip "
             "everything between <tool_use> and </tool_use>"),
        user("<tool_result>exit 1</tool_result>\nthat failure is expected on CI: the fixture database is not "
             "seeded there, so always seed it first"),
    ])


# --- one-line monitoring summaries ---------------------------------------------

def monitoring_summaries():
    for _ in range(12):
        p50, p99 = R.randint(8, 90), R.randint(120, 900)
        err, depth, cpu = round(R.uniform(0, 2), 2), R.randint(0, 40), R.randint(5, 95)
        sep = pick([" · ", ", ", " | ", "  "])
        close = pick([" — all green", " ✅", " (nominal)", " all good", ""])
        parts = [f"p50 {p50}ms", f"p99 {p99}ms", f"5xx {err}%", f"queue depth {depth}", f"cpu {cpu}%"]
        R.shuffle(parts)
        count = 3 if close == "" else R.randint(2, 3)
        yield pick([assistant, user])(sep.join(parts[:count]) + close)
        yield assistant(f"{pick(['api', 'orders', 'ingest'])}: rps={R.randint(50, 4000)} p95={p99}ms "
                        f"err_rate={err}%")


def test_monitoring_summaries_are_dropped(judge):
    assert_dropped(judge, list(monitoring_summaries()))


def test_a_person_stating_targets_or_causes_with_metrics_is_kept(judge):
    assert_kept(judge, [
        user("SLOs for checkout: p99 under 300ms, error rate under 0.1%, availability 99.9%"),
        user("p99 jumped to 900ms after the pool change because every request waits for a connection"),
        user("We cut p99 by 40% and costs by 25% by moving the workers to arm64."),
        user("All green on my side, see you at the standup"),
    ])


# --- bare ETA lines ------------------------------------------------------------

def eta_lines():
    for _ in range(6):
        minutes = R.randint(2, 95)
        yield assistant(pick([f"ETA ~{minutes} min", f"eta: {minutes}m{R.randint(0, 59)}s", f"ETA {minutes} minutes",
                              f"about {minutes} minutes left", f"~{R.randint(1, 9)}h remaining"]))
        yield user(f"{pick(['reindex', 'backfill', 'export'])} eta {R.randint(0, 23):02d}:{R.randint(0, 59):02d}")
    yield assistant("roughly twenty minutes left")
    yield assistant("ETA: a few more minutes")


def test_bare_eta_lines_are_dropped(judge):
    assert_dropped(judge, list(eta_lines()))


def test_an_eta_inside_a_sentence_is_kept(judge):
    assert_kept(judge, [
        user("the ETA the scheduler prints is wrong for jobs over an hour, it ignores the warmup epochs"),
        user("We had about ten minutes left before the race started, so we jogged to the gate."),
        user("ETA for the kitchen remodel is two weeks"),
    ])


# --- "still running, 41%" acknowledgements -----------------------------------------

def progress_acks():
    for _ in range(6):
        percent = R.randint(3, 97)
        yield assistant(pick([f"still running, {percent}%", f"Still at {percent}%, nothing to do yet.",
                              f"still going ({percent}%)", f"still indexing, {R.randint(2, 40)}/{R.randint(41, 90)}"]))
        job = pick(["build", "migration", "backfill", "test suite", "pipeline", "reindex"])
        yield user(f"{job} still {pick(['running', 'pending', 'going'])}")
        yield assistant(f"The {job} is still going. Checking back in {R.randint(20, 90)}s.")


def test_progress_acknowledgements_are_dropped(judge):
    assert_dropped(judge, list(progress_acks()))


def test_a_persons_still_working_on_is_kept(judge):
    assert_kept(judge, [
        user("Hi! Since we last spoke I am still working on the dance studio and things are looking up!"),
        user("Still working on my business, took a short trip to clear my mind a little."),
        user("I'm maybe 70% through the thesis draft, still writing the methods chapter"),
        user("Finished 4 of 6 paintings for the show, still going strong!"),
        user("I'll check back with you next week about the camping trip"),
        user("Still training for the half marathon, 8 weeks to go."),
    ])


# --- structured person prompts vs pasted files of the same words -----------------

PROMPTS = {
    "en": "## Goal\nA CLI that posts unpaid invoices to the ledger.\n\n## Requirements\n"
          "- IMPORTANT: the ledger is append-only, never update a posted entry\n- CRITICAL: amounts are integer cents\n"
          "- retries with backoff, at most 5\n- one log line per invoice\n\nPlease start with the retry helper.",
    "es": "## Contexto\nUna API de reservas en Django.\n\n## Requisitos\n- IMPORTANTE: nunca borrar reservas\n"
          "- fechas en UTC\n- precios en céntimos\n- un test por endpoint\n\nQuiero que empieces por la cancelación.",
    "de": "# Aufgabe\n\n## Ziel\nMesswerte jede Nacht als Parquet exportieren.\n\n## Anforderungen\n"
          "- WICHTIG: Rohdaten nie überschreiben\n- Zeitstempel in UTC\n- nur pyarrow\n\nBitte zuerst einen Plan.",
    "fr": "### Objectif\nUn service de notifications.\n\n### Exigences\n- jamais de données de santé\n"
          "- Redis comme file d'attente\n- un envoi par heure au plus\n\nPeux-tu proposer les modules ?",
    "zh": "## 目标\n给订单服务加导出接口。\n\n## 要求\n- 重要：导出接口只读\n- 金额一律用分\n- 时间用 UTC\n- 单次最多五万行\n\n请先写接口设计。",
    "ja": "## 目的\n勤怠アプリに休暇申請の画面を追加する。\n\n## 要件\n- 重要：承認済みの申請は削除しない\n"
          "- 保存は UTC\n- 通知は Slack のみ\n\nまず構成案を出してください。",
    "ru": "## Задача\nСинхронизация каталога с поставщиком.\n\n## Требования\n- ВАЖНО: никогда не удалять товары\n"
          "- цены в копейках\n- не чаще раза в час\n\nСначала опиши план, пожалуйста.",
    "en-labels": "Stack: Rails 7.1, Postgres 15, Sidekiq\nGoal: move nightly billing off cron onto Sidekiq\n"
                 "IMPORTANT: a billing run must never overlap another for the same account\n"
                 "CRITICAL: keep the cron entry until two runs match\nDeadline: end of the sprint\nOwner: BILL-412",
}


def as_files(prompt):
    """The same words as a repository file: a path header, front matter, or introduced by name."""
    body = "\n".join(line for line in prompt.splitlines() if line.strip())
    yield f"docs/AGENTS.md\n{body}"
    yield f"---\ndescription: team rules\nalwaysApply: true\n---\n{body}"
    yield f"here's our CLAUDE.md:\n{body}"


@pytest.mark.parametrize("language", sorted(PROMPTS))
def test_a_structured_prompt_survives_and_the_same_words_as_a_file_drop(judge, language):
    prompt = PROMPTS[language]
    decision = judge.classify(user(prompt))
    assert decision.action != "drop", (language, decision.rule)
    for pasted in as_files(prompt):
        assert abs(len(pasted) - len(prompt)) <= 60  # the same length, give or take a header
        decision = judge.classify(user(pasted))
        assert (decision.action, decision.rule) == ("drop", "repo-file-paste"), (language, pasted[:40])


def test_bare_repository_files_still_drop(judge):
    assert_dropped(judge, [
        user("## Code style\n- 2 spaces\n- single quotes\n- no semicolons\n- prefer const\n\n## Testing\n- vitest"),
        user("server:\n  port: 8080\n  host: 0.0.0.0\ndatabase:\n  url: postgres://localhost/app\n  pool: 10\n"
             "logging:\n  level: info"),
        user("which of these does the worker read?\n\nQUEUE_URL=redis://localhost:6379/2\nQUEUE_CONCURRENCY=8\n"
             "EXPORT_BUCKET=acme-exports-dev\nEXPORT_TIMEZONE=UTC"),
        user("FROM python:3.12-slim\nWORKDIR /srv\nCOPY requirements.txt .\nRUN pip install -r requirements.txt\n"
             "CMD [\"gunicorn\", \"app:app\"]"),
    ])

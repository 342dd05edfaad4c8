"""Small helpers for the engine tests: build a revision in memory or in tmp_path.

A test states only the rules it is about; `revision_doc` supplies a valid
revision around them (levels, thresholds, categories, instructions...).
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
from pathlib import Path

import yaml

from gate.engine.compiler import compile_revision
from gate.language.loader import load_revision
from gate.language.versions import version_key

DATA = Path(__file__).parent / "data"
MINI = DATA / "mini.yaml"
GATE = shutil.which("gate") or "gate"  # the console script, as an editor hook runs it

LEVELS = ["conservative", "balanced", "aggressive"]
THRESHOLDS = {"conservative": 5, "balanced": 3, "aggressive": 2}
CATEGORIES = {
    "preference": "a standing preference of the developer",
    "decision": "a decision the team made",
    "convention": "a convention of the project",
    "insight": "a root cause or a lesson",
    "runbook": "a procedure that works",
}


def drop_rule(id, when, *, scope="window", role="any", min_level="conservative", mandatory=None,
              unless=None, match=("x",), no_match=("y",)) -> dict:
    rule = {"id": id, "description": f"test rule {id}", "scope": scope, "role": role,
            "min_level": min_level, "when": when,
            "examples": {"match": list(match), "no_match": list(no_match)}}
    if mandatory is not None:
        rule["mandatory"] = mandatory
    if unless is not None:
        rule["unless"] = unless
    return rule


def signal(id, when, weights, *, role="any", min_level="conservative", unless=None,
           match=("x",), no_match=("y",)) -> dict:
    rule = {"id": id, "description": f"test signal {id}", "role": role, "min_level": min_level,
            "weights": dict(weights), "when": when,
            "examples": {"match": list(match), "no_match": list(no_match)}}
    if unless is not None:
        rule["unless"] = unless
    return rule


def match(pattern, **extra) -> dict:
    return {"match": {"pattern": pattern, **extra}}


def revision_doc(drop_rules=(), signals=(), **top) -> dict:
    doc = {
        "schema_version": 1,
        "revision": "t1",
        "description": "engine test revision",
        "levels": list(LEVELS),
        "default_level": "balanced",
        "vocabularies": {"hb_terms": {"description": "heartbeat words", "terms": ["epoch", "eta", "loss", "it/s"]}},
        "fragments": {"num": {"description": "a number", "pattern": r"\d+(?:\.\d+)?"}},
        "drop_rules": list(drop_rules),
        "signals": list(signals),
        "flag": {"thresholds": dict(THRESHOLDS)},
        "categories": dict(CATEGORIES),
        "instructions": "Store only durable facts.",
        "noise_markers": [{"id": "epoch", "description": "epoch lines", "pattern": r"\bepoch\b"}],
        "thresholds": {"hard_drop_recall": 0.95, "extract_recall": 0.8},
    }
    doc.update(top)
    return doc


def dump(doc: dict) -> str:
    return yaml.safe_dump(doc, sort_keys=False, allow_unicode=True, width=1000)


def write_rules(directory: Path, doc, name: str = "rules.yaml") -> Path:
    """Write a revision (a dict, or YAML text as is) and return its path."""
    path = Path(directory) / name
    path.write_text(doc if isinstance(doc, str) else dump(doc), encoding="utf-8")
    return path


def classifier(doc, **options):
    """A compiled classifier for a revision dict (or YAML text), without touching disk."""
    text = doc if isinstance(doc, str) else dump(doc)
    return _compiled(text, tuple(sorted(options.items())))


@functools.lru_cache(maxsize=256)
def _compiled(text: str, options: tuple):
    # Classifiers are pure, so many tests compiling the same rules may share one.
    return compile_revision(load_revision("test.yaml", text=text), **dict(options))


def user(text) -> dict:
    return {"role": "user", "content": text}


def assistant(text) -> dict:
    return {"role": "assistant", "content": text}


def contents(decision) -> list:
    """The text of every turn the decision would send."""
    return [turn["content"] for turn in decision.payload]


def run_gate(*args, stdin=None, cwd=None, env=None, timeout=60) -> subprocess.CompletedProcess:
    """Run the installed CLI as an editor hook would: a separate process, bytes in and out."""
    full_env = dict(os.environ)
    full_env.update(env or {})
    data = stdin.encode("utf-8") if isinstance(stdin, str) else stdin
    return subprocess.run([GATE, *map(str, args)], input=data, cwd=cwd,
                          env=full_env, capture_output=True, timeout=timeout)


def line_col(text: str, needle: str) -> tuple[int, int]:
    """1-based line and column of the first occurrence of `needle` in `text`."""
    offset = text.index(needle)
    line = text.count("\n", 0, offset) + 1
    column = offset - (text.rfind("\n", 0, offset) + 1) + 1
    return line, column


def distinct_condition_revisions(paths) -> list:
    """The shipped revisions whose rules read the text differently: of revisions whose drop
    rules, signal conditions, vocabularies and fragments are the same (a fitted revision and the
    hand-written one it was fitted from differ only in weights, thresholds and a lexicon), the
    newest, which also holds the lexicon. Engine tests that compare ways of evaluating conditions
    learn nothing from the twin, and each revision costs them half a minute."""
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    newest = {}
    for path in sorted(paths, key=revision_version):
        with open(path, encoding="utf-8") as handle:
            doc = yaml.load(handle, Loader=loader)
        prose = ("description", "examples", "weights", "fit")  # what a fit changes, or nothing reads
        conditions = [{k: v for k, v in rule.items() if k not in prose}
                      for rule in doc.get("drop_rules", []) + doc.get("signals", [])
                      if not (isinstance(rule.get("when"), dict) and "lexicon" in rule["when"])]
        key = repr((conditions, doc.get("vocabularies"), doc.get("fragments")))
        newest[key] = path
    return sorted(newest.values(), key=revision_version)


def engine_test_revisions(paths, most: int = 8) -> list:
    """The revisions an engine-equivalence test compiles: distinct_condition_revisions, at most
    `most` of them: the newest two, and an even spread of the older ones from the oldest. Each
    revision costs such a test seconds of compiling, whatever items it checks; with 31 distinct
    revisions the two heavy tests took half the suite's 9 minutes on two cores. The engine is
    what they test, and a spread of revisions across the language's history still meets every
    kind of condition."""
    return revision_spread(distinct_condition_revisions(paths), most)


def revision_spread(paths, most: int, newest: int = 2) -> list:
    """At most `most` of `paths`: the `newest` newest, and an even spread of the older ones from
    the oldest. A shipped revision is frozen (its policy id is its content's hash); what a test
    of all of them guards is the code that reads them, which a spread still reaches, while the
    suite's time no longer grows with every revision shipped."""
    found = sorted(paths, key=revision_version)
    if len(found) <= most:
        return found
    older, spread = found[:-newest], most - newest
    picked = {older[round(i * (len(older) - 1) / (spread - 1))] for i in range(spread)}
    return sorted(picked | set(found[-newest:]), key=revision_version)


def checked_share(rules, revisions, items) -> list:
    """What an engine-equivalence test runs `rules` on: every fifth item for the newest of
    `revisions`; the older ones split half the items between them, each from its own offset
    with a stride of twice their number (at least every twelfth). Older revisions share most of
    their patterns with the newest and with each other, so the shared patterns meet most items
    across them (a fifth from the newest, half from the older ones, some of them the same),
    and the suite's cost no longer grows with each revision shipped (every
    sixth for each of 28 older revisions took CI to 8 min 20 s on two cores; meeting two older
    revisions each, with the fixtures grown to 3,000 windows, took the suite past 10 minutes). The
    newest meets every fifth item: all of them took it 3 min of one core's time with 3,300
    fixtures, and a fresh CI run to 9 min 41 s; every second item, with 3,460 fixtures and 36
    revisions, took the suite to 8 min 30 s in place (the set test alone 93 s); every third, with
    3,687 fixtures, a fresh CI run to 8 min 5 s and the suite in place, on a slow hour, to 10 min;
    every fourth, with 4,730 fixtures, a fresh CI run to 7 min 57 s (the two tests on the newest
    96 s of one core's time)."""
    newest = max(revisions, key=revision_version)
    if os.path.samefile(rules, newest):
        return list(items)[::5]
    older = sorted((path for path in revisions if not os.path.samefile(path, newest)), key=revision_version)
    stride = max(12, 2 * len(older))
    offset = next((index for index, path in enumerate(older) if os.path.samefile(path, rules)), 0) % stride
    return list(items)[offset::stride]


def revision_version(path) -> tuple:
    """A rules file's version as numbers, to sort and compare with (2, 4): v2.10 after v2.9."""
    parts, _ = version_key(os.path.basename(path))
    return tuple(part for part in parts if isinstance(part, int))

"""A person's words are never hard-dropped: no turn of the LoCoMo conversations,
and no fixture tagged person_chat, may be dropped by a revision from v2.4 on.

LoCoMo (locomo10.json: ten long real conversations) is not shipped with the
project; the test reads it from $GATE_LOCOMO or ../shared/data/locomo10.json
and skips, saying so, when it is absent. Every turn of every session_N is one
one-turn user window, `speaker: text`, judged in process (5,882 turns).
"""

from __future__ import annotations

import glob
import json
import os
import re

import pytest
import yaml

from enginekit import revision_spread, revision_version
from gate.engine.cache import load_classifier

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LOCOMO = os.environ.get("GATE_LOCOMO") or os.path.join(ROOT, "..", "shared", "data", "locomo10.json")


REVISIONS = sorted(glob.glob(os.path.join(ROOT, "rules", "v*.yaml")), key=revision_version)
# v2.0-v2.3 predate the guarantee; of the others, the newest four and a spread of the older:
# see enginekit.revision_spread
GUARDED = revision_spread([p for p in REVISIONS if revision_version(p) >= (2, 4)], 12, newest=4)


def locomo_windows():
    """(dia_id, one-turn window) for every turn of every session of every conversation."""
    if not os.path.exists(LOCOMO):
        pytest.skip(f"LoCoMo not found at {os.path.normpath(LOCOMO)} (set GATE_LOCOMO to locomo10.json to run this)")
    with open(LOCOMO, encoding="utf-8") as handle:
        samples = json.load(handle)
    windows = []
    for sample in samples:
        conversation = sample["conversation"]
        for key, session in conversation.items():
            if re.fullmatch(r"session_\d+", key) and isinstance(session, list):
                for turn in session:
                    text = f"{turn['speaker']}: {turn['text']}"
                    windows.append((f"{sample.get('sample_id', '?')}/{turn['dia_id']}",
                                    [{"role": "user", "content": text}]))
    return windows


@pytest.fixture(scope="module")
def windows():
    return locomo_windows()


def dropped(path, windows):
    """The turns a revision drops, judged in this process (the compiled-revision cache, as a hook)."""
    classifier = load_classifier(path)
    out = []
    for where, window in windows:
        decision = classifier.classify(window)
        if decision.action == "drop":
            out.append((where, decision.rule, window[0]["content"][:100]))
    return out


def test_locomo_is_read_whole(windows):
    assert len(windows) == 5882


@pytest.mark.parametrize("path", GUARDED, ids=os.path.basename)
def test_no_locomo_turn_is_dropped(path, windows):
    drops = dropped(path, windows)
    assert drops == [], f"{len(drops)} of {len(windows)} turns dropped, e.g. {drops[:5]}"


def test_the_check_can_fail():
    # v2.3's still-running-ack took "still working on the dance studio": the same
    # harness must see that, or it proves nothing about the revisions after it.
    older = [p for p in REVISIONS if revision_version(p) == (2, 3)]
    if not older:
        pytest.skip("rules/v2.3.yaml is not shipped")
    classifier = load_classifier(older[0])
    assert any(classifier.classify(window).action == "drop" for _, window in locomo_windows())


def person_chat_fixtures():
    out = []
    for path in sorted(glob.glob(os.path.join(ROOT, "fixtures", "*.yaml"))):
        with open(path, encoding="utf-8") as handle:
            for fixture in yaml.load(handle, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader)) or ():
                if "person_chat" in (fixture.get("tags") or ()):
                    out.append(fixture)
    return out


@pytest.mark.parametrize("path", GUARDED, ids=os.path.basename)
def test_no_person_chat_fixture_is_dropped_at_any_level(path):
    fixtures = person_chat_fixtures()
    assert len(fixtures) >= 10
    classifier = load_classifier(path)
    drops = [(f["id"], level) for f in fixtures for level in classifier.levels
             if classifier.classify(f["window"], level=level).action == "drop"]
    assert drops == []

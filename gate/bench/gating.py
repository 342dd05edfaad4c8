"""What each system under comparison stores of a window.

- `no-gate`: everything, as an ungated client sends it (tool output included): the baseline.
- a revision's drop form (`v2.3`): the drop half only, noise and mandatory rules at the revision's
  default level; whatever is not dropped is sent, without the turns the rules stripped.
- a revision's full form (`v2.3/full`): only what the revision flags is sent.

A hook passes the session's recent shapes back to the classifier, so the next frame of the same
progress output is dropped; the benchmark does the same, per conversation session.
"""

from __future__ import annotations

import os
from collections import deque
from dataclasses import dataclass

RECENT_SHAPES = 8  # how many of a session's recent shapes a hook passes back

FORMS = ("drop", "full")


@dataclass(frozen=True)
class Verdict:
    stored: str  # the text that reaches the store; "" when nothing does
    action: str  # drop | skip | flag | store (no gate)
    rule: str | None  # the rule that decided a drop (or the signal that flagged)
    type: str | None = None  # the memory type, when the revision flagged the window


class NoGate:
    name = "no-gate"
    policy = None
    revision = None
    form = None

    def session(self):
        return self

    def judge(self, window) -> Verdict:
        return Verdict(stored=flat_text(window), action="store", rule=None)


class RevisionGate:
    """One revision in one form; `session()` gives a judge with its own recent shapes."""

    def __init__(self, path: str, form: str = "drop"):
        from gate.engine.cache import load_classifier

        if form not in FORMS:
            raise ValueError(f"unknown gate form {form!r}; expected one of {', '.join(FORMS)}")
        self.path = path
        self.form = form
        self.classifier = load_classifier(path)
        self.revision = self.classifier.revision
        self.policy = self.classifier.policy
        self.name = self.revision if form == "drop" else f"{self.revision}/full"

    def session(self) -> "_Session":
        return _Session(self)


class _Session:
    def __init__(self, gate: RevisionGate):
        self.gate = gate
        self.recent = deque(maxlen=RECENT_SHAPES)

    def judge(self, window) -> Verdict:
        decision = self.gate.classifier.classify(list(window), recent_shapes=tuple(self.recent))
        self.recent.append(decision.shape)
        if decision.action == "drop":
            return Verdict(stored="", action="drop", rule=decision.rule or "(empty window)")
        if self.gate.form == "full" and decision.action != "flag":
            return Verdict(stored="", action=decision.action, rule=decision.rule)
        text = "\n".join(m["content"] for m in decision.payload if m.get("content", "").strip())
        return Verdict(stored=text, action=decision.action, rule=decision.rule, type=decision.type)


def systems_for(rules_paths, *, no_gate: bool, forms=("drop",)) -> list:
    out = [NoGate()] if no_gate else []
    for path in rules_paths:
        for form in forms:
            out.append(RevisionGate(path, form))
    return out


def default_rules(rules_dir: str, count: int = 2) -> list:
    """The newest `count` revisions in rules/, oldest first (v2.10 sorts after v2.9)."""
    import re

    from gate.language.versions import version_key

    try:
        names = [n for n in os.listdir(rules_dir) if re.fullmatch(r"v\d+(\.\d+)*\.yaml", n)]
    except OSError:
        return []
    return [os.path.join(rules_dir, n) for n in sorted(names, key=version_key)[-count:]]


def flat_text(window) -> str:
    """A window as an ungated client sends it: every turn's text, tool output included."""
    parts = []
    for turn in window:
        content = turn.get("content") if isinstance(turn, dict) else turn
        if isinstance(content, str):
            parts.append(content)
        elif isinstance(content, list):
            for block in content:
                if not isinstance(block, dict):
                    continue
                value = block.get("text", block.get("content"))
                if isinstance(value, str):
                    parts.append(value)
    return "\n".join(p for p in parts if p.strip())

"""What a live run sends for each fixture: pure, no I/O.

Every `exclude` and `extract` fixture is replayed (the point is to measure the platform half on
its own, so a window the classifier would drop is still sent). The window sent is the one the
classifier would send (its payload, noise stripped) when it flags, else the fixture's window.
`metadata.type` comes from the classifier when it flags with a type, else from `expect_type`;
`stamped_by` records which, so type_match can be read honestly.
"""

from __future__ import annotations

import re
import secrets
import time
from dataclasses import dataclass, field

RUN_ID = re.compile(r"^[a-z0-9][a-z0-9-]{0,47}$")
SENT_LABELS = ("exclude", "extract")
ROLES = ("user", "assistant", "system")


def new_run_id() -> str:
    return time.strftime("%Y%m%d-%H%M%S", time.gmtime()) + "-" + secrets.token_hex(2)


def check_run_id(run_id: str) -> str | None:
    """An error message, or None when the id is fine to build user ids from."""
    if not RUN_ID.match(run_id or ""):
        return "run id must be 1-48 characters of a-z, 0-9 and '-', starting with a letter or digit"
    return None


def app_id_for(run_id: str) -> str:
    return f"eval-{run_id}"


def user_prefix_for(run_id: str) -> str:
    return f"eval-{run_id}-"


def user_id_for(run_id: str, fixture_id: str) -> str:
    return f"{user_prefix_for(run_id)}{fixture_id}"


def text_of(content) -> str:
    """A turn's content as the plain text the platform takes (blocks flattened)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for block in content:
            if isinstance(block, str):
                parts.append(block)
            elif isinstance(block, dict):
                if isinstance(block.get("text"), str):
                    parts.append(block["text"])
                elif block.get("type") == "tool_result" and isinstance(block.get("content"), (str, list)):
                    parts.append(text_of(block["content"]))
        return "\n".join(p for p in parts if p)
    return ""


def to_messages(window) -> list[dict]:
    out = []
    for turn in window or []:
        if not isinstance(turn, dict):
            continue
        text = text_of(turn.get("content"))
        if not text.strip():
            continue
        role = turn.get("role") if turn.get("role") in ROLES else "assistant"
        out.append({"role": role, "content": text})
    return out


@dataclass
class Send:
    """One fixture's planned write, and the row its outcome is recorded in."""

    fixture_id: str
    label: str
    messages: list
    metadata: dict
    user_id: str
    row: dict = field(default_factory=dict)
    sent_mono: float = 0.0  # monotonic clock at send, for --min-settle and --timeout


def plan_sends(fixtures, classifier, *, run_id: str, policy: str, level=None) -> list[Send]:
    app_id = app_id_for(run_id)
    sends = []
    for fx in fixtures:
        if fx.label not in SENT_LABELS:
            continue
        decision = None
        classifier_error = None
        try:
            decision = classifier.classify(fx.window, level=level)
        except Exception as e:  # a fixture that makes the classifier misbehave is a finding
            classifier_error = f"{type(e).__name__}: {e}"[:200]
        flagged = decision is not None and getattr(decision, "action", None) == "flag"
        if flagged and getattr(decision, "type", None):
            mtype, stamped_by = decision.type, "classifier"
        elif fx.expect_type:
            mtype, stamped_by = fx.expect_type, "fixture"
        else:
            mtype, stamped_by = None, None
        window = decision.payload if flagged and getattr(decision, "payload", None) else fx.window
        messages = to_messages(window)
        if not messages:  # the payload lost everything sendable: fall back to the fixture
            messages = to_messages(fx.window)
        user_id = user_id_for(run_id, fx.id)
        metadata = {"type": mtype, "policy": policy, "session_id": app_id, "fixture": fx.id}
        row = {
            "id": fx.id, "label": fx.label, "expect_type": fx.expect_type,
            "todo": getattr(fx, "todo", None), "tags": list(getattr(fx, "tags", ()) or ()),
            "user_id": user_id,
            "decision": None if decision is None else {
                "action": decision.action, "type": getattr(decision, "type", None),
                "rule": getattr(decision, "rule", None)},
            "classifier_error": classifier_error,
            "type_stamped": mtype, "stamped_by": stamped_by,
            "sent_from": "payload" if flagged and window is not fx.window else "fixture",
            "turns_sent": len(messages),
            "status": "not_sent", "detail": None, "event_id": None, "event_status": None,
            "sent_at": None, "concluded_after_s": None,
            "memories": [], "leaks": [],
        }
        if decision is not None and getattr(decision, "trace", None):
            row["trace"] = list(decision.trace)
        sends.append(Send(fx.id, fx.label, messages, metadata, user_id, row))
    return sends

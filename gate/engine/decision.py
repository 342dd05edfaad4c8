"""What the gate decided about one window, and why."""

from __future__ import annotations

from dataclasses import dataclass, field

ACTIONS = ("drop", "skip", "flag")


@dataclass(frozen=True)
class Decision:
    action: str  # drop: never leaves the machine; skip: not sent now; flag: send, typed
    type: str | None  # the memory type when flagged
    rule: str | None  # the rule or signal that decided; None when nothing fired
    trace: tuple  # every rule and signal that fired, with weights, in order
    payload: tuple  # the turns that would be sent, noise stripped: ({role, content}, ...)
    policy: str  # the policy id of the revision that decided
    level: str
    shape: str = ""  # the window's shape id, for the caller's recent_shapes
    scores: dict = field(default_factory=dict)  # type -> summed signal weight
    error: str | None = None  # set when a rule timed out or the input broke something

    def to_json(self) -> dict:
        out = {
            "action": self.action, "type": self.type, "rule": self.rule, "policy": self.policy,
            "level": self.level, "shape": self.shape,
            "scores": {k: round(v, 3) for k, v in self.scores.items() if v},
            "trace": list(self.trace), "payload": list(self.payload),
        }
        if self.error:
            out["error"] = self.error
        return out

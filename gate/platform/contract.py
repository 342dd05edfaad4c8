"""Request shaping that encodes the verified platform contract (shared/seeds/platform-contract.md).

Every rule here is enforced mechanically so that no caller can get it wrong:
- scope overrides travel in the body as both `project_id` and `org_id`, or not at all;
- every read sends `latest_only=True`;
- `NOT` is always a list;
- `metadata.type` is stamped on every write, and type reads match on metadata (OR categories).
Pure functions; no I/O.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from gate.platform.errors import ContractViolation

TYPES = ("preference", "decision", "convention", "insight", "runbook", "session_state")
ENTITY_KEYS = ("user_id", "app_id", "agent_id", "run_id")
PROJECT_FIELDS = ("custom_instructions", "custom_categories")
LOGIC_KEYS = ("AND", "OR", "NOT")


@dataclass(frozen=True)
class Scope:
    """A project override. Half an override is treated by the platform as none, so we refuse it."""

    project_id: str
    org_id: str

    @classmethod
    def of(cls, project_id: str | None, org_id: str | None) -> "Scope | None":
        if not project_id and not org_id:
            return None
        if not project_id or not org_id:
            raise ContractViolation(
                "a scope override needs both project_id and org_id (the platform ignores half of one)")
        return cls(project_id=project_id, org_id=org_id)

    def body(self) -> dict:
        return {"project_id": self.project_id, "org_id": self.org_id}


def normalise_filters(filters: Any) -> dict:
    """Return a copy of `filters` with every NOT as a list and AND/OR checked to be lists."""
    if not isinstance(filters, dict) or not filters:
        raise ContractViolation("filters must be a non-empty object")
    out: dict = {}
    for key, value in filters.items():
        if key in ("AND", "OR"):
            if not isinstance(value, list) or not value:
                raise ContractViolation(f"{key} takes a non-empty list of filters")
            out[key] = [normalise_filters(v) for v in value]
        elif key == "NOT":
            # the documented object shape is a 400; the list shape is what works
            items = value if isinstance(value, list) else [value]
            if not items:
                raise ContractViolation("NOT takes a non-empty list of filters")
            out[key] = [normalise_filters(v) for v in items]
        else:
            out[key] = value
    return out


def project_scope(user_id: str, app_id: str) -> dict:
    """Project-scoped records: written with user_id + app_id, read with both."""
    return {"AND": [{"user_id": user_id}, {"app_id": app_id}]}


def user_scope(user_id: str) -> dict:
    """User-scoped records; implicit null scoping does not hold, so exclude any app_id explicitly."""
    return {"AND": [{"user_id": user_id}, {"NOT": [{"app_id": "*"}]}]}


def type_filter(memory_type: str) -> dict:
    """Fresh memories match on metadata.type; older ones may match on categories too."""
    return {"OR": [{"metadata": {"type": memory_type}}, {"categories": {"in": [memory_type]}}]}


def check_metadata(metadata: Any, *, allow_untyped: bool = False) -> dict:
    if not isinstance(metadata, dict):
        raise ContractViolation("metadata must be an object carrying 'type'")
    if "type" not in metadata:
        raise ContractViolation("metadata.type must be stamped on every write")
    t = metadata["type"]
    if t is None and allow_untyped:
        return dict(metadata)
    if t not in TYPES:
        raise ContractViolation(f"metadata.type must be one of {', '.join(TYPES)} (got {t!r})")
    return dict(metadata)


def check_messages(messages: Any) -> list:
    if not isinstance(messages, list) or not messages:
        raise ContractViolation("messages must be a non-empty list of {role, content}")
    out = []
    for m in messages:
        if not isinstance(m, dict) or not isinstance(m.get("content"), str) or not isinstance(m.get("role"), str):
            raise ContractViolation("each message needs a string role and a string content")
        out.append({"role": m["role"], "content": m["content"]})
    return out


def add_body(messages, *, user_id: str | None, app_id: str | None, metadata: dict, infer: bool,
             scope: Scope | None, allow_untyped: bool = False) -> dict:
    if not user_id and not app_id:
        raise ContractViolation("a write needs user_id (and app_id for project scope)")
    body: dict = {"messages": check_messages(messages),
                  "metadata": check_metadata(metadata, allow_untyped=allow_untyped),
                  "infer": bool(infer)}
    # never run_id or agent_id: no read path filters by them
    if user_id:
        body["user_id"] = user_id
    if app_id:
        body["app_id"] = app_id
    if scope:
        body.update(scope.body())
    return body


def read_body(filters, *, scope: Scope | None, **extra) -> dict:
    body = {"filters": normalise_filters(filters), **extra, "latest_only": True}
    if scope:
        body.update(scope.body())
    return body


def delete_params(*, user_id: str | None, app_id: str | None, scope: Scope | None) -> dict:
    """DELETE /v1/memories/ takes query params; a body is a 400.

    The override ids go in the query too: DELETE has no body, so this is the only channel.
    The contract verified that query-param ids are ignored on writes and reads; it did not
    verify DELETE, which is why callers must confirm a delete through reads.
    """
    params = {k: v for k, v in (("user_id", user_id), ("app_id", app_id)) if v}
    if not params:
        raise ContractViolation("a delete needs at least one filter (user_id or app_id)")
    if scope:
        params.update(scope.body())
    return params


def project_fields_params(fields) -> list:
    """Project `fields` are repeated params (?fields=a&fields=b), never comma-joined."""
    out = []
    for f in fields:
        if not isinstance(f, str) or "," in f or not f:
            raise ContractViolation(f"bad project field {f!r}: pass one name per field")
        out.append(("fields", f))
    return out


def categories_payload(categories: dict) -> list:
    """The platform's custom_categories shape: a list of one-key objects {name: description}."""
    return [{name: desc} for name, desc in categories.items()]


def categories_from_payload(payload: Any) -> dict:
    out: dict = {}
    for item in payload or []:
        if isinstance(item, dict):
            out.update(item)
    return out

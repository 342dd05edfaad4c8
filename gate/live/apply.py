"""Push a revision's custom instructions and categories to a project, and verify by reading back."""

from __future__ import annotations

import difflib
from dataclasses import dataclass, field

from gate.platform.contract import categories_from_payload


@dataclass
class ApplyResult:
    ok: bool
    changed: bool = False
    verified: bool = False
    lines: list = field(default_factory=list)
    error: str | None = None

    def as_dict(self) -> dict:
        return {"ok": self.ok, "changed": self.changed, "verified": self.verified, "error": self.error}


def desired(rev) -> dict:
    return {"instructions": rev.instructions or "", "categories": dict(rev.categories or {})}


def read_config(client, org_id: str, project_id: str):
    """(config, error): config is {'instructions', 'categories'} as the project holds them."""
    res = client.get_project(org_id, project_id, fields=("custom_instructions", "custom_categories"))
    if not res.ok:
        return None, str(res.error)
    data = res.data if isinstance(res.data, dict) else {}
    return {"instructions": data.get("custom_instructions") or "",
            "categories": categories_from_payload(data.get("custom_categories"))}, None


def diff_lines(current: dict | None, want: dict) -> list[str]:
    """What would change, as short human lines (a unified diff for the instructions)."""
    if current is None:
        return ["(current configuration unknown)"]
    lines = []
    if current["instructions"].strip() != want["instructions"].strip():
        lines.append("custom_instructions would change:")
        lines.extend("  " + l.rstrip("\n") for l in difflib.unified_diff(
            current["instructions"].splitlines(), want["instructions"].splitlines(),
            "project", "revision", lineterm="", n=1))
    else:
        lines.append("custom_instructions: unchanged")
    cur, new = current["categories"], want["categories"]
    added = [k for k in new if k not in cur]
    removed = [k for k in cur if k not in new]
    changed = [k for k in new if k in cur and cur[k] != new[k]]
    if added or removed or changed:
        lines.append("custom_categories would change: "
                     + "; ".join(f"{label} {', '.join(keys)}" for label, keys in
                                 (("add", added), ("remove", removed), ("update", changed)) if keys))
    else:
        lines.append("custom_categories: unchanged")
    return lines


def matches(current: dict, want: dict) -> bool:
    return current["instructions"].strip() == want["instructions"].strip() and current["categories"] == want["categories"]


def apply_revision(client, rev, org_id: str, project_id: str, *, dry_run: bool = False) -> ApplyResult:
    want = desired(rev)
    current, err = read_config(client, org_id, project_id)
    if dry_run:
        lines = diff_lines(current, want)
        if err:
            lines.insert(0, f"could not read the current configuration: {err}")
        return ApplyResult(ok=err is None, changed=current is not None and not matches(current, want),
                           lines=lines, error=err)
    if current is None:  # no access, or the platform is unreachable: writing blind helps nobody
        return ApplyResult(ok=False, error=f"could not read the project's configuration: {err}")
    if matches(current, want):
        return ApplyResult(ok=True, changed=False, verified=True,
                           lines=["instructions and categories already match the revision (read back)"])
    res = client.update_project(org_id, project_id, instructions=want["instructions"],
                                categories=want["categories"])
    if not res.ok:
        return ApplyResult(ok=False, error=f"update failed: {res.error}")
    back, err = read_config(client, org_id, project_id)
    if back is None:
        return ApplyResult(ok=False, changed=True, error=f"could not read back: {err}")
    if not matches(back, want):
        return ApplyResult(ok=False, changed=True, error="read back differs from the revision",
                           lines=diff_lines(back, want))
    return ApplyResult(ok=True, changed=True, verified=True,
                       lines=[f"instructions ({len(want['instructions'])} chars) and "
                              f"{len(want['categories'])} categories applied and verified by reading back"])


def run_apply(rules_path: str, *, project_id: str | None, org_id: str | None, base_url: str,
              api_key_env: str, dry_run: bool, echo, request_timeout: float = 30.0,
              retry_backoff: float = 0.5, environ=None) -> int:
    """`gate apply`: exit 0 applied (or dry run read), 1 platform failure, 2 usage/bad input."""
    from gate.language.errors import GateError
    from gate.language.loader import load_revision
    from gate.platform.client import PlatformClient
    from gate.platform.contract import Scope
    from gate.platform.errors import ContractViolation
    from gate.platform.secret import key_from_env

    try:
        scope = Scope.of(project_id, org_id)
    except ContractViolation:
        echo("usage error: pass both --project-id and --org-id, or neither (the key's own project)")
        return 2
    try:
        rev = load_revision(rules_path)
    except GateError as e:
        echo(str(e))
        return 2
    key = key_from_env(api_key_env, environ)
    if key is None:
        echo(f"key ({api_key_env}): absent")
        want = desired(rev)
        if dry_run:
            echo(f"dry run: would push policy {rev.policy}: instructions ({len(want['instructions'])} chars), "
                 f"categories {', '.join(want['categories'])}; cannot read the current configuration without a key")
            return 0
        echo(f"usage error: set {api_key_env} to push the revision")
        return 2

    def say(line):
        echo(key.redact(str(line)))

    with PlatformClient(base_url, key, scope=scope, timeout=request_timeout, backoff=retry_backoff) as client:
        if scope is None:
            res = client.ping()
            if not res.ok:
                say(f"ping failed: {res.error}")
                return 1
            data = res.data if isinstance(res.data, dict) else {}
            org_id, project_id = data.get("org_id"), data.get("project_id")
            if not org_id or not project_id:
                say("ping did not name the key's org and project; pass --project-id and --org-id")
                return 1
            say(f"the key resolves to org {org_id} / project {project_id}")
        say(f"{'dry run: ' if dry_run else ''}policy {rev.policy} -> org {org_id} / project {project_id}")
        result = apply_revision(client, rev, org_id, project_id, dry_run=dry_run)
        for line in result.lines:
            say(line)
        if dry_run:
            say("dry run: nothing was written")
        if not result.ok:
            say(f"apply failed: {result.error}")
            return 1
    return 0

"""Preflight: sends nothing that writes. Key present?, ping, where the key resolves, where we would write."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class Preflight:
    ok: bool
    exit_code: int
    lines: list = field(default_factory=list)
    key_org: str | None = None
    key_project: str | None = None


def run_preflight(client, *, api_key_env: str, project_id: str, org_id: str,
                  allow_default_project: bool) -> Preflight:
    lines = [f"key ({api_key_env}): present"]
    res = client.ping()
    if not res.ok:
        lines.append(f"ping {client.base_url}: failed: {res.error}")
        return Preflight(False, 2 if res.status in (401, 403) else 1, lines)
    data = res.data if isinstance(res.data, dict) else {}
    key_org, key_project = data.get("org_id"), data.get("project_id")
    lines.append(f"ping {client.base_url}: ok")
    lines.append(f"the key resolves to: org {key_org} / project {key_project}")
    lines.append(f"this run would write to: org {org_id} / project {project_id}")
    if key_org and key_org != org_id:
        lines.append(f"warning: --org-id {org_id} is not the key's org; the platform may refuse the override")
    if (key_org, key_project) == (org_id, project_id) and not allow_default_project:
        lines.append("refusing: that is the key's own default project. Point --project-id/--org-id at a "
                     "scratch project, or pass --allow-default-project if this key's project is a scratch one.")
        return Preflight(False, 2, lines, key_org, key_project)
    return Preflight(True, 0, lines, key_org, key_project)

"""Delete everything a run wrote, then confirm through the API's own reads.

Deletes are soft on the platform (rows persist with is_deleted=true), so the only evidence that
a cleanup worked is a read that returns nothing. A delete answered 200 proves nothing.
"""

from __future__ import annotations

import time

from gate.live.poll import read_memories


def hint(app_id: str, user_prefix: str, project_id: str, org_id: str, n_users: int) -> str:
    return (f"to clean up by hand: delete the memories of app_id '{app_id}' for each user id starting "
            f"'{user_prefix}' ({n_users} listed in the report rows) in org {org_id} / project {project_id}; "
            f"e.g. DELETE /v1/memories/?user_id=<id>&app_id={app_id}, then confirm with a read")


def cleanup_run(client, sends, app_id: str, *, verify_for: float, echo, clock=time.monotonic,
                sleep=time.sleep) -> dict:
    sent = [s for s in sends if s.row["status"] != "not_sent"]
    users = [s.user_id for s in sent]
    delete_errors = []
    for u in users:
        res = client.delete_all(user_id=u, app_id=app_id)
        if not res.ok:
            delete_errors.append({"user_id": u, "error": str(res.error)})
    deadline = clock() + verify_for
    interval = 0.1
    while True:
        remaining, read_errors = {}, []
        for u in users:
            mems, err = read_memories(client, u, app_id)
            if err is not None:
                read_errors.append({"user_id": u, "error": str(err)})
            elif mems:
                remaining[u] = len(mems)
        if (not remaining and not read_errors) or clock() >= deadline:
            break
        sleep(min(interval, max(0.0, deadline - clock())))
        interval = min(interval * 2, 5.0)
        for u in remaining:  # something landed after the first delete: delete it too
            res = client.delete_all(user_id=u, app_id=app_id)
            if not res.ok:
                delete_errors.append({"user_id": u, "error": str(res.error)})
    # an extraction still in flight can land after we looked; say so rather than claim a clean slate
    may_land = [s.row["id"] for s in sent if s.row["status"] in ("in_flight", "timed_out")
                and s.row.get("event_status") not in ("SUCCEEDED", "FAILED")]
    verified = not remaining and not read_errors and not delete_errors
    result = {"requested": True, "performed": True, "users": len(users), "verified": verified,
              "remaining": remaining, "delete_errors": delete_errors[:20], "read_errors": read_errors[:20],
              "may_still_land": may_land}
    if verified:
        echo(f"cleanup: deleted the memories of {len(users)} user ids; reads confirm nothing is left"
             + (f" (but {len(may_land)} extraction(s) may still land)" if may_land else ""))
    else:
        left = sum(remaining.values())
        echo(f"cleanup NOT verified: {left} memories still readable for {len(remaining)} user ids, "
             f"{len(delete_errors)} delete errors, {len(read_errors)} read errors")
    return result

"""One stored memory, as the audit needs it, read from whatever the platform or an export gave.

A memory is the platform's JSON object: `memory` (the text) is required; `metadata.policy`
(the policy id of the rules revision that admitted it), `metadata.type`, `categories` and
`created_at` are read when present. Anything else is ignored, so a get_all page, an export
and the emulator's rows all read the same way.
"""

from __future__ import annotations

from datetime import datetime, timezone
from typing import NamedTuple

NO_POLICY = "(none)"
UNKNOWN_DAY = "(unknown)"


class RecordError(ValueError):
    """A memory object the audit cannot read: the message names the field and what is expected."""


class Memory(NamedTuple):  # a tuple: read once per stored memory, a million times in a large audit
    text: str
    policy: str  # NO_POLICY when the memory carries none
    type: str | None  # metadata.type
    categories: tuple  # the platform's categories (filled hours after the write, if ever)
    day: str  # YYYY-MM-DD in UTC of created_at, or UNKNOWN_DAY
    created_at: str  # as given, for first/last seen


def read_memory(obj) -> Memory:
    """A Memory from one platform memory object; RecordError names the bad field."""
    if not isinstance(obj, dict):
        raise RecordError(f"expected a memory object, got {type(obj).__name__}")
    text = obj.get("memory")
    if not isinstance(text, str):
        raise RecordError("field 'memory': expected the memory's text as a string"
                          + ("" if "memory" in obj else " (the field is missing)"))
    metadata = obj.get("metadata")
    if metadata is None:
        policy, mtype = NO_POLICY, None
    elif isinstance(metadata, dict):
        policy = metadata.get("policy")
        policy = str(policy) if policy is not None and policy != "" else NO_POLICY
        mtype = metadata.get("type")
        mtype = str(mtype) if mtype is not None and mtype != "" else None
    else:
        raise RecordError("field 'metadata': expected an object")
    categories = obj.get("categories")
    if categories is None:
        categories = ()
    elif isinstance(categories, list):
        categories = tuple(map(str, categories))
    else:
        raise RecordError("field 'categories': expected a list of names")
    created = obj.get("created_at")
    if isinstance(created, str):
        return Memory(text, policy, mtype, categories, utc_day(created), created)
    if isinstance(created, (int, float)) and not isinstance(created, bool):
        return Memory(text, policy, mtype, categories, utc_day(created), str(created))
    return Memory(text, policy, mtype, categories, UNKNOWN_DAY, "")


def utc_day(value) -> str:
    """The UTC calendar day of an ISO timestamp or epoch seconds; UNKNOWN_DAY when unreadable."""
    if value is None:
        return UNKNOWN_DAY
    if isinstance(value, (int, float)):
        try:
            return datetime.fromtimestamp(value, tz=timezone.utc).strftime("%Y-%m-%d")
        except (OverflowError, OSError, ValueError):
            return UNKNOWN_DAY
    text = value.strip()
    # the common case, a UTC timestamp, needs no parsing
    if len(text) >= 10 and text[4] == "-" and text[7] == "-" and (
            len(text) == 10 or text.endswith(("Z", "z", "+00:00")) or not _has_offset(text)):
        day = text[:10]
        return day if day[:4].isdigit() and day[5:7].isdigit() and day[8:10].isdigit() else UNKNOWN_DAY
    try:
        when = datetime.fromisoformat(text.replace("z", "Z"))
    except ValueError:
        return UNKNOWN_DAY
    if when.tzinfo is not None:
        when = when.astimezone(timezone.utc)
    return when.strftime("%Y-%m-%d")


def _has_offset(text: str) -> bool:
    """A '+hh:mm' or '-hh:mm' offset after the time of day (dates use '-' too, so look past them)."""
    tail = text[10:]
    return "+" in tail or "-" in tail

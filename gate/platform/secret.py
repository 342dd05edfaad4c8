"""An API key that cannot leak through repr, str, logging or an f-string by accident."""

from __future__ import annotations

import re
from urllib.parse import urlsplit, urlunsplit

# Mem0 keys start with 'm0-'; an Authorization value may also be echoed back by a proxy.
_TOKENISH = re.compile(r"(?i)\b(token|bearer)\s+[^\s\"',;]+|\bm0-[A-Za-z0-9_\-]{6,}")


class Secret:
    """Holds the key. Only `reveal()` gives it back, and only the client calls it."""

    __slots__ = ("_value",)

    def __init__(self, value: str):
        self._value = value

    def reveal(self) -> str:
        return self._value

    def __bool__(self) -> bool:
        return bool(self._value)

    def __repr__(self) -> str:
        return "Secret(<redacted>)"

    __str__ = __repr__

    def __format__(self, spec: str) -> str:
        return repr(self)

    def __reduce__(self):  # no pickling a key into a file by accident
        raise TypeError("a Secret cannot be pickled")

    def redact(self, text: str) -> str:
        return redact(text, self)

    def scrub(self, text: str) -> str:
        """Only the exact key: for data (memory text) that must otherwise stay as it was."""
        return text.replace(self._value, "<redacted>") if self._value and text else text


def redact(text: str, secret: Secret | None = None) -> str:
    """Remove the key (and anything shaped like an auth token) from text."""
    if not text:
        return text
    if secret is not None and secret._value:
        text = text.replace(secret._value, "<redacted>")
    return _TOKENISH.sub(lambda m: (m.group(1) + " <redacted>") if m.group(1) else "<redacted>", text)


def key_from_env(name: str, environ=None) -> Secret | None:
    """The key named by an environment variable, or None when it is absent or blank."""
    import os

    env = os.environ if environ is None else environ
    value = (env.get(name) or "").strip()
    return Secret(value) if value else None


def safe_url(url: str) -> str:
    """A base URL fit for a report: no userinfo, no query, no fragment."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return "<unparseable url>"
    host = parts.hostname or ""
    if parts.port:
        host = f"{host}:{parts.port}"
    return urlunsplit((parts.scheme, host, parts.path, "", ""))

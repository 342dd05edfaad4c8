"""Platform errors are values: a status, a kind and a short redacted body, never a traceback."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

# kinds of failure
HTTP = "http"  # the platform answered with a non-2xx status
TIMEOUT = "timeout"  # no answer within the call's timeout
NETWORK = "network"  # could not connect / connection dropped
DECODE = "decode"  # a 2xx whose body is not the JSON we expect
CONTRACT = "contract"  # the caller asked for something the contract forbids; nothing was sent

TRANSIENT_KINDS = (TIMEOUT, NETWORK)


class ContractViolation(ValueError):
    """Raised by the request shapers when a call would break the platform contract."""


@dataclass(frozen=True)
class PlatformError:
    kind: str
    message: str  # short, redacted
    status: int | None = None
    method: str = ""
    path: str = ""  # path only: no query string, no host

    def __str__(self) -> str:
        where = f"{self.method} {self.path}".strip()
        status = f" {self.status}" if self.status is not None else ""
        head = f"{where}:{status} {self.kind}" if where else f"{self.kind}{status}"
        return f"{head}: {self.message}" if self.message else head

    @property
    def transient(self) -> bool:
        """Worth trying again later (the run may abort as 'network lost' if it persists)."""
        if self.kind in TRANSIENT_KINDS:
            return True
        return self.kind == HTTP and self.status is not None and (self.status == 429 or self.status >= 500)

    def as_dict(self) -> dict:
        return {"kind": self.kind, "status": self.status, "message": self.message,
                "method": self.method, "path": self.path}


@dataclass(frozen=True)
class Result:
    """What every client call returns: data on success, an error value otherwise."""

    ok: bool
    status: int | None = None
    data: Any = None
    error: PlatformError | None = None
    attempts: int = 1
    headers: dict = field(default_factory=dict, repr=False)

    @classmethod
    def failure(cls, error: PlatformError, attempts: int = 1) -> "Result":
        return cls(ok=False, status=error.status, error=error, attempts=attempts)

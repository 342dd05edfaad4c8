"""The Mem0 platform half of gate: a client that enforces the verified contract,
and a local emulator of the platform for tests and dry runs.

Kept import-light on purpose: `gate classify` must not pay for httpx, so the
client and the emulator are imported from their own modules by whoever needs them
(`from gate.platform.client import PlatformClient`).
"""

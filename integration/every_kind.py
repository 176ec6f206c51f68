"""One lock of every kind the watchdog renews, for tests that run a scenario per kind."""

from __future__ import annotations

from typing import Any


def watchdog_kinds(client: Any, name: str) -> dict[str, Any]:
    """One lock of every kind with a watchdog, by kind, each named after ``name``; sync or
    asyncio ``client`` alike (its ``get_*`` calls are plain)."""
    return {
        "reentrant": client.get_lock(f"{name}:reentrant"),
        "fair": client.get_fair_lock(f"{name}:fair"),
        "queued": client.get_queued_lock(f"{name}:queued"),
        "spin": client.get_spin_lock(f"{name}:spin"),
        "fenced": client.get_fenced_lock(f"{name}:fenced"),
        "read": client.get_read_write_lock(f"{name}:rw-read").read_lock(),
        "write": client.get_read_write_lock(f"{name}:rw-write").write_lock(),
    }

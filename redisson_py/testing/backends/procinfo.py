"""Facts about processes, read from ``/proc``: is the owner of something still alive?

A pid alone is no proof (pids are recycled); a pid with its start time is.
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["owner_alive", "process_start_time", "process_state"]


def _stat_fields(pid: int) -> list[str] | None:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    # The command name (field 2) is in parentheses and may hold spaces; fields[0] below
    # is field 3 of the file.
    return stat.rpartition(")")[2].split()


def process_state(pid: int) -> str | None:
    """The state letter of ``pid`` (``R``, ``S``, ``T``, ``Z``...), or None if it is gone."""
    fields = _stat_fields(pid)
    return fields[0] if fields else None


def process_start_time(pid: int) -> int | None:
    """When ``pid`` started, in clock ticks since boot, or None if it does not exist."""
    fields = _stat_fields(pid)
    try:
        return int(fields[19]) if fields else None
    except (IndexError, ValueError):
        return None


def owner_alive(pid: int, start_time: int) -> bool:
    """Whether the process recorded as ``(pid, start_time)`` still runs (``start_time``
    0 means unknown: the pid alone decides)."""
    if pid <= 0:
        return False
    now = process_start_time(pid)
    if now is None:
        return False
    return start_time in (0, now)

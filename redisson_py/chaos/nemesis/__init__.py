"""A randomized nemesis (Jepsen's method): workers take and release shared locks while a
seeded schedule of faults breaks the topology under them, and a checker reads their
journals for what must never happen.

``redisson-py chaos nemesis --topology sentinel|cluster|replicated|redlock --duration S
--seed N [--mode sync-on|sync-off|redlock] [--schedule network|process] [--workers K]
[--dns]`` runs one (`run_nemesis`); its modules:

- `schedule`: the faults, drawn from the seed (pure);
- `worker`: a worker process, journaling every operation;
- `oracle`: the redis-server of the fenced resources, which no fault touches;
- `faults`: striking and healing faults on the live topology;
- `endpoint`: the managed service's primary endpoint (``--dns``): a host name the
  nemesis moves to each promoted node;
- `journal`: the journals' records;
- `checker`: overlapping holds, stale writes, time without a holder (pure);
- `report`: the table row, the JSON, the verdict;
- `runner`: one run, start to verdict.
"""

from __future__ import annotations

from redisson_py.chaos.nemesis.report import RunReport, markdown_table
from redisson_py.chaos.nemesis.runner import (
    MODES,
    TOPOLOGIES,
    NemesisOptions,
    NemesisUnavailableError,
    run_nemesis,
    unavailable_reason,
)
from redisson_py.chaos.nemesis.schedule import SCHEDULES

__all__ = [
    "MODES",
    "SCHEDULES",
    "TOPOLOGIES",
    "NemesisOptions",
    "NemesisUnavailableError",
    "RunReport",
    "markdown_table",
    "run_nemesis",
    "unavailable_reason",
]

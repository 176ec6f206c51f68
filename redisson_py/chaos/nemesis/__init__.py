"""A randomized nemesis (Jepsen's method): workers take and release shared locks while a
seeded schedule of faults breaks the topology under them, and a checker reads their
journals for what must never happen.

``redisson-py chaos nemesis --topology sentinel|cluster|redlock --duration S --seed N
[--mode sync-on|sync-off|redlock] [--schedule network|process] [--workers K]`` runs one
(:func:`run_nemesis`); its modules:

- :mod:`.schedule`: the faults, drawn from the seed (pure);
- :mod:`.worker`: a worker process, journaling every operation;
- :mod:`.oracle`: the redis-server of the fenced resources, which no fault touches;
- :mod:`.faults`: striking and healing faults on the live topology;
- :mod:`.journal`: the journals' records;
- :mod:`.checker`: overlapping holds, stale writes, time without a holder (pure);
- :mod:`.report`: the table row, the JSON, the verdict;
- :mod:`.runner`: one run, start to verdict.
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

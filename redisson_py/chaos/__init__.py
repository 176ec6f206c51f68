"""Failover chaos: scenarios that break real topologies under the lock and measure what
each mode (replica sync off or on, RedLock) guarantees.

Each scenario starts its own topology with the harness (`redisson_py.testing`),
breaks it, and reports; `redisson_py.chaos.suite.run_scenario` runs one several
times and sums it up; ``redisson-py chaos SCENARIO`` prints the table. Scenarios:

- ``race``: the replication race (a grant lost with its master), per mode (``fencing``:
  the stale holder's write to a fenced resource after the new holder's);
- ``load``: the master killed while 2 processes x 4 threads take the lock in turn;
- ``crash``: a holder killed with SIGKILL;
- ``lost-renewal``: the master paused past the watchdog timeout;
- ``waiters``: ten waiters blocked across a failover;
- ``lost-replies``: replies of acquires and releases lost after they were applied;
- ``partition``: network partitions (``network="namespace"``): the holder cut off with
  a master that still answers it, per split and mode (see
  `redisson_py.chaos.partition`).
"""

from __future__ import annotations

from redisson_py.chaos.journal import Summary, markdown_table
from redisson_py.chaos.suite import MODES, SCENARIOS, run_scenario

__all__ = ["MODES", "SCENARIOS", "Summary", "markdown_table", "run_scenario"]

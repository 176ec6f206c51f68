"""Scenario 2: the master killed under load.

Two worker processes of four threads each loop lock -> critical section (20 ms) ->
unlock for ``duration`` seconds; at a random moment in the middle the master that owns
the lock is killed (for a RedLock, one of its five masters) and the topology fails over
by itself. From the merged journal of critical sections: violations (two sections that
overlap), operations completed, and how long each thread waited after the kill before it
the lock was entered again by anyone (the unavailability window; over several runs, its
p50 and max). Watchdog timeout 3 s: a lock whose release was lost in the failover frees
itself within 3 s. (How long each thread waits is not that window: the lock is not fair,
and a thread that just released it often takes it again before the woken waiters.)
"""

from __future__ import annotations

import json
import random
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from tempfile import TemporaryDirectory

from redisson_py.chaos.common import client_configs, fresh_topology, master_of, unique
from redisson_py.chaos.journal import overlaps, waits_after

MODES = ("sync-off", "sync-on", "redlock")
WORKERS = 2
THREADS = 4


@dataclass
class LoadRun:
    topology: str
    mode: str
    violations: int
    operations: int
    window: float
    """Seconds from the kill to the next critical section of anyone (inf: none)."""
    acquire_errors: int
    unlock_errors: int
    lost: int


def _spawn(config: Path, name: str, duration: float) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "redisson_py.chaos.worker",
            "--config",
            str(config),
            "--lock",
            name,
            "--threads",
            str(THREADS),
            "--duration",
            str(duration),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )


def run_once(
    kind: str, mode: str, backend: str, duration: float = 20.0, rng: random.Random | None = None
) -> LoadRun:
    """One run: start the topology and the workers, kill the master mid-way, analyse."""
    rng = rng or random.Random()
    topology_kind = "redlock" if mode == "redlock" else kind
    with fresh_topology(topology_kind, backend) as topology, TemporaryDirectory() as folder:
        name = unique("load")
        configs = client_configs(topology, sync=mode == "sync-on", watchdog=3.0)
        path = Path(folder) / "redisson.yaml"
        path.write_text("".join(c.to_yaml() for c in configs))
        workers = [_spawn(path, name, duration) for _ in range(WORKERS)]
        try:
            for worker in workers:
                assert worker.stdout is not None
                if worker.stdout.readline().strip() != "ready":
                    raise RuntimeError("a load worker did not start; see its stderr")
            time.sleep(duration * rng.uniform(0.3, 0.5))
            victim = (
                rng.choice(topology.data_nodes) if mode == "redlock" else master_of(topology, name)
            )
            victim.kill()
            killed = time.monotonic()
            outputs = [json.loads(w.communicate(timeout=duration + 120)[0]) for w in workers]
        finally:
            for worker in workers:
                worker.kill()
                worker.wait()
    threads = [thread for output in outputs for thread in output["sections"]]
    sections = [(enter, leave) for thread in threads for enter, leave in thread]
    return LoadRun(
        topology=topology_kind,
        mode=mode,
        violations=len(overlaps(sections)),
        operations=len(sections),
        window=min(
            waits_after(killed, [[enter for enter, _ in thread] for thread in threads]),
            default=float("inf"),
        ),
        acquire_errors=sum(o["acquire_errors"] for o in outputs),
        unlock_errors=sum(o["unlock_errors"] for o in outputs),
        lost=sum(o["lost"] for o in outputs),
    )

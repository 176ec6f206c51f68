"""The nemesis's schedule: which faults, on what, when and for how long, drawn from one
seed (Jepsen's method: random faults, a reproducible history). Pure: no I/O, no clock.

The same seed, schedule, cast and duration always give the same `Schedule`: fault
kinds, targets, start offsets, durations and clock jumps. What a target means at the
moment the fault starts can still vary from run to run, because the topology's own
timing does (which node a failover promoted): a target is a node or client host by name,
or a role the runner resolves when it strikes, ``master-of:K`` (the master serving lock
number ``K`` then).

Schedules:

- ``network`` (server and network faults): two-way partitions (a random bipartition of
  nodes and worker hosts), one-way cuts (the same, packets dropped from side A to side B
  only), a master isolated together with some workers, a master cut from its replicas
  only (replicated topologies), a node paused (SIGSTOP), a node killed and restarted;
  on a topology whose failovers a managed service makes (``replicated``), also a
  managed-style failover (a replica promoted, the master demoted after the fault's
  duration, both claiming master in between).
  With ``dns`` (a ``replicated`` cast whose workers reach the master by the service's
  primary endpoint, a host name), every fault that may make the service fail over
  (``managed-failover``, ``isolate-master``, ``pause``, ``kill``) also carries a DNS
  move: the name is pointed at the promoted node ``dns_delay`` seconds after the
  promotion (`DNS_DELAY`), as a real endpoint moves late. Without ``dns`` no draw
  changes: every seed's schedule is the same as before.
- ``process`` (what no lease can survive): a worker paused (SIGSTOP) past its lease while
  it holds a lock, and a node's wall clock jumped forward (libfaketime).

Each fault lasts seconds and is then healed, resumed or restarted; the runner waits for
the topology to recover and then for the quiet time the schedule gives before the next.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import asdict, dataclass, replace
from typing import Any

__all__ = [
    "DNS_DELAY",
    "DNS_KINDS",
    "KINDS",
    "NETWORK_KINDS",
    "PROCESS_KINDS",
    "SCHEDULES",
    "Cast",
    "Fault",
    "Schedule",
    "make_schedule",
    "master_of",
]

NETWORK_KINDS = (
    "partition",
    "one-way",
    "isolate-master",
    "replica-cut",
    "pause",
    "kill",
    "managed-failover",
)
PROCESS_KINDS = ("pause-worker", "clock-jump")
KINDS = NETWORK_KINDS + PROCESS_KINDS
SCHEDULES = ("network", "process")

WARMUP = 3.0
"""Seconds before the first fault: the workers' first holds start on a healthy topology."""

TAIL = 3.0
"""Seconds after the last fault's planned end: every fault ends inside the run."""

QUIET = (2.0, 5.0)
"""Seconds of quiet between one fault's recovery and the next fault (uniform)."""

DURATIONS: dict[str, tuple[float, float]] = {
    "partition": (2.0, 8.0),
    "one-way": (2.0, 6.0),
    "isolate-master": (3.0, 8.0),
    "replica-cut": (2.0, 6.0),
    "pause": (1.0, 6.0),
    # Down for longer than the watchdog timeout (3 s) plus a second: a restarted node has
    # no data (no persistence), and Redlock's own rule for that is a delayed restart,
    # after every lease it held has run out. (Replicated masters are restarted only
    # after the failover, too: see the runner.)
    "kill": (4.0, 8.0),
    # Past the worker's lease (watchdog timeout 3 s) and its safety margin.
    "pause-worker": (4.0, 8.0),
    "clock-jump": (3.0, 8.0),
    # Seconds between the promotion and the old master's demotion (both claim master).
    "managed-failover": (0.5, 3.0),
}
"""Seconds each kind of fault lasts before it is healed (uniform)."""

DNS_KINDS = ("managed-failover", "isolate-master", "pause", "kill")
"""The kinds after which a managed service may have promoted a replica (a master
struck), and so moves its primary endpoint's name (``dns`` casts)."""

DNS_DELAY = (0.5, 3.0)
"""Seconds between a promotion and the primary endpoint's name moving (uniform)."""

JUMP = (5.0, 15.0)
"""Seconds a clock jumps forward (uniform): always past the 3 s watchdog timeout."""

WEIGHTS: dict[str, dict[str, int]] = {
    "network": {
        "partition": 3,
        "one-way": 2,
        "isolate-master": 3,
        "replica-cut": 2,
        "pause": 2,
        "kill": 2,
        "managed-failover": 3,
    },
    "process": {"pause-worker": 1, "clock-jump": 1},
}
"""How often each kind is drawn, per schedule (replica cuts only where there are
replicas, managed failovers only where a managed service fails over: the other kinds'
draws, and so every seed's schedule, are the same with or without them)."""


def master_of(lock_index: int) -> str:
    """The role target "the master serving lock number ``lock_index`` when the fault
    starts"."""
    return f"master-of:{lock_index}"


@dataclass(frozen=True)
class Cast:
    """Who the nemesis may strike: the topology's nodes by name (data nodes, then
    sentinels), the worker hosts by name, how many lock names the workers share,
    whether masters have replicas (sentinel, cluster, replicated) or not (redlock), and
    whether a managed service makes the failovers (replicated: no sentinel, no
    cluster bus; the nemesis plays the service), and whether the workers reach the
    master by the service's primary endpoint, a host name the nemesis moves (``dns``:
    managed casts only)."""

    nodes: tuple[str, ...]
    data_nodes: tuple[str, ...]
    workers: tuple[str, ...]
    locks: int
    replicated: bool
    managed: bool = False
    dns: bool = False

    def __post_init__(self) -> None:
        if not self.data_nodes or not self.workers or self.locks < 1:
            raise ValueError("a cast needs data nodes, workers and at least one lock")
        if self.dns and not self.managed:
            raise ValueError("DNS moves are the managed service's: a dns cast must be managed")
        if not set(self.data_nodes) <= set(self.nodes):
            raise ValueError("every data node must be one of the nodes")

    @property
    def members(self) -> tuple[str, ...]:
        """Everyone a partition may put on a side: nodes, then worker hosts."""
        return self.nodes + self.workers


@dataclass(frozen=True)
class Fault:
    """One planned fault.

    ``start`` is seconds after the run starts, ``duration`` how long it lasts before it
    is healed. Partitions (``partition``, ``one-way``) cut ``side_a`` from ``side_b``
    (names); ``isolate-master`` cuts ``target`` and the ``side_a`` workers from everyone
    else; ``replica-cut`` cuts ``target`` from its replicas; ``managed-failover``
    promotes a replica of ``target`` and demotes ``target`` when healed; ``pause``,
    ``kill`` and ``clock-jump`` strike ``target`` (``clock-jump`` by ``jump`` seconds forward);
    ``pause-worker`` stops the worker on host ``target``. ``dns_delay`` (``dns``
    casts, kinds in `DNS_KINDS`; 0: no DNS step) is how long after a promotion the
    fault makes the primary endpoint's name follow it.
    """

    index: int
    kind: str
    start: float
    duration: float
    target: str = ""
    side_a: tuple[str, ...] = ()
    side_b: tuple[str, ...] = ()
    jump: float = 0.0
    dns_delay: float = 0.0

    def describe(self) -> str:
        """One line for progress output."""
        if self.kind in ("partition", "one-way"):
            arrow = "->" if self.kind == "one-way" else "|"
            what = f"{','.join(self.side_a)} {arrow} {','.join(self.side_b)}"
        elif self.kind == "isolate-master":
            what = ",".join((self.target, *self.side_a)) + " | everyone else"
        elif self.kind == "clock-jump":
            what = f"{self.target} +{self.jump:.1f} s"
        else:
            what = self.target
        dns = f", name moved {self.dns_delay:.1f} s after a promotion" if self.dns_delay else ""
        return f"#{self.index} {self.kind} {what} for {self.duration:.1f} s{dns}"

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["side_a"], data["side_b"] = list(self.side_a), list(self.side_b)
        return data


@dataclass(frozen=True)
class Schedule:
    """The faults of one run, in start order."""

    seed: int
    schedule: str
    duration: float
    faults: tuple[Fault, ...]

    def counts(self) -> dict[str, int]:
        """Faults per kind."""
        out: dict[str, int] = {}
        for fault in self.faults:
            out[fault.kind] = out.get(fault.kind, 0) + 1
        return out

    def to_json(self) -> dict[str, Any]:
        return {
            "seed": self.seed,
            "schedule": self.schedule,
            "duration": self.duration,
            "faults": [f.to_json() for f in self.faults],
        }


def make_schedule(seed: int, schedule: str, cast: Cast, duration: float) -> Schedule:
    """The faults of a run of ``duration`` seconds, drawn from ``random.Random(seed)``.

    Faults start after `WARMUP`, follow one another with `QUIET` between
    them, and end `TAIL` before the run does (a short run may have none). Raises
    ``ValueError`` for an unknown schedule.
    """
    if schedule not in SCHEDULES:
        raise ValueError(f"unknown schedule {schedule!r}; known: {', '.join(SCHEDULES)}")
    rng = random.Random(seed)
    weights = {
        kind: weight
        for kind, weight in WEIGHTS[schedule].items()
        if (cast.replicated or kind != "replica-cut")
        and (cast.managed or kind != "managed-failover")
    }
    kinds, odds = list(weights), list(weights.values())
    faults: list[Fault] = []
    at = WARMUP
    while True:
        kind = rng.choices(kinds, odds)[0]
        low, high = DURATIONS[kind]
        length = round(rng.uniform(low, high), 3)
        if at + length > duration - TAIL:
            break
        planned = Fault(index=len(faults), kind=kind, start=round(at, 3), duration=length)
        drawn = _draw(rng, planned, cast)
        if cast.dns and kind in DNS_KINDS:
            # Drawn last, and only for dns casts: every other draw stays as it was.
            drawn = replace(drawn, dns_delay=round(rng.uniform(*DNS_DELAY), 3))
        faults.append(drawn)
        at += length + rng.uniform(*QUIET)
    return Schedule(seed=seed, schedule=schedule, duration=duration, faults=tuple(faults))


def _draw(rng: random.Random, fault: Fault, cast: Cast) -> Fault:
    """``fault`` (its kind, start and duration drawn) with its targets drawn."""
    kind = fault.kind
    if kind in ("partition", "one-way"):
        side_a, side_b = _bipartition(rng, cast.members)
        return replace(fault, side_a=side_a, side_b=side_b)
    if kind == "isolate-master":
        workers = tuple(w for w in cast.workers if rng.random() < 0.5)
        return replace(fault, target=_master(rng, cast), side_a=workers)
    if kind in ("replica-cut", "managed-failover"):
        return replace(fault, target=_master(rng, cast))
    if kind in ("pause", "kill"):
        # Half the time the master that serves a lock (where it hurts), else any node.
        target = _master(rng, cast) if rng.random() < 0.5 else rng.choice(cast.nodes)
        return replace(fault, target=target)
    if kind == "pause-worker":
        return replace(fault, target=rng.choice(cast.workers))
    # clock-jump
    return replace(fault, target=_master(rng, cast), jump=round(rng.uniform(*JUMP), 3))


def _master(rng: random.Random, cast: Cast) -> str:
    """A master to strike: the one serving a random lock (replicated topologies, where
    roles move), or a random data node (redlock: every data node is a master)."""
    if cast.replicated:
        return master_of(rng.randrange(cast.locks))
    return rng.choice(cast.data_nodes)


def _bipartition(
    rng: random.Random, members: Sequence[str]
) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """A random split of ``members`` into two non-empty sides, each in cast order."""
    while True:
        on_a = [rng.random() < 0.5 for _ in members]
        if any(on_a) and not all(on_a):
            side_a = tuple(m for m, a in zip(members, on_a, strict=True) if a)
            side_b = tuple(m for m, a in zip(members, on_a, strict=True) if not a)
            return side_a, side_b

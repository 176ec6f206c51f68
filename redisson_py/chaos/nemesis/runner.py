"""One nemesis run, start to verdict: `run_nemesis`.

1. The topology starts in a network namespace of its own (process backend,
   ``network="namespace"``); for the ``process`` schedule every data node runs on a fake
   clock (libfaketime) the nemesis can jump.
2. The oracle starts on a client host of its own (`oracle`), then the workers
   (`worker`), each a process on its own client host: a fenced lock (sync on or
   off) or a RedLock over the five masters, watchdog timeout 3 s, replica sync timeout
   0.5 s, command timeout 1 s, so faults play out within seconds. With ``dns`` (the
   replicated topology only) the workers' config names the master by the service's
   primary endpoint, a host name (`endpoint`): ``nodeAddresses`` lists only it,
   ``monitorIPChanges`` on, and the nemesis moves the name to each node it promotes.
3. The schedule (`schedule`, from the seed) is played: each fault struck, held for
   its duration, healed, then the topology given time to recover (bounded) before the
   next. Faults that could no longer end inside the run are skipped.
4. Everything is healed, the workers are told to stop (each finishes its round), and the
   journals are checked (`checker`) and summed up (`report`).

Everything the run wrote stays in its directory: the client configs, one journal per
worker and the nemesis's own (``journal/``), the workers' logs, ``report.json`` and
``report.md``.
"""

from __future__ import annotations

import contextlib
import json
import secrets
import select
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from redisson_py.chaos.common import client_configs
from redisson_py.chaos.nemesis.checker import check
from redisson_py.chaos.nemesis.endpoint import PrimaryEndpoint
from redisson_py.chaos.nemesis.faults import Nemesis
from redisson_py.chaos.nemesis.journal import Journal, Record, read_journal, read_journals
from redisson_py.chaos.nemesis.oracle import Oracle, start_oracle
from redisson_py.chaos.nemesis.report import RunReport, markdown_table
from redisson_py.chaos.nemesis.schedule import SCHEDULES, TAIL, Cast, Schedule, make_schedule
from redisson_py.config import ReplicatedServersConfig
from redisson_py.testing import Topology, load_spec, partition_support, start_topology
from redisson_py.testing.errors import TopologyError
from redisson_py.testing.faults.faketime import FakeClock, faketime_support
from redisson_py.testing.network.dns import dns_support

__all__ = [
    "MODES",
    "TOPOLOGIES",
    "NemesisOptions",
    "NemesisUnavailableError",
    "run_nemesis",
    "unavailable_reason",
]

TOPOLOGIES = ("sentinel", "cluster", "replicated", "redlock")
MODES = ("sync-on", "sync-off", "redlock", "queued")
"""``queued``: the queued lock (issue 42) with replica sync on, its writes unfenced."""
WORKERS = 4
LOCKS = 2
"""Lock names the workers share (fewer names than workers: contention)."""

WATCHDOG = 3.0
SYNC_TIMEOUT = 0.5
COMMAND_TIMEOUT = 1.0
READY_TIMEOUT = 60.0
STOP_TIMEOUT = 30.0

OVERRIDES: dict[str, dict[str, Any]] = {
    # The Failover findings' sentinel: one master, one replica, three sentinels.
    "sentinel": {"replicas_per_master": 1},
    "cluster": {},
    # One master, two replicas, no sentinel: the nemesis plays the managed service.
    "replicated": {},
    "redlock": {},
}

Progress = Callable[[str], None]


class NemesisUnavailableError(TopologyError):
    """The nemesis cannot run here; the message says why, in one sentence."""


@dataclass(frozen=True)
class NemesisOptions:
    """What to run: ``topology`` (sentinel, cluster, replicated, redlock), ``mode``
    (sync-on, sync-off or queued on sentinel, cluster and replicated; redlock on
    redlock; None: the
    topology's default),
    ``schedule`` (network or process), ``duration`` seconds of faults, the ``seed``, the
    number of ``workers``, the ``directory`` to keep everything in (None: a new
    temporary one, kept), and ``dns``: the workers reach the master by a host name the
    nemesis moves after each promotion (replicated only; off by default)."""

    topology: str
    mode: str | None = None
    schedule: str = "network"
    duration: float = 60.0
    seed: int = 0
    workers: int = WORKERS
    directory: Path | None = None
    dns: bool = False

    @property
    def resolved_mode(self) -> str:
        if self.mode is not None:
            return self.mode
        return "redlock" if self.topology == "redlock" else "sync-on"

    def check(self) -> None:
        """Raise ``ValueError`` (one sentence) for options that do not go together."""
        if self.topology not in TOPOLOGIES:
            raise ValueError(f"unknown topology {self.topology!r}; known: {', '.join(TOPOLOGIES)}")
        if self.schedule not in SCHEDULES:
            raise ValueError(f"unknown schedule {self.schedule!r}; known: {', '.join(SCHEDULES)}")
        mode = self.resolved_mode
        if mode not in MODES:
            raise ValueError(f"unknown mode {mode!r}; known: {', '.join(MODES)}")
        if (mode == "redlock") != (self.topology == "redlock"):
            raise ValueError(
                "mode redlock runs on the redlock topology, and only it; sentinel, "
                "cluster and replicated run sync-on, sync-off or queued"
            )
        if self.workers < 2:
            raise ValueError("a nemesis run needs at least 2 workers (contention)")
        if self.duration <= 0:
            raise ValueError("the duration must be positive seconds")
        if self.dns and self.topology != "replicated":
            raise ValueError(
                "DNS moves are a managed service's: --dns runs on the replicated topology only"
            )


def unavailable_reason(options: NemesisOptions) -> str | None:
    """Why the nemesis cannot run here with ``options`` (one sentence), or None."""
    reason = partition_support()
    if reason is None and options.schedule == "process":
        reason = faketime_support()
    if reason is None and options.dns:
        reason = dns_support()
    return reason


def run_nemesis(options: NemesisOptions, progress: Progress = lambda line: None) -> RunReport:
    """Run once (see the module docstring); the report, also written as
    ``report.json`` and ``report.md`` in the run's directory.

    Raises ``ValueError`` for bad options, `NemesisUnavailableError` where it
    cannot run, [`TopologyError`][redisson_py.testing.TopologyError] when the topology
    or a worker fails to start.
    """
    options.check()
    reason = unavailable_reason(options)
    if reason is not None:
        raise NemesisUnavailableError(reason)
    mode = options.resolved_mode
    directory = options.directory or Path(
        tempfile.mkdtemp(
            prefix=f"redisson-py-nemesis-{options.topology}-{mode}-{options.schedule}-"
            f"{options.seed}-"
        )
    )
    for sub in ("journal", "logs", "clocks"):
        (directory / sub).mkdir(parents=True, exist_ok=True)
    tag = f"{options.seed}-{secrets.token_hex(3)}"
    locks = [f"nemesis:{tag}:{k}" for k in range(LOCKS)]
    resources = [f"{lock}:resource" for lock in locks]
    progress(
        f"nemesis: {options.topology} {mode} {options.schedule} seed {options.seed}: {directory}"
    )
    with contextlib.ExitStack() as stack:
        clocks = _fake_clocks(options, directory / "clocks", stack)
        topology = stack.enter_context(
            start_topology(
                options.topology,
                backend="process",
                network="namespace",
                node_environment={name: c.environment() for name, c in clocks.items()},
                **OVERRIDES[options.topology],
            )
        )
        oracle = start_oracle(topology, directory / "oracle")
        stack.callback(oracle.stop)
        endpoint = None
        if options.dns:
            endpoint = stack.enter_context(PrimaryEndpoint(topology, directory / "dns"))
        run = _Run(options, mode, directory, locks, resources, progress, endpoint)
        played = _play(run, topology, oracle, clocks)
        highest = {lock: oracle.highest_token(r) for lock, r in zip(locks, resources, strict=True)}
    schedule, start, end, journals, nemesis_records = played
    verdict = check(journals, locks, start, end)
    report = RunReport(
        topology=options.topology,
        mode=mode,
        schedule=schedule,
        elapsed=end - start,
        workers=options.workers,
        locks=locks,
        verdict=verdict,
        injected=[r for r in nemesis_records if r.get("op") == "fault-start"],
        skipped=[r for r in nemesis_records if r.get("op") == "fault-error"],
        heal_errors=[r for r in nemesis_records if r.get("op") == "heal-error"],
        recoveries=[float(r["seconds"]) for r in nemesis_records if r.get("op") == "recovered"],
        unrecovered=sum(r.get("op") == "recovered" and not r.get("ok") for r in nemesis_records),
        highest_tokens=highest,
        directory=str(directory),
        faults_near=[fault_near(o.at, nemesis_records) for o in verdict.overlaps[:50]],
    )
    (directory / "report.json").write_text(json.dumps(report.to_json(), indent=2, default=str))
    (directory / "report.md").write_text(markdown_table([report]) + "\n")
    return report


def _fake_clocks(
    options: NemesisOptions, directory: Path, stack: contextlib.ExitStack
) -> dict[str, FakeClock]:
    """One fake clock per data node for the process schedule (none for network): a clock
    jump strikes whichever node is master then, so every data node must be able to."""
    if options.schedule != "process":
        return {}
    spec = load_spec(options.topology, OVERRIDES[options.topology])
    # The harness's node names (bootstrap): masters, then each shard's replicas.
    names = [f"master-{shard}" for shard in range(spec.masters)] + [
        f"replica-{shard}-{number}"
        for shard in range(spec.masters)
        for number in range(1, spec.replicas_per_master + 1)
    ]
    # Entered before the topology: closed after its nodes are gone (see FakeClock.close).
    return {name: stack.enter_context(FakeClock(directory, name)) for name in names}


@dataclass(frozen=True)
class _Run:
    """One run's settings, as the steps below need them."""

    options: NemesisOptions
    mode: str
    directory: Path
    locks: list[str]
    resources: list[str]
    progress: Progress
    endpoint: PrimaryEndpoint | None = None


def _play(
    run: _Run, topology: Topology, oracle: Oracle, clocks: dict[str, FakeClock]
) -> tuple[Schedule, float, float, list[list[Record]], list[Record]]:
    """Start the workers, play the schedule, stop the workers; what the journals say."""
    options, mode, directory, progress = run.options, run.mode, run.directory, run.progress
    locks, resources = run.locks, run.resources
    config, oracle_config = _write_configs(topology, mode, oracle, directory, run.endpoint)
    hosts = [topology.client_host(f"worker-{i}").name for i in range(options.workers)]
    journal_paths = [directory / "journal" / f"{host}.jsonl" for host in hosts]
    journal = Journal(directory / "journal" / "nemesis.jsonl")
    workers: list[subprocess.Popen[str]] = []
    try:
        for index, host in enumerate(hosts):
            argv = [
                sys.executable,
                "-m",
                "redisson_py.chaos.nemesis.worker",
                f"--config={config}",
                f"--oracle={oracle_config}",
                f"--journal={journal_paths[index]}",
                f"--index={index}",
                f"--locks={','.join(locks)}",
                f"--resources={','.join(resources)}",
                f"--mode={mode}",
                f"--seed={options.seed}",
            ]
            if run.endpoint is not None:
                argv = run.endpoint.worker_argv(argv, topology.client_host(host).address)
            with (directory / "logs" / f"{host}.log").open("a") as log:
                workers.append(
                    topology.network.popen(
                        host,
                        argv,
                        stdin=subprocess.PIPE,
                        stdout=subprocess.PIPE,
                        stderr=log,
                        text=True,
                    )
                )
        for host, worker in zip(hosts, workers, strict=True):
            _wait_ready(host, worker, directory)
        cast = Cast(
            nodes=tuple(n.name for n in topology.nodes),
            data_nodes=tuple(n.name for n in topology.data_nodes),
            workers=tuple(hosts),
            locks=len(locks),
            replicated=topology.layout in ("sentinel", "cluster", "replication"),
            managed=topology.layout == "replication",
            dns=run.endpoint is not None,
        )
        schedule = make_schedule(options.seed, options.schedule, cast, options.duration)
        journal.record("schedule", **schedule.to_json())
        nemesis = Nemesis(
            topology,
            locks=locks,
            workers=dict(zip(hosts, workers, strict=True)),
            journals=dict(zip(hosts, journal_paths, strict=True)),
            clocks=clocks,
            journal=journal,
            progress=run.progress,
            move_name=None if run.endpoint is None else run.endpoint.point,
        )
        start = float(journal.record("run-start")["t"])
        try:
            _play_schedule(nemesis, schedule, start, journal, progress)
        finally:
            nemesis.heal_everything()
        end = float(journal.record("run-end")["t"])
    finally:
        _stop_workers(hosts, workers, journal, progress)
        journal.close()
    return schedule, start, end, read_journals(journal_paths), read_journal(journal.path)


def _play_schedule(
    nemesis: Nemesis, schedule: Schedule, start: float, journal: Journal, progress: Progress
) -> None:
    for fault in schedule.faults:
        latest = start + schedule.duration - TAIL - fault.duration
        now = time.monotonic()
        if now > latest:
            journal.record("fault-error", fault=fault.index, kind=fault.kind, detail="run over")
            progress(f"nemesis: {fault.describe()}: skipped (the run is over)")
            continue
        time.sleep(max(0.0, start + fault.start - now))
        struck = nemesis.strike(fault)
        if struck.skipped is not None:
            continue
        time.sleep(fault.duration)
        nemesis.heal(struck)
        nemesis.recover()
    time.sleep(max(0.0, start + schedule.duration - time.monotonic()))


def _write_configs(
    topology: Topology,
    mode: str,
    oracle: Oracle,
    directory: Path,
    endpoint: PrimaryEndpoint | None = None,
) -> tuple[Path, Path]:
    configs = client_configs(
        topology, sync=mode in ("sync-on", "queued"), watchdog=WATCHDOG, timeout=COMMAND_TIMEOUT
    )
    for config in configs:
        config.slaves_sync_timeout = SYNC_TIMEOUT
        section = config.server_config
        if endpoint is not None and isinstance(section, ReplicatedServersConfig):
            # The primary endpoint only, as a managed service's users configure it: the
            # master is whichever node the name resolves to, re-resolved at each scan.
            section.node_addresses = [endpoint.url]
            section.monitor_ip_changes = True
    config_path = directory / "config.yaml"
    config_path.write_text("".join(c.to_yaml() for c in configs))
    oracle_path = directory / "oracle.yaml"
    oracle_path.write_text(oracle.client_config(timeout=COMMAND_TIMEOUT).to_yaml())
    return config_path, oracle_path


def _wait_ready(host: str, worker: subprocess.Popen[str], directory: Path) -> None:
    assert worker.stdout is not None
    ready, _, _ = select.select([worker.stdout], [], [], READY_TIMEOUT)
    line = worker.stdout.readline().strip() if ready else ""
    if line != "ready":
        raise TopologyError(
            f"nemesis worker on {host} did not start ({line or 'no answer'}); see "
            f"{directory / 'logs' / (host + '.log')}"
        )


def _stop_workers(
    hosts: Sequence[str],
    workers: Sequence[subprocess.Popen[str]],
    journal: Journal,
    progress: Progress,
) -> None:
    """Ask every worker to stop (each finishes its round), then wait; kill laggards."""
    for worker in workers:
        with contextlib.suppress(OSError, ValueError):
            assert worker.stdin is not None
            worker.stdin.write("stop\n")
            worker.stdin.close()
    deadline = time.monotonic() + STOP_TIMEOUT
    for host, worker in zip(hosts, workers, strict=False):
        try:
            worker.wait(max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            worker.kill()
            worker.wait()
            journal.record("worker-killed", host=host)
            progress(f"nemesis: worker {host} did not stop in {STOP_TIMEOUT:g} s; killed")
        if worker.stdout is not None:
            worker.stdout.close()


def fault_near(at: float, records: Sequence[Record]) -> str:
    """The fault in force at ``at`` (monotonic), or the last one healed before it, as
    text (``during #3 partition``, ``1.2 s after #3 partition``); empty before any."""
    started: dict[int, Record] = {}
    ended: dict[int, float] = {}
    for record in records:
        if record.get("op") == "fault-start":
            started[int(record["fault"])] = record
        elif record.get("op") == "fault-end":
            ended[int(record["fault"])] = float(record["t"])
    before = [r for r in started.values() if float(r["t"]) <= at]
    if not before:
        return ""
    last = max(before, key=lambda r: float(r["t"]))
    index, kind = int(last["fault"]), last.get("kind")
    end = ended.get(index)
    if end is None or end >= at:
        return f"during #{index} {kind}"
    return f"{at - end:.1f} s after #{index} {kind}"

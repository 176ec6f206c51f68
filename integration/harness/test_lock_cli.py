"""``redisson-py lock status|list|unlock|run`` and ``redisson-py config check`` against
real topologies, run as subprocesses the way an operator runs them: ``status`` of every
kind of the lock family (text and JSON, single and cluster) and the evidence that tells
kinds sharing a layout apart, ``list`` finding every kind (across SCAN pages, and naming
a node it cannot read), ``unlock --force`` of a reentrant, a fair and a read-write lock,
and its refusal of what is no lock."""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from redisson_py import Config, Redisson
from redisson_py.cli.lock_command import EXIT_LOCK_LOST, EXIT_WAIT_TIMEOUT
from redisson_py.cli.lock_data import KeyNames, lock_status
from redisson_py.errors import RedissonError
from redisson_py.testing import Topology, eventually

CLI = [sys.executable, "-c", "import sys; from redisson_py.cli import main; sys.exit(main())"]


def cli(
    *args: str, env: dict[str, str] | None = None, timeout: float = 30
) -> subprocess.CompletedProcess[str]:
    """``redisson-py ARGS`` run to completion, stdin not a terminal."""
    return subprocess.run(
        [*CLI, *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
        stdin=subprocess.DEVNULL,
        env=env,
    )


def write_config(topology: Topology, path: Path, **extra: Any) -> str:
    """The topology's Redisson YAML (plus top-level ``extra`` settings) in ``path``."""
    document = yaml.safe_load(topology.redisson_yaml())
    document.update(extra)
    path.write_text(yaml.safe_dump(document))
    return str(path)


@pytest.fixture
def single_config(single_topology: Topology, tmp_path: Path) -> str:
    return write_config(single_topology, tmp_path / "single.yaml")


@pytest.fixture
def client(single_config: str) -> Iterator[Redisson]:
    with Redisson.create(Config.from_yaml(single_config)) as redisson:
        yield redisson


def lock_name(request: pytest.FixtureRequest) -> str:
    return f"cli-{request.node.name}-{os.getpid()}"


def hold_in_thread(client: Redisson, name: str) -> tuple[threading.Event, threading.Thread]:
    """Take ``name`` twice (reentrant) in a thread that keeps it until the event is set."""
    taken, release = threading.Event(), threading.Event()

    def holder() -> None:
        lock = client.get_lock(name)
        lock.lock()
        lock.lock()
        taken.set()
        release.wait(30)
        with contextlib.suppress(RedissonError):  # a test may have force-unlocked it
            lock.unlock()
            lock.unlock()

    thread = threading.Thread(target=holder, daemon=True)
    thread.start()
    assert taken.wait(10)
    return release, thread


class Owner:
    """A thread that runs ``acquire`` (truthy: it got the lock), records what it returned
    and when, then keeps what it got until :meth:`finish` and gives it back with
    ``release`` (a force-unlocked lock is no longer its own: that error is ignored)."""

    def __init__(self, acquire: Callable[[], object], release: Callable[[], object]):
        self.acquire, self.release = acquire, release
        self.returned = threading.Event()
        self.result: object = None
        self.returned_at = 0.0
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        self.result = self.acquire()
        self.returned_at = time.monotonic()
        self.returned.set()
        self._done.wait(60)
        if self.result:
            with contextlib.suppress(RedissonError):
                self.release()

    def finish(self) -> None:
        self._done.set()
        self._thread.join(30)


def holding(lock: Any) -> Owner:
    """An :class:`Owner` that holds ``lock`` (taken with ``lock()``), until it finishes."""

    def take() -> bool:
        lock.lock()
        return True

    owner = Owner(take, lock.unlock)
    assert owner.returned.wait(10) and owner.result, "the owner did not get the lock"
    return owner


def status(config: str, *names: str) -> list[dict[str, Any]]:
    """``lock status NAMES --json``: the entries."""
    result = cli("lock", "status", *names, "--json", "--config", config)
    assert result.returncode == 0, result.stderr
    entries: list[dict[str, Any]] = json.loads(result.stdout)["locks"]
    return entries


def status_text(config: str, *names: str) -> str:
    """``lock status NAMES``: the text."""
    result = cli("lock", "status", *names, "--config", config)
    assert result.returncode == 0, result.stderr
    return result.stdout


def counts(entry: dict[str, Any]) -> list[tuple[str, str | None, int]]:
    """The holders of a status entry as (client id, mode, hold count)."""
    return [(h["client_id"], h["mode"], h["count"]) for h in entry["holders"]]


# -- config ----------------------------------------------------------------------------------


def test_no_config_names_both_ways(request: pytest.FixtureRequest) -> None:
    env = {k: v for k, v in os.environ.items() if k != "REDISSON_PY_CONFIG"}
    result = cli("lock", "status", lock_name(request), env=env)
    assert result.returncode == 1
    assert "--config" in result.stderr and "REDISSON_PY_CONFIG" in result.stderr


def test_config_check_good_bad_and_connect(
    single_config: str, cluster_topology: Topology, tmp_path: Path
) -> None:
    good = cli("config", "check", single_config)
    assert good.returncode == 0, good.stderr
    assert "valid" in good.stdout

    bad = tmp_path / "bad.yaml"
    bad.write_text("singleServerConfig:\n  address: redis://127.0.0.1:1\n  timeout: soon\n")
    result = cli("config", "check", str(bad))
    assert result.returncode == 2
    assert "timeout" in result.stderr and "line 3" in result.stderr
    as_json = json.loads(cli("config", "check", str(bad), "--json").stdout)
    assert as_json["valid"] is False and "timeout" in as_json["error"]

    cluster = write_config(cluster_topology, tmp_path / "cluster.yaml")
    report = json.loads(cli("config", "check", cluster, "--connect", "--json").stdout)
    assert report["valid"] and report["connected"]
    assert report["topology"]["mode"] == "cluster"
    masters = report["topology"]["masters"]
    assert len(masters) == 3 and all(len(m["replicas"]) == 1 for m in masters)
    text = cli("config", "check", cluster, "--connect")
    assert text.returncode == 0 and "mode: cluster" in text.stdout


def test_config_check_never_prints_the_password(single_topology: Topology, tmp_path: Path) -> None:
    port = single_topology.redisson_yaml().split("127.0.0.1:")[1].split()[0].strip("\"'")
    path = tmp_path / "secret.yaml"
    path.write_text(
        "singleServerConfig:\n"
        f"  address: redis://operator:hunter2secret@127.0.0.1:{port}\n"
        "  connectTimeout: 500\n"
    )
    for args in (("--connect",), ("--connect", "--json")):
        result = cli("config", "check", str(path), *args)
        assert "hunter2secret" not in result.stdout + result.stderr


# -- status ----------------------------------------------------------------------------------


def test_status_shows_holder_count_ttl_and_waiters(
    client: Redisson, single_config: str, request: pytest.FixtureRequest
) -> None:
    name = lock_name(request)
    assert (
        json.loads(cli("lock", "status", name, "--json", "--config", single_config).stdout)[
            "locks"
        ][0]["kind"]
        == "not locked"
    )
    release, holder = hold_in_thread(client, name)
    with Redisson.create(Config.from_yaml(single_config)) as other:
        waiter = threading.Thread(target=lambda: other.get_lock(name).try_lock(20), daemon=True)
        waiter.start()
        try:
            deadline = time.monotonic() + 10
            while True:
                entry = json.loads(
                    cli(
                        "lock",
                        "status",
                        name,
                        "--json",
                        env={**os.environ, "REDISSON_PY_CONFIG": single_config},
                    ).stdout
                )["locks"][0]
                if entry["waiters"] == 1 or time.monotonic() > deadline:
                    break
                time.sleep(0.1)
            assert entry["kind"] == "reentrant", entry
            assert [(h["client_id"], h["count"]) for h in entry["holders"]] == [(client.id, 2)]
            assert 0 < entry["ttl_ms"] <= 30_000
            assert entry["waiters"] == 1
            text = cli("lock", "status", name, "--config", single_config).stdout
            assert "reentrant lock" in text and "hold count 2" in text and "waiters: 1" in text
        finally:
            release.set()
            holder.join(10)
            waiter.join(20)
            other.get_lock(name).force_unlock()


def test_status_names_other_types(
    client: Redisson, single_config: str, request: pytest.FixtureRequest
) -> None:
    name = lock_name(request)
    client.redis(name).set(name, "x")
    try:
        entry = json.loads(cli("lock", "status", name, "--json", "--config", single_config).stdout)[
            "locks"
        ][0]
        assert entry["kind"] == "other" and entry["type"] == "string"
    finally:
        client.redis(name).delete(name)


def test_status_on_cluster(
    cluster_topology: Topology, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    config = write_config(cluster_topology, tmp_path / "cluster.yaml")
    name = lock_name(request)
    with (
        Redisson.create(Config.from_yaml(config)) as redisson,
        Redisson.create(Config.from_yaml(config)) as other,
    ):
        release, holder = hold_in_thread(redisson, name)
        waiter = threading.Thread(target=lambda: other.get_lock(name).try_lock(20), daemon=True)
        waiter.start()
        sharded = redisson.connection_manager.publish_command == "spublish"
        expected = 1 if sharded else None  # classic pub/sub on a cluster: unknowable
        try:
            deadline = time.monotonic() + 10
            while True:
                entry = json.loads(
                    cli("lock", "status", name, "--json", "--config", config).stdout
                )["locks"][0]
                if entry["waiters"] == expected or time.monotonic() > deadline:
                    break
                time.sleep(0.1)
            assert entry["kind"] == "reentrant" and entry["holders"][0]["count"] == 2
            assert entry["node"] == str(redisson.connection_manager.view.master_for(name))
            assert entry["waiters"] == expected
        finally:
            release.set()
            holder.join(10)
            waiter.join(20)
            other.get_lock(name).force_unlock()


@pytest.fixture(params=["single", "master_replica", "sentinel", "cluster"])
def family_config(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """The config of a single server, a master with replicas (masterSlaveServersConfig),
    sentinels or a cluster: every manager the commands read through."""
    topology: Topology = request.getfixturevalue(f"{request.param}_topology")
    return write_config(topology, tmp_path / f"{request.param}.yaml")


EVERY_KIND = (
    "reentrant",
    "fair",
    "rw",
    "fenced",
    "semaphore",
    "latch",
    "permits",
    "resource",
    "list",
    "free",
    "spin",
    "non-reentrant",
    "nr-fair",
)


@dataclasses.dataclass
class EveryKind:
    """What `every_kind` made: the clients, and what the checks compare with."""

    client: Redisson
    waiting: Redisson
    fair: Owner
    queued: Owner
    fence: Any
    leased: str
    unleased: str


@contextlib.contextmanager
def every_kind(config: str, names: dict[str, str]) -> Iterator[EveryKind]:
    """One object of each kind under ``names`` (`EVERY_KIND`: a reentrant lock held
    twice, a fair lock held with one waiter queued, a read lock, a fenced lock at token
    2, a semaphore of 3 with one taken, a latch at 4, a permit-expirable semaphore with
    one leased and one unleased permit taken, a fenced resource, a list, nothing, and a
    spin, a non-reentrant and a non-reentrant fair lock held once); all deleted on
    exit."""
    with contextlib.ExitStack() as stack:
        client = stack.enter_context(Redisson.create(Config.from_yaml(config)))
        waiting = stack.enter_context(Redisson.create(Config.from_yaml(config)))
        for name in names.values():
            stack.callback(_delete_everything, client, name)

        reentrant = client.get_lock(names["reentrant"])
        reentrant.lock()
        reentrant.lock()
        stack.callback(reentrant.force_unlock)
        fair = holding(client.get_fair_lock(names["fair"]))
        queued = Owner(
            lambda: waiting.get_fair_lock(names["fair"]).try_lock(20),
            waiting.get_fair_lock(names["fair"]).unlock,
        )
        stack.callback(lambda: (fair.finish(), queued.finish()))  # the holder first
        rw = client.get_read_write_lock(names["rw"])
        rw.read_lock().lock()
        stack.callback(rw.read_lock().force_unlock)
        fenced = client.get_fenced_lock(names["fenced"])
        assert fenced.lock_and_get_token() == 1
        fenced.unlock()
        assert fenced.lock_and_get_token() == 2
        stack.callback(fenced.force_unlock)
        fence = fenced.fence()
        semaphore = client.get_semaphore(names["semaphore"])
        assert semaphore.try_set_permits(3) and semaphore.try_acquire()
        assert client.get_count_down_latch(names["latch"]).try_set_count(4)
        permits = client.get_permit_expirable_semaphore(names["permits"])
        assert permits.try_set_permits(3)
        leased, unleased = permits.acquire(lease_time=60), permits.acquire()
        client.get_fenced_resource(names["resource"]).set("v", fence)
        client.redis(names["list"]).rpush(names["list"], "x")
        for kind, get in (
            ("spin", client.get_spin_lock),
            ("non-reentrant", client.get_non_reentrant_lock),
            ("nr-fair", client.get_non_reentrant_fair_lock),
        ):
            stack.callback(holding(get(names[kind])).finish)
        eventually(
            lambda: lock_status(client, names["fair"])["waiters"] == 1,
            timeout=10,
            what="a fair waiter queued",
        )
        yield EveryKind(client, waiting, fair, queued, fence, leased, unleased)


def test_status_of_every_kind(family_config: str, request: pytest.FixtureRequest) -> None:
    """Each kind told from its data, in JSON and in text. The names hold a lone ``}``,
    whose keys take the slot-safe form in a cluster: the CLI names them as the library
    does, or it would read other slots."""
    base = lock_name(request) + "}"
    names = {kind: f"{base}{kind}" for kind in EVERY_KIND}
    with every_kind(family_config, names) as made:
        client, waiting, fair, queued = made.client, made.waiting, made.fair, made.queued
        fence, leased, unleased = made.fence, made.leased, made.unleased
        started_ms = time.time() * 1000
        entries = {e["name"]: e for e in status(family_config, *names.values())}
        text = status_text(family_config, *names.values())
        assert fair.returned.is_set() and not queued.returned.is_set()

    by_kind = {kind: entries[name] for kind, name in names.items()}
    fields = set(by_kind["free"])
    assert fields >= {"name", "kind", "type", "node", "holders", "ttl_ms", "waiters"}
    assert all(set(entry) == fields for entry in entries.values())  # one shape for all

    entry = by_kind["reentrant"]
    assert entry["kind"] == "reentrant" and entry["locked"] is True
    assert entry["kinds"] == ["reentrant", "spin", "fair"]  # held twice, nobody waits
    assert counts(entry) == [(client.id, None, 2)] and 0 < entry["ttl_ms"] <= 30_000

    entry = by_kind["fair"]
    assert entry["kind"] == "fair" and counts(entry) == [(client.id, None, 1)]
    assert entry["waiters"] == 1
    [waiter] = entry["queue"]
    assert waiter["client_id"] == waiting.id and waiter["field"].startswith(waiting.id + ":")
    assert started_ms < waiter["timeout_ms"] < started_ms + 60_000
    assert waiter["alive_ms"] is not None  # a redisson-py waiter keeps its place alive

    entry = by_kind["rw"]
    assert (entry["kind"], entry["mode"]) == ("read-write", "read")
    assert counts(entry) == [(client.id, "read", 1)]

    entry = by_kind["fenced"]
    assert (entry["kind"], entry["token"], entry["locked"]) == ("fenced", 2, True)
    assert counts(entry) == [(client.id, None, 1)]

    for kind, value in (("semaphore", 2), ("latch", 4)):
        entry = by_kind[kind]
        assert (entry["kind"], entry["value"], entry["type"]) == (
            "semaphore or count-down latch",
            value,
            "string",
        )
        assert entry["locked"] is None and entry["holders"] == []

    entry = by_kind["permits"]
    assert entry["kind"] == "permit-expirable semaphore" and entry["value"] == 1
    acquired = {p["id"]: p["expires_ms"] for p in entry["permits"]["acquired"]}
    assert entry["permits"]["available"] == 1 and set(acquired) == {leased, unleased}
    assert acquired[unleased] is None
    assert started_ms + 50_000 < acquired[leased] < started_ms + 70_000

    entry = by_kind["resource"]
    assert (entry["kind"], entry["type"], entry["waiters"]) == ("fenced resource", "string", None)
    assert entry["fence"] == {"token": 2, "owner": fence.owner}

    assert (by_kind["list"]["kind"], by_kind["list"]["type"]) == ("other", "list")
    assert (by_kind["free"]["kind"], by_kind["free"]["locked"]) == ("not locked", False)

    for line in (
        f"{names['reentrant']}: cannot tell: reentrant, spin or fair lock",
        "evidence: held 2 times by one owner: reentrant",
        f"holder {client.id} owner",
        "hold count 2",
        f"{names['fair']}: cannot tell: fair or non-reentrant fair lock",
        "waiters: 1 queued",
        f"1. {waiting.id} owner",
        "keepalive (server clock) until in",
        f"{names['rw']}: read-write lock, read mode",
        f"read holder {client.id}",
        f"{names['fenced']}: fenced lock",
        "token: 2",
        f"{names['semaphore']}: cannot tell: semaphore, count-down latch or permit-expirable"
        " semaphore: 2",
        f"{names['latch']}: cannot tell: semaphore, count-down latch or permit-expirable"
        " semaphore: 4",
        f"{names['permits']}: permit-expirable semaphore: 1 available, 2 acquired",
        f"permit {unleased}: no lease",
        f"permit {leased}: lease ends in",
        f"{names['resource']}: fenced resource (a Redis string)",
        f"fence: highest token 2, owner {fence.owner}",
        f"{names['list']}: not a lock (a Redis list)",
        f"{names['free']}: not locked",
    ):
        assert line in text, (line, text)


def literal(name: str) -> str:
    """``name`` as a glob that matches only itself (test names hold ``[...]``)."""
    return "".join(f"[{c}]" if c in "*?[" else c for c in name)


def list_json(config: str, *pattern: str) -> dict[str, Any]:
    """``lock list [PATTERN] --json``: the document."""
    result = cli("lock", "list", *pattern, "--json", "--config", config, timeout=60)
    assert result.returncode == 0, result.stderr
    document: dict[str, Any] = json.loads(result.stdout)
    return document


def test_list_finds_every_kind(family_config: str, request: pytest.FixtureRequest) -> None:
    """``lock list PATTERN`` SCANs every master and finds each lock-like object of the
    pattern (a fair lock's waiter included; a list and a free name are no locks), with
    the entry ``lock status`` gives, in JSON and in text."""
    base = lock_name(request) + "}"
    names = {kind: f"{base}{kind}" for kind in EVERY_KIND}
    with every_kind(family_config, names) as made:
        document = list_json(family_config, literal(base) + "*")
        entries = {e["name"]: e for e in document["locks"]}
        statuses = {e["name"]: e for e in status(family_config, *names.values())}
        result = cli("lock", "list", literal(base) + "*", "--config", family_config)
        assert result.returncode == 0, result.stderr
        text = result.stdout
        # an idle fair lock with a waiter: only its queue keys, no hash
        made.fair.finish()
        assert made.queued.returned.wait(20) and made.queued.result is True
    listed = set(names.values()) - {names["list"], names["free"]}
    assert set(entries) == listed
    for name in listed:  # the same entry as lock status gives
        ours, theirs = dict(entries[name]), dict(statuses[name])
        for entry in (ours, theirs):  # what moves between two reads
            entry.pop("ttl_ms")
            for waiter in entry["queue"]:
                waiter.pop("alive_ms")
        assert ours == theirs, name
    assert entries[names["fair"]]["waiters"] == 1
    assert [w["client_id"] for w in entries[names["fair"]]["queue"]] == [made.waiting.id]
    assert entries[names["reentrant"]]["holders"][0]["count"] == 2
    masters = 3 if "cluster" in family_config else 1
    assert len(document["masters"]) == masters and document["keys_scanned"] >= len(listed)
    header, *rows, summary = text.strip().splitlines()
    assert header.split() == ["NAME", "KIND", "HOLDERS", "TTL", "WAITERS", "NODE"]
    assert f"{len(listed)} object(s)" in summary and f"on {masters} master(s)" in summary
    by_name = {row.split()[0]: row for row in rows}
    assert set(by_name) == listed
    assert "cannot tell: reentrant, spin or fair lock" in by_name[names["reentrant"]]
    assert f"{made.client.id}:" in by_name[names["reentrant"]]
    assert "read-write" in by_name[names["rw"]] and "fenced lock" in by_name[names["fenced"]]
    assert "value 2" in by_name[names["semaphore"]]
    every = ["reentrant", "non-reentrant", "spin", "fair", "non-reentrant fair"]
    for kind in ("spin", "non-reentrant", "nr-fair"):  # held once, nobody waits
        assert entries[names[kind]]["kinds"] == every, kind
        assert "cannot tell: reentrant, non-reentrant, spin, fair" in by_name[names[kind]]


def test_list_pages_through_a_keyspace_and_finds_an_idle_fair_queue(
    single_config: str, client: Redisson, request: pytest.FixtureRequest
) -> None:
    """Locks spread over several SCAN pages among keys of other kinds are each listed
    once; a fair lock that only has a waiter queue (its holder gone) is found by it."""
    base = lock_name(request)
    raw = client.redis()
    locks = [f"{base}:lock:{i}" for i in range(30)]
    filler = [f"{base}:filler:{i}" for i in range(2500)]
    try:
        pipe = raw.pipeline(transaction=False)
        for name in filler:
            pipe.set(name, "not a counter at all")
        for name in locks:
            pipe.hset(name, f"{client.id}:1", 1)
            pipe.pexpire(name, 60_000)
        idle = f"{base}:idle"
        keys = KeyNames.of(idle, by_slot=False)
        pipe.rpush(keys.fair_queue, f"{client.id}:9")
        pipe.zadd(keys.fair_timeouts, {f"{client.id}:9": int(time.time() * 1000) + 60_000})
        pipe.execute()
        document = list_json(single_config, literal(base) + ":*")
        names = [e["name"] for e in document["locks"]]
        assert sorted(names) == sorted([*locks, idle])
        assert document["keys_scanned"] >= len(filler)
        entry = next(e for e in document["locks"] if e["name"] == idle)
        assert (entry["kind"], entry["locked"], entry["waiters"]) == ("fair", False, 1)
    finally:
        for start in range(0, len(filler), 500):
            raw.delete(*filler[start : start + 500])
        raw.delete(*locks, keys.fair_queue, keys.fair_timeouts)


def test_list_names_the_node_it_cannot_read(
    topology_factory: Callable[..., Topology], tmp_path: Path
) -> None:
    """A master that does not answer: exit 1, one line naming its address."""
    topology = topology_factory("cluster", cluster={"node_timeout_ms": 60_000})
    config = write_config(topology, tmp_path / "cluster.yaml")
    document = yaml.safe_load(Path(config).read_text())
    document["clusterServersConfig"]["timeout"] = 1000
    document["clusterServersConfig"]["retryAttempts"] = 0
    document["clusterServersConfig"]["nodeAddresses"] = [
        f"redis://127.0.0.1:{topology.masters()[0].port}"
    ]
    Path(config).write_text(yaml.safe_dump(document))
    frozen = topology.masters()[-1]
    frozen.pause()
    try:
        result = cli("lock", "list", "--config", config, timeout=60)
    finally:
        frozen.resume()
    assert result.returncode == 1, (result.stdout, result.stderr)
    assert f"127.0.0.1:{frozen.port}" in result.stderr, result.stderr
    assert "listing locks on" in result.stderr and "Traceback" not in result.stderr


def test_status_tells_kinds_by_the_evidence_the_data_has(
    family_config: str, request: pytest.FixtureRequest
) -> None:
    """``lock status`` keeps every kind the data allows and says "cannot tell" among
    them: spin, non-reentrant and idle fair locks share the reentrant lock's layout; a
    waiter on the lock's channel rules out spin and fair; a semaphore and a latch are
    both integers, told apart only by who waits on which channel."""
    base = lock_name(request) + "}"
    with contextlib.ExitStack() as stack:
        client = stack.enter_context(Redisson.create(Config.from_yaml(family_config)))
        other = stack.enter_context(Redisson.create(Config.from_yaml(family_config)))
        names = {
            kind: f"{base}{kind}"
            for kind in ("spin", "non-reentrant", "fair", "waited", "semaphore", "latch")
        }
        for name in names.values():
            stack.callback(_delete_everything, client, name)
        spin = holding(client.get_spin_lock(names["spin"]))
        stack.callback(spin.finish)
        plain = holding(client.get_non_reentrant_lock(names["non-reentrant"]))
        stack.callback(plain.finish)
        fair = holding(client.get_fair_lock(names["fair"]))
        stack.callback(fair.finish)
        waited = holding(client.get_lock(names["waited"]))
        waiter = Owner(
            lambda: other.get_lock(names["waited"]).try_lock(20),
            other.get_lock(names["waited"]).unlock,
        )
        stack.callback(lambda: (waited.finish(), waiter.finish()))
        semaphore = client.get_semaphore(names["semaphore"])
        assert semaphore.try_set_permits(0)
        sem_waiter = Owner(
            lambda: other.get_semaphore(names["semaphore"]).try_acquire(1, 20), semaphore.release
        )
        stack.callback(lambda: (semaphore.release(), sem_waiter.finish()))
        latch = client.get_count_down_latch(names["latch"])
        assert latch.try_set_count(1)
        latch_waiter = Owner(
            lambda: other.get_count_down_latch(names["latch"]).wait(20), lambda: None
        )
        stack.callback(lambda: (latch.count_down(), latch_waiter.finish()))
        eventually(
            lambda: all(
                lock_status(client, names[k])["waiters"] for k in ("waited", "semaphore", "latch")
            ),
            timeout=10,
            what="the waiters subscribed",
        )
        entries = {e["name"]: e for e in status(family_config, *names.values())}
        text = status_text(family_config, *names.values())
    every = ["reentrant", "non-reentrant", "spin", "fair", "non-reentrant fair"]
    for kind in ("spin", "non-reentrant", "fair"):  # held once, nobody waits: no evidence
        entry = entries[names[kind]]
        assert (entry["kind"], entry["kinds"]) == ("reentrant", every), kind
        assert f"{names[kind]}: cannot tell: reentrant, non-reentrant, spin, fair or" in text
    waited_kinds = entries[names["waited"]]["kinds"]
    assert waited_kinds == ["reentrant", "non-reentrant"]  # a waiter listens on its channel
    assert entries[names["semaphore"]]["kinds"] == ["semaphore", "permit-expirable semaphore"]
    assert entries[names["latch"]]["kinds"] == ["count-down latch"]
    assert f"{names['latch']}: count-down latch: 1 (its count)" in text


def _delete_everything(client: Redisson, name: str) -> None:
    """Delete every key the kinds keep for ``name`` (the fence record never expires)."""
    manager = client.connection_manager
    keys = KeyNames.of(name, by_slot=manager.routes_by_slot)
    client.redis(name).delete(
        name, keys.fair_queue, keys.fair_timeouts, keys.fenced_token, keys.permits
    )
    client.redis(name).delete(keys.fence_record)


# -- unlock ----------------------------------------------------------------------------------


def test_unlock_needs_force_and_confirmation(
    client: Redisson, single_config: str, request: pytest.FixtureRequest
) -> None:
    name = lock_name(request)
    release, holder = hold_in_thread(client, name)
    try:
        refused = cli("lock", "unlock", name, "--config", single_config)
        assert refused.returncode == 2 and "--force" in refused.stderr
        no_tty = cli("lock", "unlock", "--force", name, "--config", single_config)
        assert no_tty.returncode == 2 and "--yes" in no_tty.stderr
        assert client.get_lock(name).is_locked()
        done = cli("lock", "unlock", "--force", "--yes", name, "--json", "--config", single_config)
        assert done.returncode == 0, done.stderr
        assert json.loads(done.stdout) == {"name": name, "unlocked": True, "kind": "reentrant"}
        assert not client.get_lock(name).is_locked()
    finally:
        release.set()
        holder.join(10)


WOKEN_WITHIN = 5.0
"""A waiter woken by a force unlock returns within this many seconds of the CLI's exit.
Measured from the exit, not from before the CLI starts: the unlock happens somewhere in
between, and on a loaded 2-core box the CLI's own start (an interpreter, imports, the
YAML, a connection) took seconds. A waiter that missed the wake-up would return only at
its 20 s wait's end (and with ``False``)."""


def force_unlock_cli(config: str, name: str) -> dict[str, Any]:
    """``lock unlock --force --yes NAME --json``: its report."""
    result = cli("lock", "unlock", "--force", "--yes", name, "--json", "--config", config)
    assert result.returncode == 0, result.stderr
    report: dict[str, Any] = json.loads(result.stdout)
    return report


def test_force_unlock_of_a_fair_lock_keeps_the_queue_and_wakes_its_head(
    single_config: str, request: pytest.FixtureRequest
) -> None:
    name = lock_name(request)
    with contextlib.ExitStack() as stack:
        holder_client, first, second = (
            stack.enter_context(Redisson.create(Config.from_yaml(single_config))) for _ in range(3)
        )
        holder = holding(holder_client.get_fair_lock(name))
        waiters = []
        for client in (first, second):  # queued in this order
            waiters.append(
                Owner(
                    lambda client=client: client.get_fair_lock(name).try_lock(20),
                    lambda client=client: client.get_fair_lock(name).unlock(),
                )
            )
            eventually(
                lambda: len(lock_status(holder_client, name)["queue"]) == len(waiters),
                timeout=10,
                what=f"{len(waiters)} fair waiter(s) queued",
            )
        stack.callback(lambda: [o.finish() for o in (holder, *waiters)])

        [entry] = status(single_config, name)
        assert [q["client_id"] for q in entry["queue"]] == [first.id, second.id]
        assert counts(entry) == [(holder_client.id, None, 1)]
        assert force_unlock_cli(single_config, name) == {
            "name": name,
            "unlocked": True,
            "kind": "fair",
        }
        forced = time.monotonic()  # the unlock happened before: see WOKEN_WITHIN
        # The head was woken (not left to find out after the holder's 30 s TTL), and the
        # waiter behind it is still queued, in its place.
        assert waiters[0].returned.wait(10) and waiters[0].result is True
        assert waiters[0].returned_at - forced < WOKEN_WITHIN
        [after] = status(single_config, name)
        assert counts(after) == [(first.id, None, 1)]
        assert [q["client_id"] for q in after["queue"]] == [second.id]
        assert not waiters[1].returned.is_set()


def test_force_unlock_of_a_read_write_lock_in_either_mode_wakes_every_waiter(
    single_config: str, request: pytest.FixtureRequest
) -> None:
    name = lock_name(request)
    with contextlib.ExitStack() as stack:
        holder_client, readers_client, writer_client = (
            stack.enter_context(Redisson.create(Config.from_yaml(single_config))) for _ in range(3)
        )
        writer = holding(holder_client.get_read_write_lock(name).write_lock())
        readers = [
            Owner(
                lambda: readers_client.get_read_write_lock(name).read_lock().try_lock(20),
                lambda: readers_client.get_read_write_lock(name).read_lock().unlock(),
            )
            for _ in range(2)
        ]
        stack.callback(lambda: [o.finish() for o in (writer, *readers)])
        eventually(
            lambda: lock_status(holder_client, name)["waiters"] == 1,
            timeout=10,
            what="the readers' client subscribed",
        )
        time.sleep(0.2)  # both readers waiting (one subscription for the client)

        [entry] = status(single_config, name)
        assert (entry["kind"], entry["mode"], entry["waiters"]) == ("read-write", "write", 1)
        assert counts(entry) == [(holder_client.id, "write", 1)]
        assert "read-write lock, write mode" in status_text(single_config, name)
        assert force_unlock_cli(single_config, name)["unlocked"] is True
        forced = time.monotonic()
        for reader in readers:  # both woken by the one message
            assert reader.returned.wait(10) and reader.result is True
            assert reader.returned_at - forced < WOKEN_WITHIN

        # Now read-held by both readers: a waiting writer is woken by the force unlock.
        late_writer = Owner(
            lambda: writer_client.get_read_write_lock(name).write_lock().try_lock(20),
            lambda: writer_client.get_read_write_lock(name).write_lock().unlock(),
        )
        stack.callback(late_writer.finish)
        eventually(
            lambda: lock_status(holder_client, name)["waiters"] == 1,
            timeout=10,
            what="the writer subscribed",
        )
        [entry] = status(single_config, name)
        assert (entry["mode"], sorted(counts(entry))) == (
            "read",
            sorted([(readers_client.id, "read", 1)] * 2),
        )
        raw = holder_client.redis(name)
        timeout_keys = f"{{{name}}}:{readers_client.id}:*:rwlock_timeout:*"
        assert len(list(raw.scan_iter(match=timeout_keys))) == 2  # one per reader
        assert force_unlock_cli(single_config, name) == {
            "name": name,
            "unlocked": True,
            "kind": "read-write",
        }
        forced = time.monotonic()
        # The readers' timeout keys went with the hash (issue 26, item 11).
        assert list(raw.scan_iter(match=timeout_keys)) == []
        assert late_writer.returned.wait(10) and late_writer.result is True
        assert late_writer.returned_at - forced < WOKEN_WITHIN
        [entry] = status(single_config, name)
        assert counts(entry) == [(writer_client.id, "write", 1)]


def test_unlock_refuses_what_is_not_a_lock(
    client: Redisson, single_config: str, request: pytest.FixtureRequest
) -> None:
    base = lock_name(request)
    semaphore = client.get_semaphore(f"{base}-semaphore")
    latch = client.get_count_down_latch(f"{base}-latch")
    permits = client.get_permit_expirable_semaphore(f"{base}-permits")
    resource = f"{base}-resource"
    other = f"{base}-other"
    try:
        assert semaphore.try_set_permits(2) and latch.try_set_count(2)
        assert permits.try_set_permits(2) and permits.try_acquire() is not None
        client.get_fenced_resource(resource).set("v", 1)
        client.redis(other).set(other, "not a number")
        for name, what in (
            (semaphore.name, "semaphore or count-down latch"),
            (latch.name, "semaphore or count-down latch"),
            (permits.name, "permit-expirable semaphore"),
            (resource, "fenced resource"),
            (other, "a Redis string"),
        ):
            result = cli("lock", "unlock", "--force", "--yes", name, "--config", single_config)
            assert result.returncode == 2, result
            assert what in result.stderr and "not a lock" in result.stderr
        assert semaphore.available_permits() == 2 and latch.get_count() == 2
        assert (permits.available_permits(), permits.acquired_permits()) == (1, 1)
        assert client.get_fenced_resource(resource).get() == b"v"
        assert client.redis(other).get(other) == b"not a number"
    finally:
        for name in (semaphore.name, latch.name, permits.name, resource, other):
            _delete_everything(client, name)


# -- run -------------------------------------------------------------------------------------


def test_run_passes_the_exit_status_through(
    single_config: str, request: pytest.FixtureRequest
) -> None:
    name = lock_name(request)
    probe = (
        "import subprocess, sys, json; "
        f"print(json.dumps(json.loads(subprocess.run({CLI!r} + ['lock', 'status', '{name}', "
        f"'--json', '--config', {single_config!r}], capture_output=True, text=True)"
        ".stdout)['locks'][0]['kind'])); sys.exit(3)"
    )
    result = cli("lock", "run", name, "--config", single_config, "--", sys.executable, "-c", probe)
    assert result.returncode == 3, result.stderr
    assert result.stdout.strip() == '"reentrant"'  # held while the command ran
    killed = cli("lock", "run", name, "--config", single_config, "--", "sh", "-c", "kill -9 $$")
    assert killed.returncode == 128 + 9
    missing = cli("lock", "run", name, "--config", single_config, "--", "no-such-command-x")
    assert missing.returncode == 127
    after = json.loads(cli("lock", "status", name, "--json", "--config", single_config).stdout)
    assert after["locks"][0]["kind"] == "not locked"


def test_run_wait_timeout(
    client: Redisson, single_config: str, request: pytest.FixtureRequest
) -> None:
    name = lock_name(request)
    release, holder = hold_in_thread(client, name)
    try:
        started = time.monotonic()
        result = cli(
            "lock",
            "run",
            name,
            "--wait",
            "0.5",
            "--json",
            "--config",
            single_config,
            "--",
            "sh",
            "-c",
            "echo ran",
        )
        assert result.returncode == EXIT_WAIT_TIMEOUT
        assert time.monotonic() - started < 10
        assert "ran" not in result.stdout
        assert json.loads(result.stderr.strip().splitlines()[-1])["acquired"] is False
    finally:
        release.set()
        holder.join(10)


CHILD = (
    "import signal, sys, time\n"
    "def on_term(*_):\n"
    "    print('child got SIGTERM', flush=True)\n"
    "    sys.exit(7)\n"
    "signal.signal(signal.SIGTERM, on_term)\n"
    "print('ready', flush=True)\n"
    "time.sleep(30)\n"
    "sys.exit(0)\n"
)


def start_run(name: str, config: str, *extra: str) -> subprocess.Popen[str]:
    process = subprocess.Popen(
        [*CLI, "lock", "run", name, "--config", config, *extra, "--", sys.executable, "-c", CHILD],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        text=True,
    )
    assert process.stdout is not None
    assert process.stdout.readline().strip() == "ready"
    return process


def test_run_forwards_sigterm_and_releases(
    single_config: str, client: Redisson, request: pytest.FixtureRequest
) -> None:
    name = lock_name(request)
    process = start_run(name, single_config)
    try:
        assert client.get_lock(name).is_locked()
        process.send_signal(signal.SIGTERM)
        out, err = process.communicate(timeout=20)
        assert "child got SIGTERM" in out
        assert process.returncode == 7, err
        assert not client.get_lock(name).is_locked()
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


def test_run_stops_the_command_when_the_lock_is_lost(
    single_topology: Topology, tmp_path: Path, client: Redisson, request: pytest.FixtureRequest
) -> None:
    config = write_config(single_topology, tmp_path / "short.yaml", lockWatchdogTimeout=1500)
    name = lock_name(request)
    process = start_run(name, config, "--json", "--grace", "2")
    try:
        assert client.redis(name).delete(name) == 1
        out, err = process.communicate(timeout=20)
        assert process.returncode == EXIT_LOCK_LOST, err
        assert "child got SIGTERM" in out
        assert "lost" in err
        report = json.loads(err.strip().splitlines()[-1])
        assert report == {"name": name, "acquired": True, "lost": True, "status": EXIT_LOCK_LOST}
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


# -- what an operator's command loads --------------------------------------------------------

_LOADED_PROBE = """
import contextlib, io, json, sys
from redisson_py.cli import main
out = io.StringIO()
with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
    status = main(json.loads(sys.argv[1]))
loaded = sorted(m for m in sys.modules if m.startswith("redisson_py"))
print(json.dumps({"status": status, "out": out.getvalue(), "loaded": loaded}))
"""


def run_counting_modules(*args: str) -> tuple[str, list[str]]:
    """``redisson-py ARGS`` run in a fresh interpreter: its output, and the modules of
    redisson_py it loaded by the end (the command's whole run, connecting included)."""
    result = subprocess.run(
        [sys.executable, "-c", _LOADED_PROBE, json.dumps(args)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["status"] == 0, (args, report["out"])
    return report["out"], report["loaded"]


def test_operator_commands_load_no_harness_and_no_chaos_suite(
    client: Redisson, single_config: str, request: pytest.FixtureRequest
) -> None:
    """An operator's commands, run to the end against a server, import neither the test
    harness nor the chaos suite (``tests/cli/test_lazy_commands.py`` holds their help and
    their early errors)."""
    name = lock_name(request)
    release, holder = hold_in_thread(client, name)
    try:
        commands = [
            ("lock", "status", name, "--json", "--config", single_config),
            ("lock", "list", literal(name), "--json", "--config", single_config),
            ("lock", "unlock", name, "--force", "--yes", "--json", "--config", single_config),
            ("config", "check", single_config, "--connect", "--json"),
        ]
        outputs = []
        for args in commands:
            out, loaded = run_counting_modules(*args)
            harness = [
                m for m in loaded if m.startswith(("redisson_py.testing", "redisson_py.chaos"))
            ]
            assert harness == [], f"{' '.join(args[:2])} loaded {harness}"
            outputs.append(json.loads(out))
        status, listing, unlocked, checked = outputs
        entry = status["locks"][0]
        assert (entry["name"], entry["kind"]) == (name, "reentrant")
        assert [h["client_id"] for h in entry["holders"]] == [client.id]
        assert [entry["name"] for entry in listing["locks"]] == [name]
        assert unlocked == {"name": name, "unlocked": True, "kind": "reentrant"}
        assert checked["connected"]
        assert not client.get_lock(name).is_locked()
    finally:
        release.set()
        holder.join(10)

"""The Java peer of the mixed-fleet tests: the real Redisson (``interop/java``), built with
Maven once per version and run as one long-lived JVM per test module and version.

The program (``interop/java/src/main/java/io/redissonpy/interop/Peer.java``) reads one
request a line, tab-separated, ``id op client thread kind name args...``, and answers
``id ok|err value epoch-ms`` when the call returns. Every ``thread`` is a Java thread of
its own, so a Java owner is Redisson's ``<client id>:<thread id>``; calls on different
threads run side by side.

Building: ``mvn -q -B package -Dredisson.version=V`` in ``interop/java`` (offline first,
``-o``, so a machine that has the artifacts in ``~/.m2`` needs no network), under a file
lock (pytest-xdist workers build it once between them), skipped when the sources and the
pom have not changed since the last build (a hash in ``target/V/peer.stamp``). Without
``java`` or ``mvn`` the tests are skipped with a message saying so, unless
``REDISSON_PY_REQUIRE_JAVA=1`` (``scripts/test`` sets it: CI must not skip them).
"""

from __future__ import annotations

import concurrent.futures
import fcntl
import hashlib
import itertools
import os
import shutil
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import pytest

# The newest 4.x and 3.x releases Maven Central serves (checked 2026-11-28).
JAVA_PEER_VERSIONS = ("4.7.0", "3.52.0")
NEWEST = JAVA_PEER_VERSIONS[0]

PEER_DIR = Path(__file__).resolve().parents[2] / "interop" / "java"
CALL_TIMEOUT = 60.0


class JavaError(Exception):
    """A call the Java peer answered with an exception (its class and message)."""


def _missing_tools() -> list[str]:
    return [tool for tool in ("java", "mvn") if shutil.which(tool) is None]


def require_tools() -> None:
    """Skip (or, with ``REDISSON_PY_REQUIRE_JAVA=1``, fail) when Java or Maven is missing."""
    missing = _missing_tools()
    if not missing:
        return
    message = (
        f"the Java peer needs {' and '.join(missing)} on PATH (OpenJDK 17+ and Maven 3.8+): "
        "the mixed-fleet tests with the real Redisson are skipped"
    )
    if os.environ.get("REDISSON_PY_REQUIRE_JAVA") == "1":
        pytest.fail(message + " (REDISSON_PY_REQUIRE_JAVA=1: they must run here)")
    pytest.skip(message)


def _source_hash(version: str) -> str:
    digest = hashlib.sha256(version.encode())
    for path in sorted([PEER_DIR / "pom.xml", *(PEER_DIR / "src").rglob("*.java")]):
        digest.update(str(path.relative_to(PEER_DIR)).encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()


def build(version: str) -> str:
    """The Java class path of the peer on Redisson ``version``, built if needed."""
    require_tools()
    target = PEER_DIR / "target" / version
    target.parent.mkdir(parents=True, exist_ok=True)
    stamp = target / "peer.stamp"
    wanted = _source_hash(version)
    with open(PEER_DIR / "target" / ".build.lock", "w") as lock_file:
        fcntl.flock(lock_file, fcntl.LOCK_EX)
        if not (stamp.exists() and stamp.read_text() == wanted):
            command = ["mvn", "-q", "-B", "package", f"-Dredisson.version={version}"]
            # Offline first: after the first download nothing needs the network.
            done = subprocess.run(
                [*command, "-o"], cwd=PEER_DIR, capture_output=True, text=True, check=False
            )
            if done.returncode != 0:
                done = subprocess.run(
                    command, cwd=PEER_DIR, capture_output=True, text=True, check=False
                )
            if done.returncode != 0:
                pytest.fail(
                    f"building the Java peer on Redisson {version} failed "
                    f"({' '.join(command)} in {PEER_DIR}):\n{done.stdout[-4000:]}"
                    f"{done.stderr[-4000:]}"
                )
            stamp.write_text(wanted)
    jar = next(target.glob("redisson-py-interop-peer-*.jar"))
    return f"{jar}{os.pathsep}{(target / 'classpath.txt').read_text().strip()}"


def parse(value: str) -> Any:
    """A reply's value: ``null``, a boolean, an integer, or the text."""
    if value == "null":
        return None
    if value in ("true", "false"):
        return value == "true"
    try:
        return int(value)
    except ValueError:
        return value


@dataclass
class Reply:
    ok: bool
    value: Any
    at: float  # when the Java call returned, as time.time()


class JavaPeer:
    """One JVM running the peer; ``call``/``start`` send it requests."""

    def __init__(
        self,
        version: str,
        classpath: str,
        log_dir: Path,
        *,
        popen: Callable[..., subprocess.Popen[str]] = subprocess.Popen,
        source: str | None = None,
    ):
        """``popen`` starts the JVM (a partition test passes its topology network's, to run
        it inside the namespace); ``source``: the address every Redisson connection
        leaves from (a client host's, so the partition's cuts apply to the peer)."""
        self.version = version
        self.log_path = log_dir / f"java-peer-{version}.log"
        self._log: IO[str] = open(self.log_path, "w")  # noqa: SIM115 (closed in close())
        self._process = popen(
            [
                "java",
                *([f"-Dredissonpy.source={source}"] if source else []),
                "-Xss512k",
                "-XX:+UseSerialGC",
                "-Xmx256m",
                "-XX:TieredStopAtLevel=1",
                "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn",
                "-cp",
                classpath,
                "io.redissonpy.interop.Peer",
            ],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._log,
            text=True,
            bufsize=1,
        )
        self._ids = itertools.count(1)
        self._client_numbers = itertools.count()
        self._pending: dict[str, concurrent.futures.Future[Reply]] = {}
        self._ready: concurrent.futures.Future[Reply] = concurrent.futures.Future()
        self._pending["0"] = self._ready
        self._write_lock = threading.Lock()
        self._reader = threading.Thread(target=self._read, name="java-peer-reader", daemon=True)
        self._reader.start()
        self.clients: dict[str, JavaClient] = {}
        self.banner = self._ready.result(timeout=120).value
        self._files = tempfile.TemporaryDirectory(prefix="java-peer-")

    def _read(self) -> None:
        assert self._process.stdout is not None
        for line in self._process.stdout:
            fields = line.rstrip("\n").split("\t")
            if len(fields) != 4:
                continue
            future = self._pending.pop(fields[0], None)
            if future is not None:
                future.set_result(Reply(fields[1] == "ok", parse(fields[2]), int(fields[3]) / 1000))
        for future in list(self._pending.values()):
            if not future.done():
                future.set_exception(JavaError(f"the Java peer exited: see {self.log_path}"))

    def start(
        self,
        op: str,
        *args: Any,
        client: str = "-",
        thread: str = "main",
        kind: str = "-",
        name: str = "-",
    ) -> concurrent.futures.Future[Reply]:
        """Send one request; the future gets its `Reply`."""
        request_id = str(next(self._ids))
        future: concurrent.futures.Future[Reply] = concurrent.futures.Future()
        self._pending[request_id] = future
        fields = [
            request_id,
            op,
            client,
            thread,
            kind,
            name,
            *("" if a is None else str(a) for a in args),
        ]
        assert self._process.stdin is not None
        with self._write_lock:
            self._process.stdin.write("\t".join(fields) + "\n")
            self._process.stdin.flush()
        return future

    def call(self, op: str, *args: Any, timeout: float = CALL_TIMEOUT, **where: str) -> Any:
        """Send one request and wait for its value; an exception in Java raises `JavaError`."""
        return value_of(self.start(op, *args, **where), timeout)

    def client(self, yaml_text: str) -> JavaClient:
        """A Redisson client on this config (one per distinct YAML, kept for the module)."""
        if yaml_text not in self.clients:
            self.clients[yaml_text] = self.fresh_client(yaml_text)
        return self.clients[yaml_text]

    def fresh_client(self, yaml_text: str) -> JavaClient:
        """A Redisson client of its own on this config (``shutdown`` it when done)."""
        name = f"c{next(self._client_numbers)}"
        path = Path(self._files.name) / f"{name}.yaml"
        path.write_text(yaml_text)
        client_id = self.call("connect", str(path), client=name, thread=f"{name}-setup")
        return JavaClient(self, name, client_id)

    def kill(self) -> None:
        """SIGKILL the JVM: its clients vanish without a word, as a crashed process's."""
        self._process.kill()
        self._process.wait()
        self.close()

    def close(self) -> None:
        try:
            if self._process.poll() is None:
                assert self._process.stdin is not None
                self._process.stdin.write("0\texit\t-\t-\t-\t-\n")
                self._process.stdin.flush()
                self._process.wait(timeout=20)
        except (OSError, subprocess.TimeoutExpired):
            self._process.kill()
            self._process.wait()
        self._log.close()
        self._files.cleanup()


def value_of(future: concurrent.futures.Future[Reply], timeout: float = CALL_TIMEOUT) -> Any:
    reply = future.result(timeout=timeout)
    if not reply.ok:
        raise JavaError(reply.value)
    return reply.value


@dataclass
class JavaClient:
    """One Redisson client in the peer (``RedissonClient``), named ``name`` there."""

    peer: JavaPeer
    name: str
    id: str

    def get(self, kind: str, name: str) -> JavaObject:
        """An object of ``kind``: ``lock``, ``fair``, ``spin``, ``fenced``, ``read``,
        ``write`` (the read or write lock of the read-write lock ``name``), ``multi``
        (``name``: the members' names, comma-separated), ``semaphore``, ``pes`` (permit
        expirable semaphore), ``latch``."""
        return JavaObject(self, kind, name)

    def shutdown(self) -> None:
        """``RedissonClient.shutdown()``: its waiting threads stop where they are."""
        self.peer.call("shutdown", client=self.name, thread=f"{self.name}-setup")

    def owner(self, thread: str) -> str:
        """The lock hash field of ``thread`` (``<client id>:<thread id>``)."""
        return str(self.peer.call("owner", client=self.name, thread=thread))


@dataclass
class JavaObject:
    client: JavaClient
    kind: str
    name: str

    def start(self, op: str, *args: Any, thread: str) -> concurrent.futures.Future[Reply]:
        return self.client.peer.start(
            op, *args, client=self.client.name, thread=thread, kind=self.kind, name=self.name
        )

    def call(self, op: str, *args: Any, thread: str, timeout: float = CALL_TIMEOUT) -> Any:
        return value_of(self.start(op, *args, thread=thread), timeout)


def timed_wait(future: concurrent.futures.Future[Reply], released_at: float) -> float:
    """How long after ``released_at`` (a time.time()) the Java call of ``future`` returned."""
    reply = future.result(timeout=CALL_TIMEOUT)
    if not reply.ok:
        raise JavaError(reply.value)
    return reply.at - released_at


def wait_until_blocked(future: concurrent.futures.Future[Reply], settle: float = 0.4) -> None:
    """Give a Java call time to start waiting, and check it is still waiting."""
    time.sleep(settle)
    assert not future.done(), future.result()

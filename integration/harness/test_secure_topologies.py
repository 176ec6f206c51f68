"""Topologies with a password (``auth``), an ACL user (``acl``) and TLS (``tls``): every
layout starts, is ready (replication, sentinels and the cluster formed through the same
protection), and the Redisson YAML it writes, with its ``${VAR}`` exported, gives a client
that takes a lock; without the secret a client is refused, naming the node. The
password never shows in the YAML, a repr or the command's output."""

from __future__ import annotations

import asyncio
import os
import stat
import subprocess
import sys
from typing import Any

import pytest

from redisson_py import AuthError, Config, ConnectError, Redisson
from redisson_py.asyncio import Redisson as AsyncRedisson
from redisson_py.testing import SpecError, start_topology
from redisson_py.testing.backends.docker_engine import docker_engine_answers, engine_location
from redisson_py.testing.topologies.security import PASSWORD_VARIABLE

CASES = [
    ("single", {"auth": True}, "process"),
    ("single", {"acl": True}, "process"),
    ("single", {"tls": True}, "process"),
    ("single", {"acl": True, "tls": True}, "container"),
    ("master-replica", {"acl": True}, "process"),
    ("sentinel", {"auth": True, "tls": True}, "process"),
    ("cluster", {"auth": True, "tls": True}, "process"),
]


def _client_config(topology: Any) -> Config:
    return Config.from_yaml(topology.redisson_yaml(), env=topology.environment())


@pytest.mark.parametrize(
    ("kind", "security", "backend_name"),
    CASES,
    ids=[f"{k}-{'+'.join(s)}-{b}" for k, s, b in CASES],
)
def test_a_protected_topology_takes_locks_and_refuses_strangers(
    kind: str, security: dict[str, bool], backend_name: str
) -> None:
    if backend_name == "container" and not docker_engine_answers():
        pytest.skip(f"no Docker engine answers at {engine_location()}")
    with start_topology(kind, backend=backend_name, security=security) as topology:
        yaml_text = topology.redisson_yaml()
        environment = topology.environment()
        if "auth" in security or "acl" in security:
            password = environment[PASSWORD_VARIABLE]
            assert password not in yaml_text and f"${{{PASSWORD_VARIABLE}}}" in yaml_text
            assert password not in repr(topology.secrets)
            env_file = topology.directory / "secrets.env"
            assert stat.S_IMODE(env_file.stat().st_mode) == 0o600
        if "tls" in security:
            assert "rediss://" in yaml_text and "redis://" not in yaml_text

        client = Redisson.create(_client_config(topology))
        try:
            for name in ("a", "b", "c"):  # on every master of a cluster
                lock = client.get_lock(f"secure:{name}")
                with lock:
                    assert lock.is_held_by_current_thread()
        finally:
            client.shutdown()

        # Without the secret: refused, naming the node.
        stranger = Config.from_yaml(yaml_text, env={PASSWORD_VARIABLE: "wrong-password"})
        if "tls" in security:
            stranger.server_config.ssl_truststore = None  # the system's CAs do not know ours
        if "auth" in security or "acl" in security or "tls" in security:
            with pytest.raises(ConnectError) as refused:
                Redisson.create(stranger)
            assert "127.0.0.1:" in str(refused.value)
            if "tls" not in security:
                assert isinstance(refused.value, AuthError)
            assert "wrong-password" not in str(refused.value)


def test_the_asyncio_client_uses_the_same_protected_config() -> None:
    with start_topology("single", backend="process", security={"acl": True, "tls": True}) as top:

        async def main() -> int:
            client = await AsyncRedisson.create(_client_config(top))
            lock = client.get_lock("secure:async")
            async with lock:
                count: int = await lock.hold_count()
            await client.shutdown()
            return count

        assert asyncio.run(main()) == 1


def test_topology_up_auth_detached_returns_at_once_and_tells_where_the_secret_is(
    tmp_path: Any,
) -> None:
    env = {**os.environ, "REDISSON_PY_REDIS_BACKEND": "process"}
    up = subprocess.run(
        [sys.executable, "-m", "redisson_py.cli", "topology", "up", "single", "--auth", "--detach"],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,  # the bug this guards against: readiness probes without the password hung
        check=False,
    )
    try:
        assert up.returncode == 0, up.stderr
        assert f"${{{PASSWORD_VARIABLE}}}" in up.stdout
        env_file = next(
            word.strip("`") for word in up.stderr.split() if word.endswith("secrets.env`")
        )
        with open(env_file, encoding="utf-8") as exports:
            exported = dict(
                line.removeprefix("export ").split("=", 1) for line in exports.read().splitlines()
            )
        password = exported[PASSWORD_VARIABLE].strip("'")
        assert password not in up.stdout and password not in up.stderr
        (tmp_path / "redisson.yaml").write_text(up.stdout)
        client = Redisson.create(
            Config.from_yaml(tmp_path / "redisson.yaml", env={PASSWORD_VARIABLE: password})
        )
        with client.get_lock("cli:secure"):
            pass
        client.shutdown()
    finally:
        subprocess.run(
            [sys.executable, "-m", "redisson_py.cli", "topology", "down", "single"],
            capture_output=True,
            env=env,
            timeout=60,
            check=False,
        )


def test_security_fields_are_checked() -> None:
    with pytest.raises(SpecError, match="exclude each other"):
        start_topology("single", backend="process", security={"auth": True, "acl": True})
    with pytest.raises(SpecError, match=r"security\.tsl.*did you mean 'tls'"):
        start_topology("single", backend="process", security={"tsl": True})

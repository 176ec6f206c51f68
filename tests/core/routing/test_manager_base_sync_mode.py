"""The ``lockSyncMode`` setting (a redisson-py extension) and how it plans the WAIT."""

from __future__ import annotations

import pytest

from redisson_py import Config, ConfigError
from redisson_py.config import LockSyncMode
from redisson_py.config.addresses import parse_address
from redisson_py.core.effects import Call
from redisson_py.core.routing.manager_base import ManagerBase
from redisson_py.core.routing.topology import TopologyView

YAML = "singleServerConfig:\n  address: redis://127.0.0.1:6379\n"


def test_default_is_wait_and_yaml_picks_waitaof() -> None:
    assert Config.from_yaml(YAML).lock_sync_mode == LockSyncMode.WAIT
    config = Config.from_yaml("lockSyncMode: WAITAOF\n" + YAML)
    assert config.lock_sync_mode == LockSyncMode.WAITAOF
    assert Config.from_yaml(config.to_yaml()).lock_sync_mode == LockSyncMode.WAITAOF


def test_an_unknown_mode_names_the_key() -> None:
    with pytest.raises(ConfigError, match="lockSyncMode"):
        Config.from_yaml("lockSyncMode: QUORUM\n" + YAML)


def test_waitaof_is_planned_even_without_replicas() -> None:
    config = Config.from_yaml("lockSyncMode: WAITAOF\n" + YAML)
    planned = ManagerBase(config).plan(Call(None, "k", (("GET", "k"),), sync_replicas=0.5))
    assert planned.commands()[-1] == ("WAITAOF", 1, 0, 500)
    plain = ManagerBase(Config.from_yaml(YAML)).plan(Call(None, "k", (("GET", "k"),), 0.5))
    assert plain.commands() == [("GET", "k")]


def test_a_master_whose_view_flags_a_replica_down_is_asked_for_its_own() -> None:
    manager = ManagerBase(Config.from_yaml(YAML))
    master = manager.view.masters[0]
    replica = parse_address("redis://127.0.0.1:6380")
    call = Call(None, "k", (("GET", "k"),), sync_replicas=0.5)
    manager.view = TopologyView.single_master(master, [replica], healthy=0)
    assert manager.plan(call).probe  # a flagged-down replica may be back already
    manager.view = TopologyView.single_master(master, [replica])
    assert not manager.plan(call).probe  # every known replica is waited for anyway
    assert not manager.plan(Call(None, "k", (("GET", "k"),))).probe  # no sync asked

"""The CLI's pieces that need no Redis."""

from __future__ import annotations

import pytest

from redisson_py.cli import COMMAND_MODULES, build_parser, main
from redisson_py.cli.topology import parse_overrides
from redisson_py.testing import TopologyError


def test_overrides_nest_and_parse_scalars() -> None:
    assert parse_overrides(
        ["replicas_per_master=1", "sentinel.down_after_ms=2000", "redis_conf.maxmemory=64mb"]
    ) == {
        "replicas_per_master": 1,
        "sentinel": {"down_after_ms": 2000},
        "redis_conf": {"maxmemory": "64mb"},
    }


def test_override_without_equals_is_refused() -> None:
    with pytest.raises(TopologyError, match="is not FIELD=VALUE"):
        parse_overrides(["replicas_per_master"])


def test_every_command_module_registers() -> None:
    parser = build_parser()
    assert "redisson_py.cli.topology" in COMMAND_MODULES
    args = parser.parse_args(["topology", "up", "single", "--backend", "process", "--detach"])
    assert args.kind == "single" and args.backend == "process" and args.detach
    assert callable(args.handler)


def test_unknown_topology_exits_1_with_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["topology", "up", "nosuch"]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert err.startswith("redisson-py: error: unknown topology 'nosuch'")

"""Which replies close their connection (`redisson_py.core.routing.refusals.stale_node`):
a node that is no longer the one to write to (READONLY, MASTERDOWN, LOADING), whatever
shape redis-py gave the error, and nothing else."""

from __future__ import annotations

from redis.exceptions import BusyLoadingError, MasterDownError, ReadOnlyError, ResponseError

from redisson_py.core.routing.refusals import refused, stale_node


def test_a_demoted_or_cut_off_or_loading_node_is_stale() -> None:
    assert stale_node([ReadOnlyError("You can't write against a read only replica.")])
    assert stale_node([MasterDownError("Link with MASTER is down")])
    assert stale_node([BusyLoadingError("Redis is loading the dataset in memory")])
    assert stale_node([1, ResponseError("READONLY You can't write against a read only replica.")])
    assert stale_node([refused("MASTERDOWN", "Link with MASTER is down", "redis://h:1")])


def test_other_replies_keep_their_connection() -> None:
    assert not stale_node([])
    assert not stale_node([b"OK", 1, None, [1, 2]])
    assert not stale_node([ResponseError("NOREPLICAS Not enough good replicas to write.")])
    assert not stale_node([ResponseError("WRONGTYPE Operation against a key")])
    assert not stale_node([refused("BUSY", "a script is running", "redis://h:1")])

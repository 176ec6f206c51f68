"""RedLock arithmetic."""

from __future__ import annotations

import random

import pytest

from redisson_py.core.flows import quorum


@pytest.mark.parametrize(("members", "need"), [(1, 1), (2, 2), (3, 2), (4, 3), (5, 3), (7, 4)])
def test_quorum_is_a_strict_majority(members: int, need: int) -> None:
    assert quorum.quorum(members) == need


def test_quorum_needs_members() -> None:
    with pytest.raises(ValueError, match="at least one"):
        quorum.quorum(0)


def test_validity_subtracts_elapsed_and_drift() -> None:
    # 10 s lease, round of 0.5 s: drift 0.1 + 0.002.
    assert quorum.validity(10.0, 0.5) == pytest.approx(10.0 - 0.5 - 0.102)


def test_a_round_longer_than_the_lease_is_invalid() -> None:
    assert quorum.validity(0.05, 0.06) < 0
    # even a round of zero length cannot beat the drift floor on a tiny lease
    assert quorum.validity(0.001, 0.0) < 0


def test_member_timeout_is_bounded() -> None:
    assert quorum.member_timeout(30.0, 3.0) == pytest.approx(0.3)
    assert quorum.member_timeout(1.0, 3.0) == pytest.approx(0.05)
    assert quorum.member_timeout(1000.0, 3.0) == pytest.approx(3.0)


def test_retry_pause_never_exceeds_what_is_left() -> None:
    rng = random.Random(1)
    assert all(quorum.retry_pause(0.005, rng) <= 0.005 for _ in range(100))
    assert all(0.01 <= quorum.retry_pause(None, rng) <= 0.1 for _ in range(100))
    assert quorum.retry_pause(-1.0, rng) == 0.0

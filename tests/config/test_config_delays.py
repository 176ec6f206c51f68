"""Delay strategies (pure, bounded), ISO-8601 durations, NAT mappers."""

from __future__ import annotations

import random

import pytest
from hypothesis import given
from hypothesis import strategies as st

from redisson_py.config import (
    ConstantDelay,
    DecorrelatedJitterDelay,
    EqualJitterDelay,
    FullJitterDelay,
    HostNatMapper,
    HostPortNatMapper,
    format_duration,
    parse_duration,
)

_seconds = st.integers(0, 10**6).map(lambda ms: ms / 1000)
_attempts = st.integers(0, 200)


@given(base=_seconds, cap=_seconds, attempt=_attempts, seed=st.integers())
def test_equal_jitter_bounds(base: float, cap: float, attempt: int, seed: int) -> None:
    ceiling = cap if (attempt >= 63 or base >= cap) else min(base * 2**attempt, cap)
    value = EqualJitterDelay(base, cap).delay(attempt, random.Random(seed))
    assert ceiling / 2 <= value <= ceiling


@given(base=_seconds, cap=_seconds, attempt=_attempts, seed=st.integers())
def test_full_jitter_bounds(base: float, cap: float, attempt: int, seed: int) -> None:
    value = FullJitterDelay(base, cap).delay(attempt, random.Random(seed))
    assert 0 <= value <= max(cap, 0.001)


@given(base=_seconds, cap=_seconds, attempt=st.integers(0, 30), seed=st.integers())
def test_decorrelated_jitter_bounds(base: float, cap: float, attempt: int, seed: int) -> None:
    strategy = DecorrelatedJitterDelay(base, cap)
    value = strategy.delay(attempt, random.Random(seed))
    assert value <= cap
    assert value >= min(base, cap)


@given(attempt=_attempts, seed=st.integers())
def test_delays_are_pure_given_the_rng(attempt: int, seed: int) -> None:
    for strategy in (
        ConstantDelay(1.5),
        EqualJitterDelay(1.0, 2.0),
        FullJitterDelay(0.1, 5.0),
        DecorrelatedJitterDelay(0.1, 5.0),
    ):
        first = strategy.delay(attempt, random.Random(seed))
        assert strategy.delay(attempt, random.Random(seed)) == first


def test_constant_and_exponential_growth() -> None:
    assert ConstantDelay(1.5).delay(7) == 1.5
    rng = random.Random(1)
    # EqualJitter with base 1 s caps at 2 s from attempt 1 on.
    assert all(1.0 <= EqualJitterDelay(1.0, 2.0).delay(a, rng) <= 2.0 for a in range(1, 50))
    assert 0.5 <= EqualJitterDelay(1.0, 2.0).delay(0, rng) <= 1.0


def test_delays_refuse_bad_arguments() -> None:
    with pytest.raises(ValueError, match="between 0 and 86400"):
        EqualJitterDelay(-1.0, 2.0)
    with pytest.raises(ValueError, match="between 0 and 86400"):
        ConstantDelay(float("nan"))
    with pytest.raises(ValueError, match="attempt"):
        ConstantDelay(1.0).delay(-1)


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        ("PT1S", 1.0),
        ("PT0.1S", 0.1),
        ("PT10S", 10.0),
        ("PT1M30S", 90.0),
        ("PT2H", 7200.0),
        ("P1D", 86400.0),
        ("PT0.000000001S", 1e-9),
        ("pt1.5s", 1.5),
        ("PT1,5S", 1.5),
        ("-PT1S", -1.0),
    ],
)
def test_parse_duration(text: str, seconds: float) -> None:
    assert parse_duration(text) == seconds


@pytest.mark.parametrize("text", ["1s", "1500", "PT", "P", "P1Y", "P1M", "PT1.5", "", "T1S"])
def test_parse_duration_refuses(text: str) -> None:
    with pytest.raises(ValueError, match="not an ISO-8601 duration"):
        parse_duration(text)


@given(nanos=st.integers(0, 10**15))
def test_duration_round_trip(nanos: int) -> None:
    seconds = nanos / 1e9
    assert parse_duration(format_duration(seconds)) == seconds


def test_format_duration_like_java() -> None:
    assert format_duration(1.0) == "PT1S"
    assert format_duration(0.1) == "PT0.1S"
    assert format_duration(90) == "PT1M30S"
    assert format_duration(0) == "PT0S"
    assert format_duration(3600.5) == "PT1H0.5S"


def test_host_port_nat_mapper() -> None:
    mapper = HostPortNatMapper(
        {"redis-master:6379": "127.0.0.1:16379", "[2001:db8::1]:7000": "[::1]:7000"}
    )
    assert mapper.map("redis-master", 6379) == ("127.0.0.1", 16379)
    assert mapper.map("redis-master", 6380) == ("redis-master", 6380)  # unmapped: as announced
    assert mapper.map("2001:db8::1", 7000) == ("::1", 7000)
    with pytest.raises(ValueError, match="host:port"):
        HostPortNatMapper({"a:1": "b"})


def test_host_nat_mapper() -> None:
    mapper = HostNatMapper({"redis-master": "127.0.0.1"})
    assert mapper.map("redis-master", 6379) == ("127.0.0.1", 6379)
    assert mapper.map("other", 1) == ("other", 1)
    assert mapper == HostNatMapper({"redis-master": "127.0.0.1"})
    assert hash(mapper) == hash(HostNatMapper({"redis-master": "127.0.0.1"}))

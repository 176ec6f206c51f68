"""How long a spin lock sleeps between tries (Redisson's ``LockOptions.BackOff``)."""

from __future__ import annotations

import math
import random
from collections.abc import Iterator
from dataclasses import dataclass

from redisson_py.errors import ArgumentError, ArgumentTypeError


def _positive(owner: str, name: str, value: float) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ArgumentTypeError(f"{owner}: {name} must be a number, not {value!r}")
    if not math.isfinite(value) or value <= 0:
        raise ArgumentError(f"{owner}: {name} must be a positive finite number, not {value!r}")
    return float(value)


@dataclass(frozen=True, slots=True)
class ExponentialBackOff:
    """Sleep ``initial_delay`` seconds after the first failed try, then ``multiplier``
    times longer after each (plus up to one millisecond per try so far, so contenders
    drift apart), never longer than ``max_delay``. Redisson's defaults: 1 ms doubling to
    128 ms."""

    initial_delay: float = 0.001
    max_delay: float = 0.128
    multiplier: float = 2.0

    def __post_init__(self) -> None:
        for name in ("initial_delay", "max_delay", "multiplier"):
            _positive("ExponentialBackOff", name, getattr(self, name))

    def delays(self) -> Iterator[float]:
        """The sleeps of one wait, in order (endless)."""
        delay, fails = min(self.initial_delay, self.max_delay), 0
        while True:
            yield delay
            fails += 1
            jitter = random.randrange(fails) / 1000
            delay = min(self.max_delay, delay * self.multiplier + jitter)


@dataclass(frozen=True, slots=True)
class ConstantBackOff:
    """Sleep ``delay`` seconds between tries (Redisson's default: 64 ms)."""

    delay: float = 0.064

    def __post_init__(self) -> None:
        _positive("ConstantBackOff", "delay", self.delay)

    def delays(self) -> Iterator[float]:
        """The sleeps of one wait, in order (endless)."""
        while True:
            yield self.delay


BackOff = ExponentialBackOff | ConstantBackOff

"""Retry and reconnection delays: Redisson's four ``DelayStrategy`` classes.

Every duration is within 0 .. 1 day (`MAX_DELAY`); the constructors raise
[`ConfigError`][redisson_py.errors.ConfigError] otherwise. Each strategy is a frozen
value with a pure `DelayStrategy.delay`: given the attempt number and a random generator
it returns seconds to wait, and touches nothing else. The YAML form is Redisson's, e.g.
``retryDelay: !<org.redisson.config.EqualJitterDelay> {baseDelay: PT1S, maxDelay: PT2S}``.
"""

from __future__ import annotations

import math
import random
from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import ClassVar, Final

from redisson_py.errors import ConfigError

_DEFAULT_RNG: Final = random.Random()

# Redisson's shift guard: past 2**62 the exponential term has long since hit the cap.
_MAX_SHIFT: Final = 62


MAX_DELAY: Final = 86400.0
"""The longest delay a strategy takes: one day (seconds). A longer one is a typo, and
would stall every retry (and the unlock that waits on it) for ever."""


def _check_seconds(name: str, value: float) -> None:
    """Raises [`ConfigError`][redisson_py.errors.ConfigError] (a ``ValueError``) unless
    0 <= value <= 1 day."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ConfigError(f"{name} must be a number of seconds, got {type(value).__name__}")
    if not (math.isfinite(value) and 0 <= value <= MAX_DELAY):
        raise ConfigError(f"{name} must be between 0 and 86400 seconds (1 day)")


def _check_attempt(attempt: int) -> None:
    if attempt < 0:
        raise ValueError(f"attempt must be >= 0, got {attempt}")


def _capped_exponential(base: float, cap: float, attempt: int) -> float:
    """``min(base * 2**attempt, cap)`` without overflow."""
    if attempt > _MAX_SHIFT or base >= cap:
        return cap
    return min(base * (1 << attempt), cap)


class DelayStrategy(ABC):
    """How long to wait before retry number ``attempt`` (0 = the first retry)."""

    JAVA_CLASS: ClassVar[str]
    """The Redisson class name used as the YAML tag."""

    @abstractmethod
    def delay(self, attempt: int, rng: random.Random | None = None) -> float:
        """Seconds to wait before retry ``attempt``; draws randomness from ``rng`` only.

        Raises `ValueError` for a negative ``attempt``.
        """


@dataclass(frozen=True)
class ConstantDelay(DelayStrategy):
    """The same delay every time (Redisson's legacy ``retryInterval``)."""

    JAVA_CLASS: ClassVar[str] = "org.redisson.config.ConstantDelay"

    delay_seconds: float
    """Seconds; YAML ``delay`` as an ISO-8601 duration."""

    def __post_init__(self) -> None:
        _check_seconds("delay", self.delay_seconds)

    def delay(self, attempt: int, rng: random.Random | None = None) -> float:
        _check_attempt(attempt)
        return float(self.delay_seconds)


@dataclass(frozen=True)
class _Backoff(DelayStrategy):
    base_delay: float
    """Seconds: the delay scale of the first retry (YAML ``baseDelay``)."""
    max_delay: float
    """Seconds: the cap (YAML ``maxDelay``)."""

    def __post_init__(self) -> None:
        _check_seconds("baseDelay", self.base_delay)
        _check_seconds("maxDelay", self.max_delay)


@dataclass(frozen=True)
class EqualJitterDelay(_Backoff):
    """Half of the capped exponential backoff, plus a random part up to the other half.

    The result lies in ``[b/2, b]`` where ``b = min(base_delay * 2**attempt, max_delay)``.
    Redisson's default for ``retryDelay`` (1 s, 2 s) and ``reconnectionDelay`` (0.1 s, 10 s).
    """

    JAVA_CLASS: ClassVar[str] = "org.redisson.config.EqualJitterDelay"

    def delay(self, attempt: int, rng: random.Random | None = None) -> float:
        _check_attempt(attempt)
        half = _capped_exponential(self.base_delay, self.max_delay, attempt) / 2
        return half + (rng or _DEFAULT_RNG).uniform(0.0, half)


@dataclass(frozen=True)
class FullJitterDelay(_Backoff):
    """A uniformly random delay in ``[0, min(base_delay * 2**attempt, max_delay)]``."""

    JAVA_CLASS: ClassVar[str] = "org.redisson.config.FullJitterDelay"

    def delay(self, attempt: int, rng: random.Random | None = None) -> float:
        _check_attempt(attempt)
        if self.base_delay <= 0:
            ceiling = self.max_delay
        else:
            ceiling = _capped_exponential(self.base_delay, self.max_delay, attempt)
        return (rng or _DEFAULT_RNG).uniform(0.0, max(ceiling, 0.001))


@dataclass(frozen=True)
class DecorrelatedJitterDelay(_Backoff):
    """Each delay is ``min(base + random[0, 3 * previous), max)``, previous starting at base.

    Redisson keeps ``previous`` as mutable state; here `next_delay` takes it as an
    argument, and `delay` replays the chain from attempt 0 with the same ``rng``
    (``attempt + 1`` draws), so the strategy stays a frozen value.
    """

    JAVA_CLASS: ClassVar[str] = "org.redisson.config.DecorrelatedJitterDelay"

    def next_delay(self, previous: float | None, rng: random.Random | None = None) -> float:
        """The delay that follows ``previous`` (``None`` before the first retry)."""
        prev = previous or self.base_delay
        jitter = (rng or _DEFAULT_RNG).uniform(0.0, 3 * prev) if prev > 0 else 0.0
        return min(self.base_delay + jitter, self.max_delay)

    def delay(self, attempt: int, rng: random.Random | None = None) -> float:
        _check_attempt(attempt)
        rng = rng or _DEFAULT_RNG
        current: float | None = None
        for _ in range(attempt + 1):
            current = self.next_delay(current, rng)
        assert current is not None  # the loop runs at least once
        return current


DELAY_CLASSES: Final[tuple[type[DelayStrategy], ...]] = (
    ConstantDelay,
    EqualJitterDelay,
    FullJitterDelay,
    DecorrelatedJitterDelay,
)
"""Every strategy, in the order error messages list them."""

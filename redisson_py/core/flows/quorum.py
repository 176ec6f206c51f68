"""RedLock arithmetic: quorum, clock drift and validity, as pure functions.

Times are seconds. The validity of a round is how long the lock can be relied on after
the round ended: the lease, minus the time the round took, minus an allowance for the
masters' clocks running at different speeds (Redlock's ``lease * 0.01 + 2 ms``).
"""

from __future__ import annotations

import random

CLOCK_DRIFT_FACTOR = 0.01
CLOCK_DRIFT_FLOOR = 0.002


def quorum(members: int) -> int:
    """Votes needed among ``members`` independent masters: a strict majority."""
    if members < 1:
        raise ValueError("a RedLock needs at least one member lock")
    return members // 2 + 1


def clock_drift(lease: float) -> float:
    """The drift allowance for a lease of ``lease`` seconds."""
    return lease * CLOCK_DRIFT_FACTOR + CLOCK_DRIFT_FLOOR


def validity(lease: float, elapsed: float) -> float:
    """Seconds the lock stays valid after a round that took ``elapsed`` seconds.

    Not positive means the round took too long for its lease: nothing may be assumed
    held, and what was acquired must be released.
    """
    return lease - elapsed - clock_drift(lease)


def member_timeout(lease: float, command_timeout: float) -> float:
    """Default per-member reply timeout of a round: 1% of the lease, at least 50 ms and
    at most the command timeout, so a paused master costs one short timeout."""
    return min(command_timeout, max(0.05, lease * 0.01))


def retry_pause(remaining: float | None, rng: random.Random | None = None) -> float:
    """Jittered pause before the next round (so contenders do not retry in lockstep),
    never longer than the wait time left."""
    pause = (rng or random).uniform(0.01, 0.1)
    return pause if remaining is None else max(0.0, min(pause, remaining))

"""The demo's options, checked, and the names of the keys one run uses."""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

from redisson_py.errors import RedissonError

TOPOLOGIES = ("single", "sentinel", "cluster")
"""What ``--topology`` may start (all on the harness's process backend)."""

KEY_PREFIX = "redisson-py-demo"


class DemoError(RedissonError):
    """The demo cannot run as asked; the message is one sentence for the user."""


@dataclass(frozen=True, slots=True)
class DemoOptions:
    """A checked demo request. ``config`` set means: use that deployment, start none."""

    topology: str = "single"
    config: Path | None = None
    workers: int = 4
    duration: float = 10.0
    think: float = 0.001
    """Seconds each worker spends outside the lock between two acquisitions."""

    @classmethod
    def parse(
        cls,
        *,
        topology: str | None,
        config: str | None,
        workers: str,
        duration: str,
        think_ms: str,
    ) -> DemoOptions:
        """Check the command line's raw values; raise `DemoError` naming the first
        bad one and what would be accepted."""
        if topology is not None and config is not None:
            raise DemoError(
                "give either --topology (start a local Redis) or --config (use yours), not both."
            )
        kind = topology or "single"
        if kind not in TOPOLOGIES:
            raise DemoError(f"unknown topology {kind!r}: choose one of {', '.join(TOPOLOGIES)}.")
        count = _number("--workers", workers, int, minimum=1, maximum=64)
        seconds = _number("--duration", duration, float, minimum=0.5, maximum=24 * 3600)
        think = _number("--think-ms", think_ms, float, minimum=0.0, maximum=10_000) / 1000
        path = None
        if config is not None:
            path = Path(config).expanduser()
            if not path.is_file():
                reason = "it does not exist" if not path.exists() else "it is not a file"
                raise DemoError(f"cannot read the config file {config!r}: {reason}.")
        return cls(kind, path, int(count), seconds, think)


def _number(
    flag: str, raw: str, kind: type[int] | type[float], *, minimum: float, maximum: float
) -> float:
    try:
        value = float(kind(raw))
    except ValueError:
        noun = "a whole number" if kind is int else "a number"
        raise DemoError(f"{flag} must be {noun}, not {raw!r}.") from None
    if not math.isfinite(value) or not minimum <= value <= maximum:
        raise DemoError(f"{flag} must be between {minimum:g} and {maximum:g}, not {raw}.")
    return value


@dataclass(frozen=True, slots=True)
class DemoKeys:
    """The keys of one run, all under ``redisson-py-demo:<run id>:`` so that a run
    against a shared deployment touches nothing else and can delete what it wrote."""

    run_id: str

    def _key(self, suffix: str) -> str:
        return f"{KEY_PREFIX}:{self.run_id}:{suffix}"

    @property
    def lock(self) -> str:
        return self._key("lock")

    @property
    def counter(self) -> str:
        """The shared counter, incremented without atomicity (GET, then SET)."""
        return self._key("counter")

    @property
    def progress(self) -> str:
        """A hash ``worker index -> acquisitions so far``; a field appears once the
        worker is connected and ready."""
        return self._key("progress")

    @property
    def start(self) -> str:
        """A list the workers block on; one entry per worker starts them together."""
        return self._key("start")

    def scratch(self) -> tuple[str, ...]:
        """Keys the run leaves behind, to delete at the end (the lock deletes itself)."""
        return (self.counter, self.progress, self.start)

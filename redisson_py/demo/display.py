"""Live progress of a demo run: a redrawn table on a terminal, plain lines otherwise.

Written with ``\\r`` and a few ANSI sequences (cursor up, clear line), so the demo needs
nothing beyond the runtime dependencies.
"""

from __future__ import annotations

import shutil
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TextIO

BAR_WIDTH = 24
LINE_EVERY = 1.0
"""Seconds between two progress lines when the output is not a terminal."""

_UP = "\x1b[{}F"  # cursor to the start of the line n lines up
_CLEAR = "\x1b[2K"
_HIDE_CURSOR = "\x1b[?25l"
_SHOW_CURSOR = "\x1b[?25h"


@dataclass(frozen=True, slots=True)
class Snapshot:
    """Progress at one moment: seconds elapsed of ``duration``, acquisitions per worker."""

    elapsed: float
    duration: float
    counts: Mapping[int, int]
    workers: int

    @property
    def total(self) -> int:
        return sum(self.counts.values())


def _bar(fraction: float, width: int) -> str:
    filled = round(max(0.0, min(1.0, fraction)) * width)
    return "#" * filled + "." * (width - filled)


class Progress:
    """Shows snapshots on ``stream``: live on a terminal, a line a second otherwise.

    Call `show` as often as convenient (it throttles itself) and `close` once,
    which leaves the last state on screen and the cursor visible.
    """

    def __init__(self, stream: TextIO, *, live: bool | None = None):
        self.stream = stream
        self.live = stream.isatty() if live is None else live
        self._drawn = 0
        self._last_line = float("-inf")

    def _render(self, snap: Snapshot) -> list[str]:
        shown = min(snap.elapsed, snap.duration)
        rate = snap.total / shown if shown > 0 else 0.0
        lines = [
            f"[{_bar(shown / snap.duration, BAR_WIDTH)}] {shown:5.1f}/{snap.duration:g} s"
            f"  {snap.total:>8,} acquisitions  {rate:>7,.0f}/s"
        ]
        top = max(snap.counts.values(), default=0) or 1
        for index in range(snap.workers):
            count = snap.counts.get(index)
            if count is None:
                lines.append(f"  worker {index:<3} starting")
                continue
            lines.append(f"  worker {index:<3} {_bar(count / top, 20)} {count:>9,}")
        return lines

    def show(self, snap: Snapshot) -> None:
        if self.live:
            # A line wider than the terminal would wrap and spoil the cursor-up redraw.
            width = max(20, shutil.get_terminal_size().columns - 1)
            lines = [line[:width] for line in self._render(snap)]
            out = [_HIDE_CURSOR] if self._drawn == 0 else [_UP.format(self._drawn)]
            out += [f"{_CLEAR}{line}\n" for line in lines]
            self.stream.write("".join(out))
            self.stream.flush()
            self._drawn = len(lines)
            return
        now = time.monotonic()
        if now - self._last_line < LINE_EVERY:
            return
        self._last_line = now
        counts = " ".join(f"w{i}={snap.counts.get(i, 0)}" for i in range(snap.workers))
        self.stream.write(
            f"{min(snap.elapsed, snap.duration):5.1f}/{snap.duration:g} s  "
            f"acquisitions={snap.total}  {counts}\n"
        )
        self.stream.flush()

    def note(self, text: str) -> None:
        """A line of its own (kept above the live table, which is redrawn below it)."""
        if self.live and self._drawn:
            self.stream.write(f"{_UP.format(self._drawn)}{_CLEAR}")
            self._drawn = 0
        self.stream.write(text + "\n")
        self.stream.flush()

    def close(self) -> None:
        if self.live:
            self.stream.write(_SHOW_CURSOR)
            self.stream.flush()

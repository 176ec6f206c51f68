"""The nemesis's journals: one JSON object a line, one file per worker and one for the
nemesis itself, written as things happen and read back by the checker.

Every record has ``op`` (what happened), ``t`` (``time.monotonic()``: on Linux one clock
for every process of the machine, so the files can be merged) and ``wall``
(``time.time()``, for people). The operations, and their other fields:

- worker ``start`` (``worker``, ``pid``, ``host``, ``mode``) and ``end``;
- ``acquire`` (``lock``, ``hold``: the attempt's id) when an acquire starts, then one of
  ``grant`` (``token``: the fenced lock's, None for a RedLock; ``owner``), ``timeout``
  (not had within the wait) or ``error`` (``error``: the exception's class, ``detail``);
- ``told`` (``lock``, ``hold``, ``reason``) when ``on_lock_lost`` reported the hold lost;
- ``write`` (``lock``, ``hold``, ``token``, ``start``: when it was sent, ``t``: when it
  returned, ``outcome``: ``accepted``, ``refused`` (a stale token), ``error`` or
  ``unfenced`` (a RedLock's write, which has no token to check), ``highest`` when
  refused);
- ``unlock`` (``lock``, ``hold``) when a release starts, then ``unlocked`` (``outcome``:
  ``released``, ``not-owned``: the hold was already lost, or ``error``);
- nemesis ``schedule`` (the planned faults), ``run-start``, ``run-end``,
  ``fault-start``/``fault-end`` (``fault``: its index, ``kind``, ``targets``: what it
  struck, resolved), ``fault-error`` (a fault skipped: ``detail`` says why),
  ``heal-error`` (undoing it failed, or a killed master's failover did not come in time:
  ``detail``), ``recovered`` (``ok``, ``seconds``), ``worker-killed`` (``host``: a worker
  that did not stop when asked).

A record is flushed as soon as it is written: a worker killed or paused mid-run leaves a
readable file, and the nemesis can look at what a worker is doing (does it hold a lock?).
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any, TextIO

__all__ = ["Journal", "Record", "holding", "read_journal", "read_journals", "read_tail"]

Record = dict[str, Any]


class Journal:
    """Appends records to one file; safe to use from several threads (the worker's
    own, and the lost-lock callback's)."""

    def __init__(self, path: Path):
        self.path = Path(path)
        self._lock = threading.Lock()
        self._file: TextIO | None = self.path.open("a", encoding="utf-8")

    def record(self, op: str, **fields: Any) -> Record:
        """Write one record now (``t`` and ``wall`` are taken here unless given)."""
        entry: Record = {"op": op, "t": time.monotonic(), "wall": time.time(), **fields}
        line = json.dumps(entry, separators=(",", ":"), default=str)
        with self._lock:
            if self._file is not None:
                self._file.write(line + "\n")
                self._file.flush()
        return entry

    def close(self) -> None:
        with self._lock:
            if self._file is not None:
                self._file.close()
                self._file = None


def read_journal(path: Path) -> list[Record]:
    """The records of one file, in order; a last line cut short (its writer was killed
    mid-write) is left out."""
    return _parse(Path(path).read_text(encoding="utf-8").splitlines())


def _parse(lines: Iterable[str]) -> list[Record]:
    records = []
    for line in lines:
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if isinstance(record, dict):
            records.append(record)
    return records


def read_tail(path: Path, size: int = 16384) -> list[Record]:
    """The last records of one file (those in its last ``size`` bytes): enough to see
    what a worker is doing now without reading a long run's whole journal."""
    with Path(path).open("rb") as file:
        file.seek(0, 2)
        end = file.tell()
        file.seek(max(0, end - size))
        data = file.read()
    lines = data.decode("utf-8", errors="replace").splitlines()
    if end > size and lines:
        lines = lines[1:]  # the first line is cut short
    return _parse(lines)


def read_journals(paths: Iterable[Path]) -> list[list[Record]]:
    """The records of each file (one list per worker)."""
    return [read_journal(path) for path in paths]


def holding(records: list[Record]) -> bool:
    """Whether the last records say the worker holds a lock now: a grant, maybe followed
    by writes, with no release started and no loss reported since."""
    for record in reversed(records):
        if record.get("op") != "write":
            return record.get("op") == "grant"
    return False

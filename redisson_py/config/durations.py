"""ISO-8601 durations as Java's ``java.time.Duration`` reads and writes them.

Redisson writes delay settings as ``PT1S``, ``PT0.1S``, ``PT1M30S``; in Python they are
seconds as floats. Precision is one nanosecond, as in Java.
"""

from __future__ import annotations

import re
from typing import Final

_NANOS_PER_SECOND: Final = 1_000_000_000

# Java's Duration.parse grammar: days, hours, minutes and seconds, each optionally signed;
# no years or months (their length is not fixed).
_DURATION: Final = re.compile(
    r"(?P<sign>[-+]?)P"
    r"(?:(?P<days>[-+]?\d+)D)?"
    r"(?:T"
    r"(?:(?P<hours>[-+]?\d+)H)?"
    r"(?:(?P<minutes>[-+]?\d+)M)?"
    r"(?:(?P<seconds>[-+]?\d+)(?:[.,](?P<fraction>\d{0,9}))?S)?"
    r")?",
    re.IGNORECASE,
)


def parse_duration(text: str) -> float:
    """Parse ``PnDTnHnMn.nS`` into seconds.

    Raises `ValueError` (without echoing more than the text given) when ``text``
    is not such a duration, e.g. ``"1s"``, ``"PT"`` or ``"P1Y"``.
    """
    match = _DURATION.fullmatch(text.strip())
    if match is None or text.strip().upper().endswith("T"):
        raise ValueError(f"not an ISO-8601 duration: {text!r}")
    parts = match.groupdict()
    if not any(parts[name] for name in ("days", "hours", "minutes", "seconds")):
        raise ValueError(f"not an ISO-8601 duration: {text!r}")
    seconds = int(parts["seconds"] or 0)
    nanos = seconds * _NANOS_PER_SECOND
    fraction = parts["fraction"] or ""
    if fraction:
        frac_nanos = int(fraction.ljust(9, "0"))
        # The fraction carries the sign of its seconds ("PT-1.5S" is minus 1.5 s).
        nanos += -frac_nanos if (parts["seconds"] or "").startswith("-") else frac_nanos
    nanos += int(parts["minutes"] or 0) * 60 * _NANOS_PER_SECOND
    nanos += int(parts["hours"] or 0) * 3600 * _NANOS_PER_SECOND
    nanos += int(parts["days"] or 0) * 86400 * _NANOS_PER_SECOND
    if parts["sign"] == "-":
        nanos = -nanos
    return nanos / _NANOS_PER_SECOND


def format_duration(seconds: float) -> str:
    """Write seconds as Java's ``Duration.toString()`` does: ``PT1S``, ``PT0.1S``, ``PT1H2M``.

    The value is rounded to the nanosecond. Negative durations are written with a sign on
    each component, as Java does.
    """
    nanos = round(seconds * _NANOS_PER_SECOND)
    if nanos == 0:
        return "PT0S"
    sign = "-" if nanos < 0 else ""
    nanos = abs(nanos)
    hours, nanos = divmod(nanos, 3600 * _NANOS_PER_SECOND)
    minutes, nanos = divmod(nanos, 60 * _NANOS_PER_SECOND)
    whole, frac = divmod(nanos, _NANOS_PER_SECOND)
    out = ["PT"]
    if hours:
        out.append(f"{sign}{hours}H")
    if minutes:
        out.append(f"{sign}{minutes}M")
    if whole or frac:
        fraction = f".{frac:09d}".rstrip("0") if frac else ""
        out.append(f"{sign}{whole}{fraction}S")
    return "".join(out)

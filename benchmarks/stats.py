"""Small statistics for noisy timings: percentiles, medians, ratios, fairness."""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence


def percentile(samples: Sequence[float], pct: float) -> float:
    """The ``pct`` percentile (0..100) of ``samples``, linear interpolation; nan if empty."""
    if not samples:
        return math.nan
    ordered = sorted(samples)
    rank = (len(ordered) - 1) * pct / 100
    low = math.floor(rank)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (rank - low)


def median(samples: Sequence[float]) -> float:
    return statistics.median(samples) if samples else math.nan


def distribution(samples: Sequence[float]) -> dict[str, float]:
    """p50, p90, p99, max, mean and count of ``samples`` (seconds stay seconds)."""
    return {
        "count": len(samples),
        "p50": percentile(samples, 50),
        "p90": percentile(samples, 90),
        "p99": percentile(samples, 99),
        "max": max(samples) if samples else math.nan,
        "mean": statistics.fmean(samples) if samples else math.nan,
    }


def paired_ratio(values: Sequence[float], baseline: Sequence[float]) -> float:
    """Median over rounds of value/baseline, each pair measured in the same round, so a
    burst of load on the machine moves both sides of a ratio together."""
    ratios = [v / b for v, b in zip(values, baseline, strict=True) if b > 0]
    return median(ratios)


def jain_fairness(counts: Sequence[float]) -> float:
    """Jain's index: 1.0 when every owner got the same share, 1/n when one got all."""
    total = sum(counts)
    squares = sum(c * c for c in counts)
    if not counts or squares == 0:
        return math.nan
    return total * total / (len(counts) * squares)

"""Issue 7's targets, judged on one run's results: MET or MISSED, with the figure."""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any

UNCONTENDED_MIN_RATIO = 0.95
HANDOFF_MAX_P50_RATIO = 1.5
HANDOFF_MAX_P99 = 0.005
REDLOCK5_MAX_RATIO = 1.3
MEMORY_TARGET_CYCLES = 1_000_000


@dataclass(frozen=True)
class Verdict:
    benchmark: str
    target: str
    figure: str
    met: bool | None
    """None: not measured as the target asks in this run (said in ``figure``)."""

    @property
    def word(self) -> str:
        return {True: "MET", False: "MISSED", None: "NOT MEASURED"}[self.met]

    def as_json(self) -> dict[str, Any]:
        return {**asdict(self), "verdict": self.word}


def _ms(seconds: float) -> str:
    return f"{seconds * 1000:.2f} ms"


def _x(ratio: float) -> str:
    """A ratio with enough digits that its verdict is visible (1.502x, not 1.50x)."""
    return f"{ratio:.3f}x"


def judge(results: dict[str, Any]) -> list[Verdict]:
    """Every target whose benchmark ran."""
    verdicts: list[Verdict] = []
    un = results.get("uncontended")
    if un:
        floor = un["median"]["floor"]
        ratio = un["ratio"]["ours"]
        verdicts.append(
            Verdict(
                "uncontended",
                f"redisson-py >= {UNCONTENDED_MIN_RATIO}x the floor",
                f"{_x(ratio)} ({un['median']['ours']:,.0f} vs {floor:,.0f} cycles/s)",
                ratio >= UNCONTENDED_MIN_RATIO,
            )
        )
        # The asyncio client is held to the same two scripts sent by redis-py's asyncio
        # client: the event loop costs both alike (its cost against the sync floor is
        # shown too).
        ratio = un["ratio_vs_asyncio_floor"]["ours-asyncio"]
        verdicts.append(
            Verdict(
                "uncontended",
                f"redisson-py asyncio >= {UNCONTENDED_MIN_RATIO}x the asyncio floor",
                f"{_x(ratio)}; {_x(un['ratio']['ours-asyncio'])} the sync floor "
                f"({un['median']['ours-asyncio']:,.0f} vs {floor:,.0f} cycles/s)",
                ratio >= UNCONTENDED_MIN_RATIO,
            )
        )
    ho = results.get("handoff")
    if ho:
        ours, ref = ho["summary"]["ours"], ho["summary"]["reference"]
        ratio = ours["p50"] / ref["p50"]
        verdicts.append(
            Verdict(
                "hand-off",
                f"p50 <= {HANDOFF_MAX_P50_RATIO}x a PUBLISH + 1 round trip",
                f"{_x(ratio)} ({_ms(ours['p50'])} vs {_ms(ref['p50'])}; {ours['count']} hand-offs)",
                ratio <= HANDOFF_MAX_P50_RATIO,
            )
        )
        verdicts.append(
            Verdict(
                "hand-off",
                f"p99 <= {_ms(HANDOFF_MAX_P99)}",
                f"{_ms(ours['p99'])} (the reference's own p99: {_ms(ref['p99'])})",
                ours["p99"] <= HANDOFF_MAX_P99,
            )
        )
    rl = results.get("redlock")
    if rl:
        ratios = rl["ratio_p50_vs_single"]
        ratio = ratios["ours-redlock-5"]
        summary = rl["summary"]
        figure = (
            f"{_x(ratio)} ({_ms(summary['ours-redlock-5']['p50'])} vs "
            f"{_ms(summary['ours-single']['p50'])})"
        )
        if "floor-5" in ratios:
            figure += (
                f"; the floor itself: 5 masters {_x(ratios['floor-5'] / ratios['floor-1'])} "
                "1 master"
            )
        verdicts.append(
            Verdict(
                "RedLock",
                f"RedLock(5) <= {REDLOCK5_MAX_RATIO}x a single lock (p50)",
                figure,
                ratio <= REDLOCK5_MAX_RATIO,
            )
        )
    wd = results.get("watchdog")
    if wd:
        per_node = wd["max_round_trips_in_a_round"] / wd["nodes"]
        verdicts.append(
            Verdict(
                "watchdog",
                "about one pipelined round trip per node per renewal interval",
                f"{wd['round_trips_per_round']:.2f} round trips per round on {wd['nodes']} node "
                f"(at most {wd['max_round_trips_in_a_round']}; {wd['rounds_seen']} rounds, "
                f"{wd['renew_commands_per_round']:.0f} RENEW calls of "
                f"{wd['batch_size']} locks each); client CPU "
                f"{wd['cpu_seconds_per_round'] * 1000:.0f} ms per round",
                wd["rounds_seen"] > 0 and per_node <= 1,
            )
        )
    mem = results.get("memory")
    if mem:
        growth = mem["growth_mb"]
        full = mem["cycles"] >= MEMORY_TARGET_CYCLES
        figure = (
            f"{growth:+.1f} MB ({mem['rss_first_mb']:.1f} MB after 10,000 cycles, "
            f"{mem['rss_last_mb']:.1f} MB after {mem['cycles']:,})"
        )
        met: bool | None = abs(growth) <= mem["limit_mb"] if not math.isnan(growth) else False
        if not full:
            figure += "; 1,000,000 cycles need --full"
            met = None if met else False
        verdicts.append(
            Verdict(
                "memory",
                f"RSS after {MEMORY_TARGET_CYCLES:,} cycles within {mem['limit_mb']:g} MB "
                "of RSS after 10,000",
                figure,
                met,
            )
        )
    return verdicts

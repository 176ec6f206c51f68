"""PNG plots of one run (matplotlib, Agg backend): bars for throughput, CDFs and box plots
for latency, a line for memory. Each function returns the file it wrote."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

from benchmarks.contenders import LABELS
from benchmarks.report import CLUSTER_LABELS, REDLOCK_LABELS

OURS_COLOR = "#c0392b"
BASELINE_COLOR = "#7f8c8d"
PEER_COLOR = "#2e86c1"


def _color(kind: str) -> str:
    if kind.startswith("ours"):
        return OURS_COLOR
    if kind.startswith(("floor", "reference")):
        return BASELINE_COLOR
    return PEER_COLOR


def _bars(path: Path, title: str, xlabel: str, items: list[tuple[str, str, float, str]]) -> Path:
    """Horizontal bars: (kind, label, value, annotation), top to bottom."""
    figure, axes = plt.subplots(figsize=(8, 0.55 * len(items) + 1.4))
    labels = [label for _, label, _, _ in items][::-1]
    values = [value for _, _, value, _ in items][::-1]
    colors = [_color(kind) for kind, _, _, _ in items][::-1]
    bars = axes.barh(labels, values, color=colors)
    for bar, (_, _, _, note) in zip(bars, items[::-1], strict=True):
        axes.text(
            bar.get_width(), bar.get_y() + bar.get_height() / 2, f" {note}", va="center", fontsize=9
        )
    axes.set_xlabel(xlabel)
    axes.set_title(title)
    axes.set_xlim(0, max(values) * 1.45)  # room for the annotations
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    plt.close(figure)
    return path


def uncontended(directory: Path, un: dict[str, Any]) -> Path:
    items = [
        (kind, LABELS[kind], rate, f"{rate:,.0f}/s  {un['ratio'][kind]:.2f}x")
        for kind, rate in sorted(un["median"].items(), key=lambda item: -item[1])
    ]
    return _bars(
        directory / "uncontended.png",
        "Uncontended lock() + unlock(), one thread",
        "cycles per second (ratio: vs the floor)",
        items,
    )


def contended(directory: Path, co: dict[str, Any], floor_rate: float | None) -> Path:
    items = []
    for kind, result in sorted(co["results"].items(), key=lambda item: -item[1]["rate"]):
        ratio = f"  {result['rate'] / floor_rate:.2f}x" if floor_rate else ""
        note = f"{result['rate']:,.0f}/s{ratio}  fairness {result['fairness']:.2f}"
        items.append((kind, LABELS[kind], result["rate"], note))
    return _bars(
        directory / "contended.png",
        f"Contended: {co['layout']} on one lock",
        "acquisitions per second (ratio: vs the uncontended floor)",
        items,
    )


def handoff(directory: Path, ho: dict[str, Any]) -> Path:
    figure, axes = plt.subplots(figsize=(8, 4.5))
    for kind, samples in ho["samples"].items():
        ordered = sorted(s * 1000 for s in samples)
        fractions = [(i + 1) / len(ordered) for i in range(len(ordered))]
        style = "--" if kind == "reference" else "-"
        axes.step(
            ordered,
            fractions,
            style,
            where="post",
            label=LABELS[kind],
            color=None if kind not in ("ours", "reference") else _color(kind),
        )
    axes.set_xscale("log")
    axes.set_xlabel("hand-off latency, ms (log scale)")
    axes.set_ylabel("fraction of hand-offs")
    axes.set_title("Hand-off: release() -> blocked waiter's acquire() returns (CDF)")
    axes.grid(True, which="both", alpha=0.3)
    axes.legend(loc="lower right", fontsize=9)
    figure.tight_layout()
    path = directory / "handoff.png"
    figure.savefig(path, dpi=110)
    plt.close(figure)
    return path


def redlock(directory: Path, rl: dict[str, Any], name: str = "redlock.png") -> Path:
    """Box plots of every contender's cycle latency (``rl``: one of the RedLock runs)."""
    kinds = list(rl["samples"])
    figure, axes = plt.subplots(figsize=(8, 4.5))
    data = [[s * 1000 for s in rl["samples"][kind]] for kind in kinds]
    boxes = axes.boxplot(data, vert=False, showfliers=False, patch_artist=True, whis=(1, 99))
    for patch, kind in zip(boxes["boxes"], kinds, strict=True):
        patch.set_facecolor(_color(kind))
        patch.set_alpha(0.6)
    axes.set_yticks(range(1, len(kinds) + 1), [REDLOCK_LABELS[k] for k in kinds])
    delay = rl.get("delay_seconds")
    if delay:
        # Every contender pays the added round trip: a narrow range, read best linearly.
        axes.set_xlabel("acquire + release, ms (whiskers p1-p99)")
        axes.set_title(f"RedLock vs a single lock, {delay * 1000:g} ms round trip added")
    else:
        axes.set_xscale("log")
        axes.set_xlabel("acquire + release, ms (log scale; whiskers p1-p99)")
        axes.set_title("RedLock over independent masters vs a single lock")
    axes.grid(True, axis="x", which="both", alpha=0.3)
    figure.tight_layout()
    path = directory / name
    figure.savefig(path, dpi=110)
    plt.close(figure)
    return path


def cluster(directory: Path, cl: dict[str, Any]) -> Path:
    floor = cl["median"]["floor"]
    items = [
        (kind, CLUSTER_LABELS[kind], rate, f"{rate:,.0f}/s  {rate / floor:.2f}x")
        for kind, rate in cl["median"].items()
    ]
    return _bars(
        directory / "cluster.png",
        f"Cluster, 3 masters: {cl['layout']}",
        "acquisitions per second (ratio: vs the floor)",
        items,
    )


def asyncio_contended(directory: Path, ac: dict[str, Any]) -> Path:
    floor = ac["median"]["floor-asyncio-waiting"]
    items = [
        (
            kind,
            LABELS[kind],
            rate,
            f"{rate:,.0f}/s  {rate / floor:.2f}x  fairness {ac['fairness'][kind]:.2f}",
        )
        for kind, rate in ac["median"].items()
    ]
    return _bars(
        directory / "asyncio_contended.png",
        f"Contended asyncio: {ac['layout']}",
        "acquisitions per second (ratio: vs the floor)",
        items,
    )


def memory(directory: Path, mem: dict[str, Any]) -> Path:
    figure, axes = plt.subplots(figsize=(8, 3.5))
    cycles = [p["cycles"] for p in mem["points"]]
    rss = [p["rss_mb"] for p in mem["points"]]
    axes.plot(cycles, rss, marker="o", color=OURS_COLOR)
    first = rss[0]
    axes.axhspan(
        first - mem["limit_mb"],
        first + mem["limit_mb"],
        color="#2ecc71",
        alpha=0.15,
        label=f"within {mem['limit_mb']:g} MB of the RSS after 10,000 cycles",
    )
    axes.set_xlabel("lock() + unlock() cycles")
    axes.set_ylabel("client RSS, MiB")
    axes.set_title("Client memory over lock/unlock cycles")
    axes.legend(loc="lower right", fontsize=9)
    axes.grid(True, alpha=0.3)
    figure.tight_layout()
    path = directory / "memory.png"
    figure.savefig(path, dpi=110)
    plt.close(figure)
    return path


def handoff_rtt(directory: Path, ho: dict[str, Any]) -> Path:
    """Hand-off p50 of every contender against the round trip added (issue 42)."""
    figure, axes = plt.subplots(figsize=(8, 4.5))
    delays = list(ho["by_delay"])
    kinds = list(ho["by_delay"][delays[0]]["summary"])
    for kind in kinds:
        values = [ho["by_delay"][d]["summary"][kind]["p50"] * 1000 for d in delays]
        style = "--" if kind == "reference" else "-"
        axes.plot([float(d) for d in delays], values, style, marker="o", label=LABELS[kind])
    axes.set_xlabel("round trip added by the delay proxy, ms")
    axes.set_yscale("log")  # redis-py's polling waiter is tens of ms above the rest
    axes.set_ylabel("hand-off p50, ms (log scale)")
    axes.set_title("Hand-off latency against round trip")
    axes.grid(True, alpha=0.3)
    axes.legend(loc="upper left", fontsize=9)
    figure.tight_layout()
    path = directory / "handoff_rtt.png"
    figure.savefig(path, dpi=110)
    plt.close(figure)
    return path


def draw_all(directory: Path, results: dict[str, Any]) -> list[Path]:
    """Every plot whose benchmark ran."""
    directory.mkdir(parents=True, exist_ok=True)
    un = results.get("uncontended")
    paths = []
    if un:
        paths.append(uncontended(directory, un))
    if results.get("handoff"):
        paths.append(handoff(directory, results["handoff"]))
    if results.get("contended"):
        paths.append(
            contended(directory, results["contended"], un["median"]["floor"] if un else None)
        )
    if results.get("queued", {}).get("handoff_rtt"):
        paths.append(handoff_rtt(directory, results["queued"]["handoff_rtt"]))
    if results.get("asyncio_contended"):
        paths.append(asyncio_contended(directory, results["asyncio_contended"]))
    if results.get("redlock"):
        paths.append(redlock(directory, results["redlock"]))
        if results["redlock"].get("rtt"):
            paths.append(redlock(directory, results["redlock"]["rtt"], "redlock_rtt.png"))
    if results.get("cluster"):
        paths.append(cluster(directory, results["cluster"]))
    if results.get("memory"):
        paths.append(memory(directory, results["memory"]))
    return paths


TOPOLOGY_STYLE = {"single": ("-", "o"), "cluster": ("--", "s")}


def _style(kind: str) -> tuple[str, str]:
    return TOPOLOGY_STYLE.get(kind, (":", "^"))


def waiters(directory: Path, runs: dict[str, Any]) -> Path:
    """Wake-up latency, memory per waiter and pub/sub connections against the number
    of asyncio waiters; the threads case as a lone marker."""
    figure, (latency, memory, connections) = plt.subplots(1, 3, figsize=(13, 4.2))
    for kind, result in runs.items():
        line, marker = _style(kind)
        tasks = [c for c in result["cases"] if c["kind"] == "asyncio"]
        threads = [c for c in result["cases"] if c["kind"] == "threads"]
        counts = [c["waiters"] for c in tasks]
        for pct, color in (("p50", OURS_COLOR), ("p99", PEER_COLOR)):
            latency.plot(
                counts,
                [c["latency"][pct] * 1000 for c in tasks],
                line,
                marker=marker,
                color=color,
                label=f"{kind} {pct}",
            )
            for case in threads:
                latency.plot(
                    case["waiters"], case["latency"][pct] * 1000, "x", color=color, markersize=9
                )
        memory.plot(
            counts,
            [c["rss_bytes_per_waiter"] / 1024 for c in tasks],
            line,
            marker=marker,
            color=OURS_COLOR,
            label=f"{kind}, tasks (RSS)",
        )
        memory.plot(
            counts,
            [(c["traced_bytes_per_waiter"] or math.nan) / 1024 for c in tasks],
            line,
            marker=marker,
            color=BASELINE_COLOR,
            label=f"{kind}, tasks (traced)",
        )
        for case in threads:
            memory.plot(
                case["waiters"],
                case["rss_bytes_per_waiter"] / 1024,
                "x",
                color=PEER_COLOR,
                markersize=9,
                label=f"{kind}, {case['waiters']:,} threads (RSS)",
            )
        connections.plot(
            counts,
            [c["pubsub_per_node_max"] for c in tasks],
            line,
            marker=marker,
            color=OURS_COLOR,
            label=f"{kind}: pub/sub, max per node",
        )
        connections.plot(
            counts,
            [max(row["command"] for row in c["connections"]) for c in tasks],
            line,
            marker=marker,
            color=BASELINE_COLOR,
            label=f"{kind}: command, max per node",
        )
    latency.set_title("Wake-up latency (x: the threads case)")
    latency.set_ylabel("ms (log scale)")
    memory.set_title("Memory per waiter")
    memory.set_ylabel("KiB")
    connections.set_title("Connections per node")
    connections.set_ylabel("connections (log scale)")
    for axes in (latency, memory, connections):
        axes.set_xscale("log")
        axes.set_xlabel("waiters (asyncio tasks)")
        axes.grid(True, which="both", alpha=0.3)
        axes.legend(fontsize=7)
    latency.set_yscale("log")
    connections.set_yscale("log")
    figure.tight_layout()
    path = directory / "waiters.png"
    figure.savefig(path, dpi=110)
    plt.close(figure)
    return path


def held(directory: Path, runs: dict[str, Any]) -> Path:
    """Client CPU per renewal round and round trips per node against the locks held,
    with a line of slope 1 (linear) through the first point."""
    figure, (cpu, trips) = plt.subplots(1, 2, figsize=(11, 4.2))
    for kind, result in runs.items():
        line, marker = _style(kind)
        cases = result["cases"]
        locks = [c["locks"] for c in cases]
        values = [c["cpu_seconds_per_round"] * 1000 for c in cases]
        cpu.plot(locks, values, line, marker=marker, color=OURS_COLOR, label=kind)
        cpu.plot(
            locks,
            [values[0] * n / locks[0] for n in locks],
            ":",
            color=BASELINE_COLOR,
            label=f"{kind}: linear from the first point",
        )
        trips.plot(
            locks,
            [c["max_round_trips_per_master_per_round"] for c in cases],
            line,
            marker=marker,
            color=OURS_COLOR,
            label=f"{kind}: round trips per master",
        )
        trips.plot(
            locks,
            [c["max_renew_calls_per_master_per_round"] for c in cases],
            line,
            marker=marker,
            color=PEER_COLOR,
            label=f"{kind}: RENEW calls per master",
        )
    cpu.set_title("Client CPU per renewal round")
    cpu.set_ylabel("ms (log scale)")
    trips.set_title("Per master and round")
    trips.set_ylabel("count (log scale)")
    for axes in (cpu, trips):
        axes.set_xscale("log")
        axes.set_yscale("log")
        axes.set_xlabel("locks held by one client")
        axes.grid(True, which="both", alpha=0.3)
        axes.legend(fontsize=8)
    figure.tight_layout()
    path = directory / "held.png"
    figure.savefig(path, dpi=110)
    plt.close(figure)
    return path


def names(directory: Path, runs: dict[str, Any]) -> Path:
    """Client RSS over distinct lock names, one line per topology."""
    figure, axes = plt.subplots(figsize=(8, 3.8))
    for kind, result in runs.items():
        line, marker = _style(kind)
        axes.plot(
            [p["cycles"] for p in result["points"]],
            [p["rss_mb"] for p in result["points"]],
            line,
            marker=marker,
            color=OURS_COLOR,
            label=f"{kind}: {result['keys_left']:,} keys left after the TTL",
        )
    axes.set_xlabel("distinct lock names cycled (lock + unlock each)")
    axes.set_ylabel("client RSS, MiB")
    axes.set_title("Client memory over distinct lock names")
    axes.set_ylim(bottom=0)
    axes.grid(True, alpha=0.3)
    axes.legend(loc="lower right", fontsize=9)
    figure.tight_layout()
    path = directory / "names.png"
    figure.savefig(path, dpi=110)
    plt.close(figure)
    return path


def draw_scale(directory: Path, results: dict[str, Any]) -> list[Path]:
    """Every plot of the scale run whose benchmark ran."""
    directory.mkdir(parents=True, exist_ok=True)
    drawers = {"waiters": waiters, "held": held, "names": names}
    return [draw(directory, results[name]) for name, draw in drawers.items() if results.get(name)]

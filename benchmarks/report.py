"""The run's results as markdown tables (printed and saved) and as JSON."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from benchmarks.contenders import LABELS
from benchmarks.machine import describe
from benchmarks.targets import Verdict

REDLOCK_LABELS = {
    "floor-1": "floor, 1 master",
    "floor-5": "floor, 5 masters (sent to all, then read)",
    "ours-single": "redisson-py single lock (baseline)",
    "ours-redlock-3": "redisson-py RedLock(3)",
    "ours-redlock-5": "redisson-py RedLock(5)",
    "pottery-3": "pottery Redlock, 3 masters",
    "pottery-5": "pottery Redlock, 5 masters",
}
CLUSTER_LABELS = {
    "floor": "floor: the 2 scripts sent per node by redis-py",
    "ours": "redisson-py (replica sync on)",
    "ours-sync-off": "redisson-py (replica sync off)",
    "redis-py": "redis-py Lock on RedisCluster",
}


def _ms(seconds: float) -> str:
    return "n/a" if math.isnan(seconds) else f"{seconds * 1000:.2f}"


def _table(header: list[str], rows: list[list[str]], *, text_columns: int = 1) -> list[str]:
    """A markdown table; the first ``text_columns`` are left-aligned, numbers right."""
    aligns = ["---"] * text_columns + ["---:"] * (len(header) - text_columns)
    lines = ["| " + " | ".join(header) + " |", "| " + " | ".join(aligns) + " |"]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return lines


def _targets(verdicts: list[Verdict]) -> list[str]:
    rows = [[v.benchmark, v.target, v.figure, f"**{v.word}**"] for v in verdicts]
    return [
        "## Targets",
        "",
        *_table(["benchmark", "target", "figure", "verdict"], rows, text_columns=4),
        "",
    ]


def _uncontended(un: dict[str, Any]) -> list[str]:
    rows = []
    for kind, rate in sorted(un["median"].items(), key=lambda item: -item[1]):
        rows.append([LABELS[kind], f"{rate:,.0f}", f"{un['ratio'][kind]:.2f}x"])
    return [
        "## Uncontended `lock()` + `unlock()`",
        "",
        f"One thread (or task), one lock. Contenders take turns of {un['cycles_per_turn']} "
        f"cycles in a rotating order; {un['turns_per_block']} turns each make a block; "
        f"rate: median of {un['blocks']} blocks; ratio: median over blocks of rate / the "
        "floor's rate in the same block.",
        "",
        *_table(["contender", "cycles/s", "vs floor"], rows),
        "",
    ]


def _handoff(ho: dict[str, Any]) -> list[str]:
    rows = []
    for kind, s in ho["summary"].items():
        rows.append(
            [
                LABELS[kind],
                _ms(s["p50"]),
                _ms(s["p90"]),
                _ms(s["p99"]),
                _ms(s["max"]),
                f"{ho['ratio_p50_vs_reference'][kind]:.2f}x",
                str(s["count"]),
            ]
        )
    low, high = ho["hold_seconds"]
    return [
        "## Hand-off latency",
        "",
        "From the holder's `release()` call to a blocked waiter's `acquire()` returning, "
        f"waiter in another process; the holder releases {low * 1000:.0f}-{high * 1000:.0f} ms "
        "after the waiter blocked (uniformly random). Reference: a PUBLISH, and one round "
        "trip by the subscriber once the message arrives.",
        "",
        *_table(
            ["contender", "p50 ms", "p90 ms", "p99 ms", "max ms", "p50 vs reference", "hand-offs"],
            rows,
        ),
        "",
    ]


def _contended(co: dict[str, Any], floor_rate: float | None) -> list[str]:
    rows = []
    for kind, r in co["results"].items():
        versus = f"{r['rate'] / floor_rate:.2f}x" if floor_rate else "n/a"
        rows.append([LABELS[kind], f"{r['rate']:,.0f}", versus, f"{r['fairness']:.3f}", _cpu_us(r)])
    return [
        f"## Contended: {co['layout']} on one lock",
        "",
        f"Empty critical section; median of {co['windows']} windows of "
        f"{co['window_seconds']:g} s. Baseline: the floor's uncontended rate in this run "
        "(it cannot wait for a lock, so it has no contended figure). Fairness: Jain's index "
        "over the 8 owners' acquisitions (1 = equal shares, 0.125 = one owner took all). "
        "Client CPU: both processes' CPU time over the windows per acquisition.",
        "",
        *_table(
            ["contender", "acquisitions/s", "vs floor (uncontended)", "fairness", CPU_COLUMN],
            rows,
        ),
        "",
    ]


def _queued(qu: dict[str, Any]) -> list[str]:
    """Issue 42: hand-off p50 of every contender against the added round trip, and the
    contended run with a round trip added."""
    lines = []
    ho = qu.get("handoff_rtt")
    if ho:
        delays = list(ho["by_delay"])
        kinds = list(ho["by_delay"][delays[0]]["summary"])
        rows = [
            [LABELS[kind], *(_ms(ho["by_delay"][d]["summary"][kind]["p50"]) for d in delays)]
            for kind in kinds
        ]
        lines += [
            "## Hand-off against round trip (the queued lock, issue 42)",
            "",
            "Hand-off p50 (as above) with a delay proxy adding the round trip shown between "
            "every process and the server.",
            "",
            *_table(["contender", *(f"+{d} ms" for d in delays)], rows),
            "",
        ]
    co = qu.get("contended_rtt")
    if co:
        rows = [
            [LABELS[kind], f"{r['rate']:,.0f}", f"{r['fairness']:.3f}", _cpu_us(r)]
            for kind, r in co["results"].items()
        ]
        lines += [
            f"## Contended with {co['delay_seconds'] * 1000:g} ms added: {co['layout']} on one"
            " lock",
            "",
            *_table(["contender", "acquisitions/s", "fairness", CPU_COLUMN], rows),
            "",
        ]
    return lines


CPU_COLUMN = "client CPU (us/acquisition)"


def _cpu_us(result: dict[str, Any]) -> str:
    """The clients' CPU per acquisition, or "n/a" in results from before it was measured."""
    cpu = result.get("client_cpu_us")
    return "n/a" if cpu is None else f"{cpu:,.0f}"


def _asyncio_contended(ac: dict[str, Any]) -> list[str]:
    floor = ac["median"]["floor-asyncio-waiting"]
    rows = [
        [LABELS[kind], f"{rate:,.0f}", f"{rate / floor:.2f}x", f"{ac['fairness'][kind]:.3f}"]
        for kind, rate in ac["median"].items()
    ]
    return [
        f"## Contended asyncio: {ac['layout']}",
        "",
        "Empty critical section; the contenders take turns of one window of "
        f"{ac['window_seconds']:g} s each, in a rotating order; rate: median of "
        f"{ac['rounds']} windows; redisson-py vs the floor (median over rounds): "
        f"{ac['ratio']:.2f}x, vs the bound {ac['ratio_vs_queued']:.2f}x. The floor sends "
        "the two scripts and waits for the unlock message as any lock shared with other "
        "processes must; the bound queues each name's tasks in the process (no round trip "
        "spent waiting, and no other process ever served). Fairness: Jain's index over the "
        "100 tasks' acquisitions (median over windows).",
        "",
        *_table(["contender", "acquisitions/s", "vs floor", "fairness"], rows),
        "",
    ]


def _redlock(rl: dict[str, Any]) -> list[str]:
    rows = []
    for kind, s in rl["summary"].items():
        rows.append(
            [
                REDLOCK_LABELS[kind],
                _ms(s["p50"]),
                _ms(s["p99"]),
                f"{rl['ratio_p50_vs_floor5'][kind]:.2f}x",
                f"{rl['ratio_p50_vs_single'][kind]:.2f}x",
            ]
        )
    lines = [
        "## RedLock: acquire + release latency, uncontended",
        "",
        "Independent masters of the harness's `redlock` topology; the single lock is on the "
        "first of them. Contenders take turns of a few cycles in a rotating order; ratios: "
        "median over blocks of turns of p50 / the yardstick's p50 in the same block (the "
        "5-master floor: the two scripts sent to every master, then every reply read).",
        "",
        *_table(
            ["contender", "p50 ms", "p99 ms", "p50 vs 5-master floor", "p50 vs single lock"],
            rows,
        ),
        "",
    ]
    rtt = rl.get("rtt")
    if rtt:
        rows = [
            [
                REDLOCK_LABELS[kind],
                _ms(s["p50"]),
                _ms(s["p99"]),
                f"{rtt['ratio_p50_vs_single'][kind]:.2f}x",
            ]
            for kind, s in rtt["summary"].items()
        ]
        lines += [
            f"### With {rtt['delay_seconds'] * 1000:g} ms of round trip (delay proxies)",
            "",
            "Every master behind a delay proxy in a process of its own (half the delay each "
            "way; measured added round trip "
            f"{rtt['measured_added_round_trip'] * 1000:.2f} ms, sleep granularity included).",
            "",
            *_table(["contender", "p50 ms", "p99 ms", "p50 vs single lock"], rows),
            "",
        ]
    return lines


def _cluster(cl: dict[str, Any]) -> list[str]:
    peer = cl["median"].get("redis-py")
    header = ["contender", "acquisitions/s", "vs floor"] + (["vs redis-py Lock"] if peer else [])
    rows = [
        [CLUSTER_LABELS[kind], f"{rate:,.0f}", f"{rate / cl['median']['floor']:.2f}x"]
        + ([f"{rate / peer:.2f}x"] if peer else [])
        for kind, rate in cl["median"].items()
    ]
    versus = cl.get("ratio_vs_redis_py")
    peer_text = (
        " redis-py's `Lock` on `RedisCluster` (no replica sync) is the peer: redisson-py "
        f"vs it (median over rounds): {versus['ours-sync-off']:.2f}x with replica sync off, "
        f"{versus['ours']:.2f}x with it on."
        if versus
        else ""
    )
    return [
        "## Cluster: many independent locks across 3 masters",
        "",
        f"{cl['layout']}, no name shared (nothing contends); the harness's `cluster` "
        "topology (3 masters, 1 replica each: with replica sync on, every acquire is "
        "followed by a WAIT for the replica, in redisson-py and the floor). Rounds of "
        f"{cl['window_seconds']:g} s, the contenders' order rotating; rate: median of "
        f"{cl['rounds']} rounds; redisson-py (sync on) vs the floor (median over rounds): "
        f"{cl['ratio']:.2f}x, reported without a target: on a machine whose cores the "
        "servers share with the clients it measures the interpreter's cost per call." + peer_text,
        "",
        *_table(header, rows),
        "",
        *_cluster_cpu(cl),
    ]


def _cluster_cpu(cl: dict[str, Any]) -> list[str]:
    """Where the cluster's time goes: CPU per acquisition, clients and the rest."""
    cpu = cl.get("cpu")
    if not cpu or any("rest_us" not in cpu[kind] for kind in cpu):
        return []
    rows = [
        [
            CLUSTER_LABELS[kind],
            f"{split['client_us']:.0f}",
            f"{split['rest_us']:.0f}",
            f"{split['client_us'] + split['rest_us']:.0f}",
            f"{split['idle_cores']:.2f}",
        ]
        for kind, split in cpu.items()
    ]
    return [
        "Where the time goes: CPU microseconds per acquisition (medians over rounds): the "
        "two client processes' own (user and system, all threads), the rest of the "
        "machine's (the six Redis servers, and anything else running), and the cores left "
        "idle. The clients and the servers share the cores, so a client that spends more "
        "per acquisition leaves the servers less.",
        "",
        *_table(
            ["contender", "clients us", "rest us", "total us", "idle cores"],
            rows,
        ),
        "",
    ]


def _loads(results: dict[str, Any]) -> list[str]:
    """The machine's 1-minute load average around each benchmark (other programs on a
    shared machine skew timings; say how busy it was)."""
    rows = []
    for name, result in results.items():
        before, after = result.get("load_average_before"), result.get("load_average_after")
        rows.append(
            [
                name,
                f"{before[0]:.2f}" if before else "n/a",
                f"{after[0]:.2f}" if after else "n/a",
                f"{result.get('seconds', math.nan):.0f}",
            ]
        )
    return [
        "## Machine load",
        "",
        "The 1-minute load average before and after each benchmark (2 cores: above about "
        "0.5, other programs were competing for them).",
        "",
        *_table(["benchmark", "load before", "load after", "seconds"], rows),
        "",
    ]


def _watchdog(wd: dict[str, Any]) -> list[str]:
    runs = [wd] + ([wd["replicated"]] if wd.get("replicated") else [])

    def row(label: str, value: Any) -> list[str]:
        return [label, *(value(run) for run in runs)]

    rows = [
        row("locks held by one client (no lease)", lambda r: f"{r['locks']:,}"),
        row("renewal interval", lambda r: f"{r['renew_interval_seconds']:g} s"),
        row("renewal rounds observed", lambda r: str(r["rounds_seen"])),
        row("round trips per round (1 node)", lambda r: f"{r['round_trips_per_round']:.2f}"),
        row("RENEW calls per round", lambda r: f"{r['renew_commands_per_round']:.0f}"),
        row("WAIT commands per round", lambda r: f"{r.get('wait_commands_per_round', 0):.0f}"),
        row("connections used for renewal", lambda r: str(r["connections_used_for_renewal"])),
        row(
            "other round trips per interval",
            lambda r: f"{r['other_round_trips_per_interval']:.2f}",
        ),
        row("client CPU per round", lambda r: f"{r['cpu_seconds_per_round'] * 1000:.1f} ms"),
        row("client CPU share of wall time", lambda r: f"{r['cpu_share_of_wall_time']:.1%}"),
    ]
    headers = ["figure", "single server"] + (
        ["master + 1 replica, replica sync on"] if len(runs) > 1 else []
    )
    return [
        "## Watchdog: cost of keeping 10,000 locks",
        "",
        "Round trips counted by a RESP-parsing loopback proxy between the client and the "
        "master (a round trip = what the client sends until it has every reply); CPU is the "
        "client process's `process_time()` while its main thread sleeps. With replica sync "
        "on, a renewal counts only once the replicas acknowledged it: one `WAIT` per node "
        "and round, pipelined behind the renewals.",
        "",
        *_table(headers, rows),
        "",
    ]


def _memory(mem: dict[str, Any]) -> list[str]:
    rows = [[f"{p['cycles']:,}", f"{p['rss_mb']:.1f}"] for p in mem["points"]]
    return [
        "## Memory: client RSS over lock/unlock cycles",
        "",
        f"Fresh process, one thread, one lock; {mem['cycles']:,} cycles at "
        f"{mem['cycles_per_second']:,.0f}/s; growth from 10,000 cycles: "
        f"{mem['growth_mb']:+.1f} MB.",
        "",
        *_table(["cycles", "RSS MiB"], rows),
        "",
    ]


def markdown(document: dict[str, Any], verdicts: list[Verdict]) -> str:
    """The whole report: run line, targets, one table per benchmark."""
    results = document["results"]
    lines = [
        "# redisson-py benchmarks",
        "",
        f"Run: {describe(document['machine'])}.",
        "",
        f"Command: `{document['command']}`; took {document['seconds']:.0f} s. Every figure "
        "comes from this one run; every peer was measured against the same redis-server "
        "as the baseline.",
        "",
        *_targets(verdicts),
    ]
    un = results.get("uncontended")
    if un:
        lines += _uncontended(un)
    if results.get("handoff"):
        lines += _handoff(results["handoff"])
    if results.get("contended"):
        lines += _contended(results["contended"], un["median"]["floor"] if un else None)
    if results.get("queued"):
        lines += _queued(results["queued"])
    if results.get("asyncio_contended"):
        lines += _asyncio_contended(results["asyncio_contended"])
    if results.get("redlock"):
        lines += _redlock(results["redlock"])
    if results.get("cluster"):
        lines += _cluster(results["cluster"])
    if results.get("watchdog"):
        lines += _watchdog(results["watchdog"])
    if results.get("memory"):
        lines += _memory(results["memory"])
    lines += _loads(results)
    return "\n".join(lines)


def _clean(value: Any) -> Any:
    """JSON has no NaN: write null."""
    if isinstance(value, float) and math.isnan(value):
        return None
    if isinstance(value, dict):
        return {k: _clean(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_clean(v) for v in value]
    return value


def write(
    directory: Path,
    document: dict[str, Any],
    verdicts: list[Verdict],
    text: str,
    *,
    stem: str = "results",
) -> None:
    """``<stem>.json`` (figures, raw samples, verdicts) and ``<stem>.md`` (``text``)."""
    directory.mkdir(parents=True, exist_ok=True)
    payload = {**document, "targets": [v.as_json() for v in verdicts]}
    (directory / f"{stem}.json").write_text(json.dumps(_clean(payload), indent=1) + "\n")
    (directory / f"{stem}.md").write_text(text + "\n")

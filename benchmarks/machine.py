"""Facts about the run that a reader needs to judge its figures: when, on what, with what."""

from __future__ import annotations

import datetime
import importlib.metadata
import os
import platform
from typing import Any


def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as cpuinfo:
            for line in cpuinfo:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def _version(package: str) -> str:
    try:
        return importlib.metadata.version(package)
    except importlib.metadata.PackageNotFoundError:
        return "not installed"


def load_average() -> tuple[float, float, float] | None:
    """The 1, 5 and 15 minute load averages (other work on the machine skews timings)."""
    try:
        return os.getloadavg()
    except OSError:
        return None


def machine_facts(redis_server: str) -> dict[str, Any]:
    """Date, CPU, cores, Python, library and server versions, as JSON-ready values."""
    return {
        "date": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "cpu": _cpu_model(),
        "cores": os.cpu_count() or 0,
        "os": f"{platform.system()} {platform.release()}",
        "python": platform.python_version(),
        "redis_py": _version("redis"),
        "redis_server": redis_server,
        "redisson_py": _version("redisson-py"),
        "python_redis_lock": _version("python-redis-lock"),
        "pottery": _version("pottery"),
        "load_average_at_start": load_average(),
    }


def describe(facts: dict[str, Any]) -> str:
    """One line for the tables: date, machine, versions."""
    load = facts.get("load_average_at_start")
    loadavg = f", load {load[0]:.2f} at start" if load else ""
    return (
        f"{facts['date']}; {facts['cpu']}, {facts['cores']} cores{loadavg}; {facts['os']}; "
        f"Python {facts['python']}; redis-py {facts['redis_py']}; "
        f"redis-server {facts['redis_server']}; python-redis-lock "
        f"{facts['python_redis_lock']}; pottery {facts['pottery']}"
    )

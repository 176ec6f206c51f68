"""A worker process of the load scenario: threads loop lock -> critical section -> unlock.

``python -m redisson_py.chaos.worker --config FILE --lock NAME --threads 4 --duration 20``
prints ``ready`` once its clients are connected, then, after ``duration`` seconds, one
JSON line: each thread's critical sections as [enter, exit] monotonic times, and counts of
failed acquires and unlocks. A config file of several YAML documents means a RedLock over
one client per document. Errors are counted, never fatal: the master is being killed.
"""

from __future__ import annotations

import argparse
import json
import sys
import threading
import time
from collections.abc import Sequence
from typing import Any

from redisson_py import LockNotOwnedError, Redisson, RedLock
from redisson_py.config import Config


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m redisson_py.chaos.worker")
    parser.add_argument("--config", required=True)
    parser.add_argument("--lock", required=True)
    parser.add_argument("--threads", type=int, default=4)
    parser.add_argument("--duration", type=float, default=20.0)
    parser.add_argument("--hold", type=float, default=0.02, help="critical section, seconds")
    args = parser.parse_args(argv)
    clients = [Redisson.create(c) for c in Config.from_yaml_all(args.config)]
    lock: Any = (
        RedLock.for_name(args.lock, clients) if len(clients) > 1 else clients[0].get_lock(args.lock)
    )
    print("ready", flush=True)
    end = time.monotonic() + args.duration
    sections: list[list[list[float]]] = [[] for _ in range(args.threads)]
    counts = {"acquire_errors": 0, "unlock_errors": 0, "lost": 0}
    guard = threading.Lock()

    def count(what: str) -> None:
        with guard:
            counts[what] += 1

    def work(index: int) -> None:
        while time.monotonic() < end:
            try:
                if not lock.try_lock(1.0):
                    continue
            except Exception:
                count("acquire_errors")
                time.sleep(0.05)
                continue
            entered = time.monotonic()
            time.sleep(args.hold)
            sections[index].append([entered, time.monotonic()])
            try:
                lock.unlock()
            except LockNotOwnedError:
                count("lost")
            except Exception:
                count("unlock_errors")

    threads = [threading.Thread(target=work, args=(i,)) for i in range(args.threads)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    json.dump({"sections": sections, **counts}, sys.stdout)
    print(flush=True)
    for client in clients:
        client.shutdown()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

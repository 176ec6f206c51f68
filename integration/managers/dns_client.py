"""The client side of the DNS monitoring tests (test_dns_monitoring), run as a child
process under ``DnsServer.client_argv`` so that its resolver asks the test's dnsmasq.

``python dns_client.py FLAVOR CONFIG.yaml``: makes a client of that flavor (``sync`` or
``asyncio``, through `redisson_py.testing.owners`), prints one JSON line
``{"ready": ...}``, then reads one command per line on stdin and answers each with one
JSON line on stdout (``{"error": "..."}`` when it raised):

- ``lock NAME OWNER LEASE``: ``try_lock(0, LEASE)`` as OWNER -> ``{"ok": bool}``;
- ``unlock NAME OWNER`` -> ``{"ok": true, "at": time.time()}``;
- ``wait NAME OWNER WAIT LEASE``: OWNER starts ``try_lock(WAIT, LEASE)`` and the answer
  is ``{"started": true}`` at once; when it returns, an extra line
  ``{"granted": bool, "owner": OWNER, "at": time.time()}`` comes (or ``{"waiter_error"...}``);
- ``listens NAME``: is the lock's channel subscribed and confirmed now;
- ``status``: the watched host names and the DNS monitoring interval;
- ``quit``.
"""

from __future__ import annotations

import json
import sys
import threading
import time
from pathlib import Path
from typing import Any

from redisson_py import Config
from redisson_py.core.keyspace import lock_channel
from redisson_py.testing.owners import Flavor, Owner

_print_lock = threading.Lock()


def say(**fields: Any) -> None:
    with _print_lock:
        print(json.dumps(fields), flush=True)


def main(argv: list[str]) -> None:
    flavor_name, config_path = argv
    flavor = Flavor(flavor_name)  # type: ignore[arg-type]
    client = flavor.create_client(Config.from_yaml(Path(config_path).read_text()))
    manager = client.connection_manager
    owners: dict[str, Owner] = {}

    def owner(name: str) -> Owner:
        if name not in owners:
            owners[name] = flavor.owner(name)
        return owners[name]

    say(ready=True, hosts=manager.watched_hosts())
    for line in sys.stdin:
        words = line.split()
        if not words:
            continue
        command, args = words[0], words[1:]
        if command == "quit":
            break
        try:
            if command == "lock":
                name, who, lease = args
                say(ok=owner(who)(client.get_lock(name).try_lock, 0.0, float(lease)))
            elif command == "unlock":
                name, who = args
                owner(who)(client.get_lock(name).unlock)
                say(ok=True, at=time.time())
            elif command == "wait":
                name, who, wait, lease = args
                future = owner(who).start(client.get_lock(name).try_lock, float(wait), float(lease))

                def done(future: Any, who: str = who) -> None:
                    try:
                        say(granted=future.result(), owner=who, at=time.time())
                    except Exception as error:
                        say(waiter_error=repr(error), owner=who)

                future.add_done_callback(done)
                say(started=True)
            elif command == "listens":
                (name,) = args
                say(listens=manager.listens(lock_channel(name, by_slot=True)))
            elif command == "status":
                say(hosts=manager.watched_hosts(), interval=manager.dns_interval)
            else:
                say(error=f"unknown command {command!r}")
        except Exception as error:
            say(error=repr(error))
    flavor.close()


if __name__ == "__main__":
    main(sys.argv[1:])

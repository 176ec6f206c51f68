"""A client for ``topology.network.popen`` in test_partitions: connects to a node with
redis-py (``sync``) or redis.asyncio (``asyncio``), names its connection, prints
``ready``, and holds the connection until a line arrives on stdin.

Run as a script (``python side_client.py MODE HOST PORT NAME``) or as a module
(``python -m side_client ...`` with this directory on ``PYTHONPATH``).
"""

from __future__ import annotations

import asyncio
import sys

import redis
import redis.asyncio


def run_sync(host: str, port: int, name: str) -> None:
    client = redis.Redis(host=host, port=port, socket_timeout=5, socket_connect_timeout=5)
    client.client_setname(name)
    print("ready", flush=True)
    sys.stdin.readline()
    client.close()


async def run_asyncio(host: str, port: int, name: str) -> None:
    client = redis.asyncio.Redis(host=host, port=port, socket_timeout=5, socket_connect_timeout=5)
    await client.client_setname(name)
    print("ready", flush=True)
    await asyncio.get_running_loop().run_in_executor(None, sys.stdin.readline)
    await client.aclose()


def main(argv: list[str]) -> None:
    mode, host, port, name = argv
    if mode == "sync":
        run_sync(host, int(port), name)
    else:
        asyncio.run(run_asyncio(host, int(port), name))


if __name__ == "__main__":
    main(sys.argv[1:])

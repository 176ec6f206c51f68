"""Network partitions for topologies started with ``network="namespace"``.

Such a topology runs in a network namespace of its own (``rpy-<topology id>``), each
node on its own loopback address (127.0.0.2, 127.0.0.3, ...), so iptables rules in the
namespace can cut any node or client off from any other while all keep running:
``topology.partition``, ``isolate``, ``heal``, ``cuts``, ``client_host``, and for clients
on a side ``topology.network.popen`` and ``topology.network.joined``.

[`partition_support`][redisson_py.testing.partition_support] says whether this machine
can run them (None) or why not, for ``pytest.skip``. Modules: `support` (what is
needed), `namespace` (``ip netns`` and ``setns``), `cuts` (partitions as iptables rules,
pure), `topology_network` (one topology's network), `source_binding` and `run_from`
(clients leaving from their host's address), `harness_connections` (the harness's own
connections into the namespace).
"""

from __future__ import annotations

from redisson_py.testing.network.cuts import Host
from redisson_py.testing.network.support import (
    NetworkUnavailableError,
    partition_support,
    require_partition_support,
)

__all__ = ["Host", "NetworkUnavailableError", "partition_support", "require_partition_support"]

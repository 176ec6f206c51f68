"""Replicated mode's discovery (Redisson's ``replicatedServersConfig``): every node of a
replication group is listed, none is a sentinel, and the master is the node whose
``ROLE`` says ``master``. What managed Redis without cluster mode gives (AWS ElastiCache,
Azure Cache for Redis, GCP Memorystore): the service promotes a replica and repoints the
others on its own, and the client learns of it only by asking the nodes.

`discover_replicated` asks every node its ``ROLE`` at once and reads the view from the
answers:

- **one master**: it owns every slot; every other configured node is its replica, and a
  ``WAIT`` after a grant asks for as many replicas as answered with role ``slave``,
  raised to what the master's own ``ROLE`` lists attached (the master/slave rules: a
  replica that does not answer is not waited for, but the view still names it, so a
  grant asks the master its attached replicas first, see
  `redisson_py.core.routing.manager_base`); when **no** replica answers, every
  configured replica is waited for (this client may be cut off with an old master
  that no longer lists them), and a master seen with replicas before that now has none
  is waited on for one (a managed failover re-pointed them while this client still
  reaches the old master, for example through a primary endpoint not moved yet);
- **two or more masters** (a managed failover half done: the replica promoted, the old
  master not demoted yet; or a split): **no master**. The view routes nothing, and a
  call fails with a connection error naming every node that claims master, retried as
  any connection error until exactly one does. Neither node is safe to write to: the
  old master is about to be demoted, which drops what it took since the promotion (a
  lock granted there is lost, even a grant its replicas confirmed, since they follow
  the new master next); the promoted one may be a replica promoted by mistake or a
  failover the service rolls back. Replication offsets do not tell which one the
  service will keep, so the client waits for the service to finish;
- **no master** among the nodes that answered: no master either (the view says why);
- **no node answered**: None (the caller keeps its last view: this client may be the
  one cut off).

No I/O here: flows yield `redisson_py.core.effects`, as the other discoveries.
"""

from __future__ import annotations

from collections.abc import Generator, Sequence
from dataclasses import dataclass
from typing import Any

from redisson_py.config.addresses import Address
from redisson_py.core.effects import Effect, Target
from redisson_py.core.routing.discovery import Discovery, probe
from redisson_py.core.routing.topology import TopologyView


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


@dataclass(frozen=True)
class Role:
    """One node's answer to ``ROLE``: ``role`` is ``master``, ``slave`` or ``sentinel``;
    for a master, ``attached`` is how many replicas it lists; for a replica,
    ``following`` is the ``host:port`` of the master it follows and ``link`` its link
    state (``connected``, ``connecting``, ``sync``...)."""

    role: str
    offset: int = 0
    attached: int = 0
    following: str = ""
    link: str = ""


def parse_role(reply: Any) -> Role:
    """Decode a ``ROLE`` reply (RESP2 or RESP3: both are arrays).

    Raises ValueError for a reply that is not one (a proxy answering something else).
    """
    if not isinstance(reply, list | tuple) or not reply:
        raise ValueError(f"not a ROLE reply: {reply!r}")
    role = _text(reply[0])
    if role == "master" and len(reply) >= 3:
        replicas = reply[2] if isinstance(reply[2], list | tuple) else ()
        return Role("master", int(reply[1]), attached=len(replicas))
    if role == "slave" and len(reply) >= 5:
        following = f"{_text(reply[1])}:{int(reply[2])}"
        return Role("slave", int(reply[4]), following=following, link=_text(reply[3]))
    if role == "sentinel":
        return Role("sentinel")
    raise ValueError(f"not a ROLE reply: {reply!r}")


def no_master_view(reason: str) -> TopologyView:
    """A view where no master serves anything, saying why (see `TopologyView.unavailable`)."""
    return TopologyView(masters=(), slot_starts=(0,), slot_masters=(None,), unavailable=reason)


def discover_replicated(
    target: Target,
    nodes: Sequence[Address],
    timeout: float,
    remembered: dict[Address, int] | None = None,
) -> Generator[Effect, Any, tuple[Discovery, dict[Address, Role]]]:
    """Ask every node its ``ROLE`` at once; the view as the module docstring says, the
    errors per node, and each answering node's role (for startup's messages).

    ``remembered`` (kept by the caller across refreshes) holds the most replicas the
    current master was seen with; a master that had replicas and now has none answering
    or attached is waited on for one (see `_at_least_one_once_seen`)."""
    answers = yield from probe(target, nodes, (("ROLE",),), timeout)
    discovery = Discovery(None)
    roles: dict[Address, Role] = {}
    for address, reply in answers.items():
        if isinstance(reply, BaseException):
            discovery.errors[address] = reply
            continue
        try:
            roles[address] = parse_role(reply[0])
        except ValueError as error:
            discovery.errors[address] = error
    if not roles:
        return discovery, roles
    masters = [a for a, r in roles.items() if r.role == "master"]
    if len(masters) > 1:
        claims = ", ".join(f"{a} (offset {roles[a].offset})" for a in masters)
        discovery.view = no_master_view(
            f"{len(masters)} nodes claim master at once ({claims}): a failover under way"
            " or a split; no lock is written until exactly one does"
        )
        return discovery, roles
    if not masters:
        said = ", ".join(f"{a}: {r.role}" for a, r in roles.items())
        discovery.view = no_master_view(f"no node of nodeAddresses is master ({said})")
        return discovery, roles
    master = masters[0]
    replicas = [a for a in dict.fromkeys(nodes) if a != master]
    if replicas and not any(a in roles for a in replicas):
        # No replica answers this client: it may be the one cut off, with an old master
        # that dropped its replicas at its repl-timeout (it lists none attached) while the
        # service promoted one of them on the other side. Wait for every configured
        # replica, as sentinel mode does when no sentinel answers: a grant is refused
        # (NoSyncedReplicasError) rather than made with no WAIT.
        healthy = len(replicas)
    else:
        healthy = sum(1 for a in replicas if a in roles and roles[a].role == "slave")
    healthy = _at_least_one_once_seen(remembered, master, healthy, roles[master].attached)
    view = TopologyView.single_master(master, replicas, healthy=healthy)
    discovery.view = view.with_master_counts({master: roles[master].attached})
    return discovery, roles


def _at_least_one_once_seen(
    remembered: dict[Address, int] | None, master: Address, healthy: int, attached: int
) -> int:
    """The WAIT count, raised to one when ``master`` was seen with replicas and now has
    none, neither answering this client nor attached (its ``ROLE``).

    That is a managed failover's mark: the service re-pointed the replicas to the node it
    promoted, while this client still reaches the old master (a primary endpoint whose
    name has not moved yet; only the endpoint in ``nodeAddresses``). Counting no replica
    there would confirm a grant or renewal on a node the service has left, beside a
    holder on the promoted one; waiting for one refuses it. Also a master cut off from
    every replica: a grant there is not replicated either. The memory is per master
    address, dropped when another node is master."""
    if remembered is None:
        return healthy
    for other in [m for m in remembered if m != master]:
        del remembered[other]
    remembered[master] = max(remembered.get(master, 0), attached, healthy)
    if remembered[master] > 0 and healthy == 0 and attached == 0:
        return 1
    return healthy

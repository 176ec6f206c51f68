"""Handing a hold to another client or process: ``export_hold()`` and
``adopt_hold(token)``, written once for both shells.

**The wire stays Redisson's.** The lock's hash keeps the exported owner's field
``<client id>:<owner id>`` (a write hold's ends in ``:write``): the adopter renews and
releases *that* field, as a Java client acting for the same thread id would. Nothing
is renamed, so a Java client sees the same holder before and after.

**Who renews, and when.** Export is one round trip: it renews the hold (a leased one is
only checked), then writes an adoption ticket, a key in the lock's slot naming the
field, that expires with the hold (`redisson_py.core.scripts.handoff`). On success the
exporter forgets the hold at once: its watchdog stops renewing it, no loss is ever
reported for it, its shutdown leaves it alone, and its owner's ``unlock()`` raises.
From then the hold lives on its TTL alone (the watchdog timeout, renewed at export; a
leased hold's remaining lease) until an adopter takes it: that is **the window**, and
the token says how long it was (``ttl_ms``). Adoption is one round trip: it takes the
ticket (deletes it) if the field is still in the hash, and renews the hold; the
adopter's watchdog renews it from then on.

Why the exporter stops at export rather than when the adoption happens: the exporter
then never has to learn anything (a network partition between it and Redis cannot make
it renew a hold another process owns), and at every instant at most one client renews
the field. The price is that a token not adopted in time is a hold that expires (no
one is told, since no one holds it).

**At most one holder.** The ticket is taken atomically with the check that the field
is in the hash, so a token adopted twice is adopted once (the second adoption raises
`HandOffError` ``"gone"``). A failed or unanswered export leaves the hold with its
exporter (the token is never returned); a failed or unanswered adoption leaves it with
no one (the key expires at the end of the window), never with two.
"""

from __future__ import annotations

import json
import math
import secrets
from collections.abc import Generator
from dataclasses import dataclass
from typing import Any

from redisson_py.core import keyspace
from redisson_py.core.effects import Effect, ScriptCommand, to_millis
from redisson_py.core.flows.calls import call_with_retry, node_of
from redisson_py.core.flows.lock_kinds import READ, WRITE, LockRef
from redisson_py.core.scripts import handoff
from redisson_py.core.scripts.handoff import AdoptReply, ExportReply
from redisson_py.core.state.holds import Hold
from redisson_py.errors import ArgumentError, HandOffError, NoSyncedReplicasError

TOKEN_TYPE = "redisson-py-hold"
TOKEN_VERSION = 1


@dataclass(frozen=True, slots=True)
class HoldToken:
    """An exported hold, as its token says it (see `encode`)."""

    client_id: str
    owner_id: str
    lock: str
    kind: str
    """The lock kind's label: ``reentrant``, ``fair``, ``write``..."""
    ticket: str
    lease: float | None
    """The hold's lease in seconds; None: kept by the watchdog."""
    ttl_ms: int
    """The key's TTL right after the export: the window to adopt in."""
    exported_at: float
    """When it was exported (seconds since the epoch, the exporter's clock)."""

    @property
    def field(self) -> str:
        """The hash field the hold is under: ``<client id>:<owner id>`` (a write hold's
        ends in ``:write``)."""
        field = keyspace.owner_field(self.client_id, self.owner_id)
        return keyspace.write_field(field) if self.kind == WRITE.label else field

    def encode(self) -> str:
        """The token: one line of JSON (keys sorted), with no secret in it::

            {"client": "<client uuid>", "exported_at": 1764230400.123,
             "kind": "reentrant", "lease": null, "lock": "orders:42",
             "owner": "7", "ticket": "<32 hex digits>", "ttl_ms": 30000,
             "type": "redisson-py-hold", "v": 1}

        ``ticket`` is an id, not a credential: adopting needs access to the Redis
        deployment the lock lives in, and the ticket only tells one adoption from a
        second one."""
        return json.dumps(
            {
                "type": TOKEN_TYPE,
                "v": TOKEN_VERSION,
                "client": self.client_id,
                "owner": self.owner_id,
                "lock": self.lock,
                "kind": self.kind,
                "ticket": self.ticket,
                "lease": self.lease,
                "ttl_ms": self.ttl_ms,
                "exported_at": round(self.exported_at, 3),
            },
            sort_keys=True,
            separators=(", ", ": "),
        )

    @classmethod
    def decode(cls, token: object) -> HoldToken:
        """Read a token made by `encode`; [`ArgumentError`][redisson_py.errors.ArgumentError]
        saying what is wrong with anything else."""
        if not isinstance(token, str):
            raise ArgumentError(f"a hold token is a string (from export_hold()), not {token!r}")
        try:
            data = json.loads(token)
        except ValueError:
            raise ArgumentError(f"not a hold token (not JSON): {token[:80]!r}") from None
        if not isinstance(data, dict) or data.get("type") != TOKEN_TYPE:
            raise ArgumentError(f"not a hold token (no type {TOKEN_TYPE!r}): {token[:80]!r}")
        if data.get("v") != TOKEN_VERSION:
            raise ArgumentError(
                f"hold token version {data.get('v')!r} is not understood (this version"
                f" reads {TOKEN_VERSION})"
            )
        try:
            lease = data["lease"]
            parsed = cls(
                client_id=_text(data["client"]),
                owner_id=_text(data["owner"]),
                lock=_text(data["lock"]),
                kind=_text(data["kind"]),
                ticket=_text(data["ticket"]),
                lease=None if lease is None else float(lease),
                ttl_ms=int(data["ttl_ms"]),
                exported_at=float(data["exported_at"]),
            )
        except (KeyError, TypeError, ValueError) as error:
            raise ArgumentError(f"hold token is missing or garbles {error}") from None
        lease_ok = parsed.lease is None or (math.isfinite(parsed.lease) and parsed.lease > 0)
        if ":" in parsed.client_id or not parsed.owner_id.isdigit() or not lease_ok:
            raise ArgumentError(f"hold token for lock {parsed.lock!r} is malformed")
        return parsed


def _text(value: object) -> str:
    if not isinstance(value, str) or not value:
        raise TypeError(f"{value!r} (a non-empty string expected)")
    return value


def ticket_key(ref: LockRef, ticket: str) -> str:
    """The adoption ticket's key, in the lock's slot."""
    return keyspace.handoff_ticket(ref.name, ticket, by_slot=bool(ref.target.routes_by_slot))


def _refused(ref: LockRef, reason: str, why: str) -> HandOffError:
    node = node_of(ref)
    at = "" if node is None else f" (node {node})"
    return HandOffError(f"lock {ref.name!r}: {why}{at}", lock_name=ref.name, reason=reason)


def _other_field(ref: LockRef) -> str:
    """The field whose presence refuses an export: a write hold's owner's read field,
    or a read hold's owner's write field ("" for other kinds)."""
    if ref.kind is WRITE:
        return ref.owner.removesuffix(keyspace.WRITE_SUFFIX)
    if ref.kind is READ:
        return keyspace.write_field(ref.owner)
    return ""


def export_hold(ref: LockRef, owner_id: str) -> Generator[Effect, Any, str]:
    """Export ``ref``'s hold (the owner ``owner_id``'s, every reentrant count of it) and
    return its token; see the module docstring for what follows.

    Refused with [`HandOffError`][redisson_py.errors.HandOffError]: ``"not-held"``
    (no hold, or one reported lost or past its safe end), ``"group"`` (a MultiLock or
    RedLock member), ``"readers-inside"`` (a read-write lock whose owner holds both
    halves). Connection errors are retried until the hold's safe end; when one is
    raised, the hold is still the exporter's (no token was handed out)."""
    state = ref.state
    holds = state.holds
    hold = holds.get(ref.name, ref.owner)
    if hold is None or holds.was_lost(ref.name, ref.owner) or state.clock() >= hold.expires_at:
        raise _refused(ref, "not-held", f"owner {ref.owner} holds nothing to export")
    reporter = getattr(hold.on_lost, "__self__", None)
    if isinstance(reporter, LockRef) and reporter.group_on_lost is not None:
        raise _refused(
            ref,
            "group",
            f"owner {ref.owner}'s hold is a MultiLock/RedLock member; a member alone"
            " cannot be exported",
        )
    ticket = secrets.token_hex(16)
    ttl_ms = to_millis(state.settings.watchdog_timeout)
    commands = (
        ref.kind.renew([hold], ttl_ms),
        ScriptCommand(
            handoff.EXPORT, (ref.name, ticket_key(ref, ticket)), (ref.owner, _other_field(ref))
        ),
    )
    sync = state.settings.sync_replicas if hold.watchdog else None
    result = yield from call_with_retry(
        ref, lambda attempt: commands, sync_replicas=sync, deadline=hold.expires_at
    )
    flag, ttl = (int(x) for x in result.replies[1])
    if flag == ExportReply.READERS_INSIDE:
        raise _refused(
            ref,
            "readers-inside",
            f"owner {ref.owner} holds both the read and the write lock; release one half"
            " before exporting the other",
        )
    if flag != ExportReply.EXPORTED:
        raise _refused(ref, "not-held", f"owner {ref.owner}'s field is no longer in the lock")
    if not holds.exported(hold):
        # Reported lost while the export was in flight: no token for a lost hold.
        raise _refused(ref, "not-held", f"owner {ref.owner}'s hold was lost during the export")
    return HoldToken(
        client_id=state.client_id,
        owner_id=owner_id,
        lock=ref.name,
        kind=ref.kind.label,
        ticket=ticket,
        lease=hold.lease,
        ttl_ms=ttl,
        exported_at=state.wall_clock(),
    ).encode()


def adopt_hold(ref: LockRef, token: HoldToken) -> Generator[Effect, Any, None]:
    """Make the hold ``token`` names (``ref.owner`` is its field) this client's: take
    its ticket, renew it (a leased hold keeps its lease end), and record it, so this
    client's watchdog renews it and an ``unlock()`` through ``ref`` releases it.

    Refused with [`HandOffError`][redisson_py.errors.HandOffError] ``"gone"`` when the
    ticket is gone (adopted already, or expired with the hold) or the field is no longer
    in the lock's hash. Connection errors are retried until the end of the token's
    window (by the adopter's clock) at most; when one is raised, the adoption may or may
    not have been applied, and either way the hold is no one's: it expires with its
    TTL. With replica sync on, a renewal the replicas did not acknowledge raises
    [`NoSyncedReplicasError`][redisson_py.errors.NoSyncedReplicasError] (nothing is
    adopted; the hold expires)."""
    state = ref.state
    settings = state.settings
    watchdog = token.lease is None
    probe = Hold(
        name=ref.name,
        owner=ref.owner,
        count=1,
        target=ref.target,
        watchdog=watchdog,
        expires_at=math.inf,
        on_lost=ref.report,
        kind=ref.kind,
    )
    ttl_ms = to_millis(settings.watchdog_timeout)
    commands = (
        ScriptCommand(handoff.ADOPT, (ref.name, ticket_key(ref, token.ticket)), (ref.owner,)),
        ref.kind.renew([probe], ttl_ms),
    )
    window_end = token.exported_at + token.ttl_ms / 1000
    deadline = state.clock() + max(0.0, window_end - state.wall_clock())
    sent = [0.0]

    def attempts(unanswered: int) -> tuple[ScriptCommand, ...]:
        sent[0] = state.clock()
        return commands

    sync = settings.sync_replicas if watchdog else None
    result = yield from call_with_retry(ref, attempts, sync_replicas=sync, deadline=deadline)
    flag, count, pttl = (int(x) for x in result.replies[0])
    if flag != AdoptReply.ADOPTED:
        why = (
            "its ticket is gone (adopted already, or expired with the hold)"
            if flag == AdoptReply.NO_TICKET
            else "the exported field is no longer in the lock (released or expired)"
        )
        raise _refused(ref, "gone", f"cannot adopt the hold of {ref.owner}: {why}")
    if result.synced < result.required:
        raise NoSyncedReplicasError(
            f"lock {ref.name!r}: adopted on the master at {result.address}, but only"
            f" {max(0, result.synced)} of {result.required} replicas acknowledged the"
            " renewal; not adopted (the hold expires with its TTL)",
            lock_name=ref.name,
            acknowledged=max(0, result.synced),
            required=result.required,
        )
    ttl = settings.watchdog_timeout if watchdog else pttl / 1000
    holds = state.holds
    # Adopted by the client that exported it: the field is this client's own again.
    holds.clear_exported(ref.name, ref.owner)
    holds.acquired(
        ref.name,
        ref.owner,
        count,
        target=ref.target,
        lease=token.lease,
        ttl=ttl,
        now=sent[0],
        on_lost=ref.report,
        kind=ref.kind,
    )

"""Server refusals: error replies that mean "not now", with nothing applied.

Redis refuses a command, rather than failing it, when it cannot serve it at this moment:
too few replicas in sync (``NOREPLICAS``), a replica asked to write (``READONLY``), a
replica cut from its master (``MASTERDOWN``), a cluster that cannot serve the slot
(``CLUSTERDOWN``), a slot in migration (``TRYAGAIN``), a dataset being loaded
(``LOADING``), a script or function running (``BUSY``), memory full (``OOM``), a node
that cannot persist (``MISCONF``). `REFUSALS` lists them, with whether the refusal
ends by itself (*transient*);
[`ServerRefusedError`][redisson_py.errors.ServerRefusedError] is what a caller sees.

**Nothing was applied.** A refused command never ran: Redis checks these conditions
before it runs a command, and in a script before the script's first write. That is what
makes a retry safe and spares a refused acquire its undo; it holds for every script in
`redisson_py.core.scripts`, checked against them:

- none uses ``redis.pcall``: a refused ``redis.call`` raises, and the script stops there;
- a refusal inside a script comes at its first write command, so before it nothing was
  written: Redis 7 checks READONLY, MISCONF, NOREPLICAS and OOM only while the script
  has written nothing (it never stops a script half way); Redis 6.2 checks READONLY,
  NOREPLICAS and MISCONF at every write, but none of them can change while a script
  runs (the server does nothing else meanwhile), so there too the first write is the
  refused one, and OOM it checks only before one;
- reads have no effect, and a script's only other effect, a PUBLISH, comes after a
  write on every path that writes (``RELEASE_FAIR`` also publishes on a path that
  writes nothing, which is never refused). Most scripts read before they write; some
  write first (the fair lock's drop stale waiters, the permit-expirable semaphore's
  expired permits, ``UNDO_FAIR`` leaves the queue) and are refused at that write.

``BUSY``, ``LOADING``, ``TRYAGAIN``, ``CLUSTERDOWN`` and ``MASTERDOWN`` refuse the
command itself, before anything runs. ``LOADING`` comes from redis-py as its
``BusyLoadingError`` (a connection error, raised while reading): the node answers it to
every command while loading, so the reply it came in says that command was not run.

The codes are read from the reply as Redis sent it, whatever redis-py made of it:
`error_code`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from redis.exceptions import (
    AskError,
    BusyLoadingError,
    ClusterDownError,
    MasterDownError,
    MovedError,
    NoPermissionError,
    NoScriptError,
    OutOfMemoryError,
    ReadOnlyError,
    ResponseError,
    TryAgainError,
)


@dataclass(frozen=True, slots=True)
class Kind:
    """One refusal code: ``transient`` when it ends by itself (a failover completes, a
    replica comes back, a load or a script ends), and ``why`` says what it means."""

    transient: bool
    why: str


REFUSALS: dict[str, Kind] = {
    "NOREPLICAS": Kind(True, "fewer replicas in sync than its min-replicas-to-write"),
    "READONLY": Kind(True, "it is a replica (a failover under way, or the config names a replica)"),
    "MASTERDOWN": Kind(True, "it is a replica that lost its master"),
    "CLUSTERDOWN": Kind(True, "the cluster cannot serve the key's slot"),
    "TRYAGAIN": Kind(True, "the key's slot is being migrated"),
    "LOADING": Kind(True, "it is loading its dataset"),
    "BUSY": Kind(True, "a script or function is running on it (SCRIPT KILL ends one)"),
    "OOM": Kind(False, "its memory is full (maxmemory) and its policy evicts nothing"),
    "MISCONF": Kind(False, "it cannot persist its data and refuses writes until it can"),
}
"""The refusals, by code. A transient one is retried as a connection error is (within a
wait's deadline, or a call's retries); the others are raised at once."""

STALE_VIEW = frozenset({"READONLY", "TRYAGAIN", "CLUSTERDOWN", "MASTERDOWN"})
"""Refusals that say the client's view of the topology may be stale: refresh it."""

STALE_NODE = frozenset({"READONLY", "MASTERDOWN", "LOADING"})
"""Refusals that say the node this connection reached is no longer the one to write to
(a demoted master, a replica cut from its master, a restart loading its data): the
connection is closed rather than pooled, since an address that moves (a managed
service's primary endpoint, re-pointed by DNS at a failover) is resolved again only by
a new connection, and a topology refresh is asked for at once (see `stale_node`)."""


def stale_node(replies: list[object]) -> bool:
    """True when one of ``replies`` is a `STALE_NODE` refusal (its connection must be
    closed, and the topology refreshed). Cheap on replies without errors: the hot path
    asks it of every round trip."""
    for reply in replies:
        # redis-py raises LOADING as BusyLoadingError, a connection error: as a reply
        # only where a caller kept it as one; raised, it closes the connection anyway.
        if isinstance(reply, ResponseError | BusyLoadingError):
            if isinstance(reply, Refusal):
                code = reply.code
            elif isinstance(reply, ReadOnlyError | MasterDownError | BusyLoadingError):
                return True
            else:
                code = error_code(reply)[0]
            if code in STALE_NODE:
                return True
    return False


class Refusal(ResponseError):
    """A node refused a command (a code of `REFUSALS`); nothing was applied.

    What the wire raises in place of redis-py's error reply (kept as ``__cause__``),
    inside the library only: the flows turn it into a
    [`ServerRefusedError`][redisson_py.errors.ServerRefusedError] naming the lock.
    ``address`` is the node that refused, ``text`` Redis's words after the code.
    """

    def __init__(self, code: str, text: str, address: str):
        super().__init__(f"{address} refused the command: {code} {text}")
        self.code = code
        self.text = text
        self.address = address

    @property
    def transient(self) -> bool:
        """Whether the refusal may end by itself (see `REFUSALS`)."""
        return REFUSALS[self.code].transient


class TransientRefusal(Refusal):
    """A `Refusal` that ends by itself: the flows retry it
    (`redisson_py.core.flows.lock.RETRYABLE`)."""


def refused(code: str, text: str, address: str) -> Refusal:
    """The `Refusal` (a `TransientRefusal` when transient) for a reply."""
    kind = TransientRefusal if REFUSALS[code].transient else Refusal
    return kind(code, text, address)


_CODES: tuple[tuple[type[ResponseError], str], ...] = (
    (MovedError, "MOVED"),  # before AskError, its base class
    (AskError, "ASK"),
    (NoScriptError, "NOSCRIPT"),
    (ReadOnlyError, "READONLY"),
    (TryAgainError, "TRYAGAIN"),
    (MasterDownError, "MASTERDOWN"),  # before ClusterDownError, its base class
    (ClusterDownError, "CLUSTERDOWN"),
    (OutOfMemoryError, "OOM"),
    (NoPermissionError, "NOPERM"),
)

_CODE = re.compile(r"[A-Z][A-Z0-9_]*")
"""What an error code looks like (``WRONGTYPE``, ``NOREPLICAS``); a message redis-py
stripped of ``ERR`` starts with an ordinary word instead."""

_SCRIPT_ERROR = re.compile(
    r"(?:ERR )?Error running script \(call to f_[0-9a-f]+\): (?:@\w+: ?\d+: )+-?"
    r"(?P<code>[A-Z][A-Z0-9_]*) (?P<text>.*)",
    re.DOTALL,
)
"""How Redis before 7.0 reports an error a command inside a script met: as ``ERR``, the
command's own reply after the script's position (``... @user_script:1: @user_script: 1:
-NOREPLICAS Not enough good replicas to write.``, or ``... @user_script:1: WRONGTYPE
Operation ...``). Redis 7 passes the command's reply on, code first."""


def error_code(error: ResponseError) -> tuple[str, str]:
    """Return (code, rest) of an error reply, as Redis sent it.

    redis-py's parser maps some codes to classes and strips the code from the message
    (which codes depends on its version: 5.0 leaves MOVED, ASK, TRYAGAIN, CLUSTERDOWN
    and MASTERDOWN unmapped, and every version strips ``ERR``), so the class is asked
    first, then the code redis-py recorded (``status_code``, in its newer versions), then
    the message's first word; a message that starts with none is an ``ERR``. An ``ERR``
    that reports a command's error inside a script (Redis before 7.0) is that command's.
    """
    code: str | None = None
    rest = str(error)
    for cls, known in _CODES:
        if isinstance(error, cls):
            code = known
            break
    if code is None:
        status = getattr(error, "status_code", None)
        if isinstance(status, str) and status:
            code = status
        else:
            first, _, after = rest.partition(" ")
            if _CODE.fullmatch(first):
                code, rest = first, after
            else:
                code = "ERR"
    if code == "ERR":
        inner = _SCRIPT_ERROR.fullmatch(rest)
        if inner is not None:
            return inner["code"], inner["text"]
    return code, rest


def refusal_of(error: BaseException) -> tuple[str, str] | None:
    """(code, text) when ``error`` is a refusal of `REFUSALS` (a `Refusal`,
    redis-py's ``BusyLoadingError``, or an error reply with such a code), else None."""
    if isinstance(error, Refusal):
        return error.code, error.text
    if isinstance(error, BusyLoadingError):
        return "LOADING", str(error)
    if isinstance(error, ResponseError):
        code, text = error_code(error)
        if code in REFUSALS:
            return code, text
    return None

"""What the semaphores and the count-down latch share: their ref and their changes.

A semaphore or a latch is no lock: nobody owns it, nothing renews it. Its flows act on
an `ObjectRef` (the object's name, kind and channel, the client's manager and
state), which the lock helpers of `redisson_py.core.flows.lock` accept as they
accept a lock's ref: retries (`call_with_retry`),
errors (`guarded`), undoing in the background. Every
change is one request (`apply_once`), counted once however often it is retried.
"""

from __future__ import annotations

from collections.abc import Callable, Generator
from dataclasses import dataclass
from typing import Any

from redisson_py.core import keyspace
from redisson_py.core.effects import Arg, Effect, Script, ScriptCommand, Target, to_millis
from redisson_py.core.flows.calls import call_with_retry, new_request_id
from redisson_py.core.scripts.synchronizers import DELETE
from redisson_py.core.state.client_state import ClientState


def _no_aux(name: str, by_slot: bool) -> tuple[str, ...]:
    return ()


@dataclass(frozen=True, slots=True)
class Layout:
    """Where one kind of object keeps its data (Redisson's names): ``label`` names it in
    messages; ``channel(name, by_slot)`` is its channel, ``aux(name, by_slot)`` its other
    keys (``by_slot``: the topology places names by hash slot, a cluster)."""

    label: str
    channel: Callable[[str, bool], str]
    aux: Callable[[str, bool], tuple[str, ...]] = _no_aux


@dataclass(frozen=True, slots=True)
class ObjectRef:
    """One semaphore or latch: everything its flows need to act on it."""

    name: str
    target: Target
    state: ClientState
    layout: Layout
    channel: str
    aux: tuple[str, ...] = ()

    @property
    def subject(self) -> str:
        """How messages name it: ``semaphore 'x'``."""
        return f"{self.layout.label} {self.name!r}"

    @property
    def publish(self) -> str:
        """What its scripts publish with (``publish``, or ``spublish`` when sharded)."""
        return self.target.publish_command

    def latch(self, request_id: str) -> str:
        """The key that remembers request ``request_id`` (see
        `redisson_py.core.scripts.synchronizers`), in the object's hash slot."""
        by_slot = bool(self.target.routes_by_slot)
        return keyspace.request_latch(self.name, request_id, by_slot=by_slot)


def object_ref(name: str, target: Target, state: ClientState, layout: Layout) -> ObjectRef:
    """The ref of the ``layout`` object ``name`` served by ``target``."""
    by_slot = bool(target.routes_by_slot)
    return ObjectRef(
        name, target, state, layout, layout.channel(name, by_slot), layout.aux(name, by_slot)
    )


def once_command(
    ref: ObjectRef, script: Script, keys: tuple[str, ...], request_id: str, *args: Arg
) -> ScriptCommand:
    """``script`` on ``keys`` and request ``request_id``'s latch (the last key), with
    the latch lifetime (ms) and the publish command before ``args``: the calling
    conventions of `redisson_py.core.scripts.synchronizers`."""
    latch_ms = to_millis(ref.state.settings.latch_ttl)
    return ScriptCommand(script, (*keys, ref.latch(request_id)), (latch_ms, ref.publish, *args))


def apply_once(
    ref: ObjectRef, script: Script, keys: tuple[str, ...], *args: Arg
) -> Generator[Effect, Any, int]:
    """Run ``script`` (see `once_command`) as one new request, retrying connection
    errors as the config says: applied once however many attempts reach the server;
    its integer reply (the first run's, for a retry)."""
    command = once_command(ref, script, keys, new_request_id(), *args)
    result = yield from call_with_retry(ref, lambda attempt: (command,))
    return int(result.replies[0])


def delete(ref: ObjectRef, message: str = "") -> Generator[Effect, Any, bool]:
    """Delete the object's keys (its main key and its ``aux`` keys); True if any
    existed. ``message`` is published on its channel when something was deleted ("":
    nothing)."""
    keys = (ref.name, *ref.aux, ref.channel)
    return bool((yield from apply_once(ref, DELETE, keys, message)))

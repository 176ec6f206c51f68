"""Which process this is, for the checks made on every call: a count of forks.

A client's pools, idle connections and background threads belong to the process that
made them; a forked child must not use them. ``os.getpid()`` would tell, but it is a
system call (about 0.2 us here, and a RedLock cycle made thirty); a fork handler counts
the forks instead, so a check is one attribute read: compare `count` (read it as
``forks.count``, never import the name) with the value kept when the resource was made.
Forks that run no Python fork handlers (``fork()`` from C) start no Python in the child
either.
"""

from __future__ import annotations

import os

count = 0
"""Forks this process descends from since this module was imported (0 in the process
that imported it first)."""


def _forked() -> None:
    global count  # noqa: PLW0603 - the one mutable value this module exists for
    count += 1


os.register_at_fork(after_in_child=_forked)

"""Where the harness keeps its files on this machine.

Everything lives under one *run root*: ``REDISSON_PY_RUN_DIR`` if set, else
``<tmp>/redisson-py-<uid>`` (per user, so two users on one machine never share it). Each
topology gets ``<run root>/topologies/<id>/`` with a ``state.json`` describing it (owner,
nodes, pids or containers) and one directory per node.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

__all__ = ["run_root", "topologies_root"]


def run_root() -> Path:
    """The harness's private directory, created (mode 0700) if missing."""
    override = os.environ.get("REDISSON_PY_RUN_DIR")
    root = (
        Path(override) if override else Path(tempfile.gettempdir()) / f"redisson-py-{os.getuid()}"
    )
    root.mkdir(mode=0o700, parents=True, exist_ok=True)
    return root


def topologies_root() -> Path:
    """The directory holding one sub-directory per started topology."""
    path = run_root() / "topologies"
    path.mkdir(exist_ok=True)
    return path

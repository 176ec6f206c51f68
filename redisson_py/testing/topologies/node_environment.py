"""Extra environment for chosen nodes of a topology (``start_topology(...,
node_environment=...)``): checked here, before anything starts, and handed to the process
backend in each node's launch plan.

What it is for: running a node under an ``LD_PRELOAD`` library (libfaketime, to move its
clock: `redisson_py.testing.faults.faketime`) or with a variable a test needs. Only
the process backend can honour it; a container's environment is the image's.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from redisson_py.testing.errors import TopologyError

__all__ = ["Environment", "node_environments"]

Environment = tuple[tuple[str, str], ...]
"""One node's extra variables as (name, value) pairs, in the order given."""


def node_environments(
    node_names: Sequence[str],
    requested: Mapping[str, Mapping[str, str]] | None,
    *,
    backend: str,
) -> dict[str, Environment]:
    """``requested`` (node name -> variables) checked against the topology's
    ``node_names`` and ``backend``; the variables of each named node as pairs.

    Raises [`TopologyError`][redisson_py.testing.TopologyError] (one sentence) for a
    backend other than ``process``, a name that is not a node, or a variable whose name
    is empty or holds ``=`` or a NUL, or whose name or value is not a string.
    """
    if not requested:
        return {}
    if backend != "process":
        raise TopologyError(
            f"node_environment needs the process backend, not {backend}: a container "
            "runs with its image's environment."
        )
    out: dict[str, Environment] = {}
    for name, variables in requested.items():
        if name not in node_names:
            raise TopologyError(
                f"node_environment names {name!r}, which is not a node of this topology "
                f"(its nodes: {', '.join(node_names)})."
            )
        if not isinstance(variables, Mapping):
            raise TopologyError(
                f"node_environment[{name!r}] must map variable names to values, not "
                f"{type(variables).__name__}."
            )
        pairs: list[tuple[str, str]] = []
        for key, value in variables.items():
            if not isinstance(key, str) or not isinstance(value, str):
                raise TopologyError(
                    f"node_environment[{name!r}]: variable names and values are strings, "
                    f"not {key!r}: {value!r}."
                )
            if not key or "=" in key or "\0" in key or "\0" in value:
                raise TopologyError(
                    f"node_environment[{name!r}]: {key!r} is not a usable environment "
                    "variable (empty, or holding '=' or a NUL)."
                )
            pairs.append((key, value))
        out[name] = tuple(pairs)
    return out

"""The core's layers, as its layout names them, and the sans-I/O rule.

``redisson_py/core`` is the algorithms both shells run: ``effects`` (the protocol between
core and shells), ``forks`` (which process this is) and ``scripts`` (the Lua) at the
bottom, then ``state`` and ``routing``
side by side, then ``flows``, then the handles at the top. A module imports only from its
own layer and the layers below it, and nothing in the core does I/O or picks a
concurrency model: no ``asyncio``, no ``threading``, no clock of its own (the shells give
those: ``redisson_py.core.state.client_state.Runtime``).
"""

from __future__ import annotations

import ast
import pathlib

import pytest

import redisson_py.core

CORE = pathlib.Path(redisson_py.core.__file__).parent

BELOW: dict[str, set[str]] = {
    "effects": set(),
    "forks": set(),
    "scripts": {"effects"},
    "state": {"forks"},
    "routing": {"effects", "forks"},
    "flows": {"effects", "forks", "scripts", "state", "routing"},
    "handles": {"effects", "forks", "scripts", "state", "routing", "flows"},
    "synchronizer_handles": {
        *("effects", "forks", "scripts", "state", "routing", "flows", "handles"),
    },
}
"""Each layer of the core, and the layers it may import from (besides itself)."""


def layer_of(module: str) -> str:
    """``redisson_py.core.flows.lock`` -> ``flows``; ``redisson_py.core.effects`` ->
    ``effects``."""
    return module.split(".")[2]


def core_modules() -> list[tuple[str, ast.Module]]:
    found = []
    for path in sorted(CORE.rglob("*.py")):
        parts = path.relative_to(CORE.parent.parent).with_suffix("").parts
        found.append((".".join(parts), ast.parse(path.read_text(encoding="utf-8"))))
    return found


def imported(tree: ast.Module) -> list[str]:
    """Every module ``tree`` imports (``from core import x`` counts as ``core.x``)."""
    names = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.append(node.module)
            if node.module == "redisson_py.core":
                names += [f"redisson_py.core.{alias.name}" for alias in node.names]
    return names


def _module_id(value: object) -> str:
    # The module's name; a tree's repr holds its address, which differs between
    # processes (pytest-xdist's workers must collect the same test ids).
    return value if isinstance(value, str) else "tree"


def test_the_core_keeps_at_most_eight_modules_at_its_top_level() -> None:
    top = sorted(path.name for path in CORE.glob("*.py"))
    assert len(top) <= 8, top
    packages = sorted(path.parent.name for path in CORE.glob("*/__init__.py"))
    assert packages == ["flows", "routing", "scripts", "state"]


@pytest.mark.parametrize("module, tree", core_modules(), ids=_module_id)
def test_a_core_module_imports_only_from_its_layer_and_the_layers_below(
    module: str, tree: ast.Module
) -> None:
    if module == "redisson_py.core":
        return
    own = layer_of(module)
    for name in imported(tree):
        if name.startswith("redisson_py.core.") and layer_of(name) != own:
            assert layer_of(name) in BELOW[own], f"{module} imports {name}"


@pytest.mark.parametrize("module, tree", core_modules(), ids=_module_id)
def test_a_core_module_uses_no_concurrency_model_and_no_clock_of_its_own(
    module: str, tree: ast.Module
) -> None:
    for name in imported(tree):
        assert name.split(".")[0] not in {"asyncio", "threading"}, f"{module} imports {name}"
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            called = f"{node.value.id}.{node.attr}"
            assert called not in {"time.monotonic", "time.time"}, f"{module} reads {called}"
        if isinstance(node, ast.ImportFrom) and node.module == "time":
            names = {alias.name for alias in node.names}
            assert not names & {"monotonic", "time"}, f"{module} imports {names} from time"

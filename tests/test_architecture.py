"""The package's layers, the core's layers as its layout names them, and the sans-I/O rule.

The package, bottom to top: the errors, the config, the core, the two shells (``asyncio``
and ``sync``, beside each other, neither importing the other), the harness
(``testing``), the chaos suite and the demo (beside each other), the command line. A
module imports only from its own layer and the layers below it; `ALLOWED` lists the
exceptions, each with its reason.

``redisson_py/core`` is the algorithms both shells run: ``effects`` (the protocol between
core and shells) and ``forks`` (which process this is) at the bottom, then ``state``
and ``routing`` side by side, then ``keyspace`` (every key's name: it reads the slot
rules of ``routing.naming``), then ``scripts`` (the Lua, which spells keyspace names),
then ``flows``, then the handles at the top. A module imports only from its
own layer and the layers below it, and nothing in the core does I/O or picks a
concurrency model: no ``asyncio``, no ``threading``, no clock of its own (the shells give
those: ``redisson_py.core.state.client_state.Runtime``).
"""

from __future__ import annotations

import ast
import pathlib
import re

import pytest

import redisson_py
import redisson_py.core
import redisson_py.errors

CORE = pathlib.Path(redisson_py.core.__file__).parent

BELOW: dict[str, set[str]] = {
    "effects": set(),
    "forks": set(),
    "state": {"forks"},
    "routing": {"effects", "forks"},
    "keyspace": {"routing"},  # routing.naming only: tests/core/test_keyspace.py
    "scripts": {"effects", "keyspace"},
    "flows": {"effects", "forks", "keyspace", "scripts", "state", "routing"},
    "handles": {"effects", "forks", "keyspace", "scripts", "state", "routing", "flows"},
    "synchronizer_handles": {
        *("effects", "forks", "keyspace", "scripts", "state", "routing", "flows", "handles"),
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


# -- the package's layers ----------------------------------------------------------------

PACKAGE = CORE.parent

PARTS: dict[str, tuple[int, str]] = {
    "_deprecate": (0, "errors"),
    "errors": (0, "errors"),
    "config": (1, "config"),
    "core": (2, "core"),
    "asyncio": (3, "asyncio"),
    "sync": (3, "sync"),
    "": (3, "sync"),  # redisson_py itself: the threaded API's front
    "_callbacks": (3, "shared"),  # what both shells' _primitives share
    "events": (3, "shared"),  # the lock events, public beside the shells
    "otel": (3, "shared"),
    "testing": (4, "testing"),
    "chaos": (5, "chaos"),
    "demo": (5, "demo"),
    "cli": (6, "cli"),
}
"""Each part of the package (its module or folder under ``redisson_py/``): its layer,
bottom first, and its side within the layer. A module may import from a lower layer, from
its own side, and from the ``shared`` side of its layer; never from a higher layer, nor
from the other side of its own (the two shells, the chaos suite and the demo)."""

ALLOWED: dict[tuple[str, str], tuple[str, str]] = {
    ("redisson_py.errors", "redisson_py.testing.errors"): (
        "TYPE_CHECKING",
        "the TopologyError shim: the old import of the harness's error still type-checks;"
        " it goes in the version errors._MOVED names (0.3.0)",
    ),
    ("redisson_py", "redisson_py.testing.errors"): (
        "TYPE_CHECKING",
        "the TopologyError shim, as in redisson_py.errors",
    ),
    ("redisson_py.asyncio.watchdog_threads", "redisson_py.sync.manager"): (
        "function",
        "the asyncio client's watchdog threads renew on threaded twins of its connection"
        " managers (a thread cannot use the loop's connections); the one hand-written"
        " asyncio module with no twin, and it imports the threaded shell only when its"
        " threads start",
    ),
    ("redisson_py.asyncio.watchdog_threads", "redisson_py.sync.driver"): (
        "function",
        "the watchdog threads run a round's core flow with the threaded shell's driver, as above",
    ),
}
"""The imports the layers do not allow, by (importer, imported): where the import may
stand (``TYPE_CHECKING``: only under ``if TYPE_CHECKING:``; ``function``: only inside a
function, so it runs late) and why it is there."""


def part_of(module: str) -> str:
    """``redisson_py.core.flows.lock`` -> ``core``; ``redisson_py`` -> ``""``."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


def _module_name(path: pathlib.Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


PACKAGE_MODULES = sorted(_module_name(path) for path in PACKAGE.rglob("*.py"))


def _is_module(name: str) -> bool:
    return name in PACKAGE_MODULES


class _Imports(ast.NodeVisitor):
    """Every module of the package a tree imports, with where the import stands:
    ``module`` (at import time), ``TYPE_CHECKING`` or ``function``."""

    def __init__(self, module: str, is_package: bool):
        self.module = module
        self.is_package = is_package
        self.found: list[tuple[str, str]] = []
        self._where = ["module"]

    def visit_If(self, node: ast.If) -> None:
        test = ast.unparse(node.test)
        if test in {"TYPE_CHECKING", "typing.TYPE_CHECKING"}:
            self._where.append("TYPE_CHECKING")
            for child in node.body:
                self.visit(child)
            self._where.pop()
            for child in node.orelse:
                self.visit(child)
        else:
            self.generic_visit(node)

    def _in_function(self, node: ast.AST) -> None:
        self._where.append("function")
        self.generic_visit(node)
        self._where.pop()

    visit_FunctionDef = visit_AsyncFunctionDef = visit_Lambda = _in_function

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            self._add(alias.name)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        base = node.module or ""
        if node.level:  # relative: resolved from this module's package
            package = self.module.split(".")
            if not self.is_package:
                package = package[:-1]
            package = package[: len(package) - node.level + 1]
            base = ".".join([*package, *([base] if base else [])])
        for alias in node.names:
            # ``from redisson_py.core import effects`` imports a module; ``from
            # redisson_py import Config`` a name of the package itself.
            self._add(f"{base}.{alias.name}" if _is_module(f"{base}.{alias.name}") else base)

    def _add(self, name: str) -> None:
        if name == "redisson_py" or name.startswith("redisson_py."):
            self.found.append((name, self._where[-1]))


def package_imports(module: str) -> list[tuple[str, str]]:
    """The package's modules ``module`` imports, each with where the import stands."""
    path = PACKAGE.parent.joinpath(*module.split("."))
    is_package = path.is_dir()
    source = path / "__init__.py" if is_package else path.with_suffix(".py")
    visitor = _Imports(module, is_package)
    visitor.visit(ast.parse(source.read_text(encoding="utf-8")))
    return visitor.found


def layers_allow(importer: str, imported: str) -> bool:
    rank, side = PARTS[part_of(importer)]
    their_rank, their_side = PARTS[part_of(imported)]
    return their_rank < rank or (their_rank == rank and their_side in {side, "shared"})


def test_every_part_of_the_package_has_a_layer() -> None:
    parts = {part_of(module) for module in PACKAGE_MODULES}
    assert parts == set(PARTS), f"give each new part a layer: {sorted(parts - set(PARTS))}"


@pytest.mark.parametrize("module", PACKAGE_MODULES)
def test_a_module_imports_only_from_its_layer_and_the_layers_below(module: str) -> None:
    for name, where in package_imports(module):
        if layers_allow(module, name):
            continue
        allowed = ALLOWED.get((module, name))
        assert allowed is not None, f"{module} imports {name}: a higher layer, or a sibling"
        assert where == allowed[0], f"{module} imports {name} {where}, allowed {allowed[0]}"


def test_every_allowed_exception_is_still_needed() -> None:
    """An exception no module takes any longer is struck from `ALLOWED`, so the list says
    what the package does."""
    for (module, name), (where, _reason) in ALLOWED.items():
        assert not layers_allow(module, name), f"{module} -> {name} needs no exception"
        assert (name, where) in package_imports(module), f"{module} no longer imports {name}"


def _version(text: str) -> tuple[int, ...]:
    return tuple(int(number) for number in text.split("."))


def test_the_moved_names_are_gone_in_the_version_that_removes_them() -> None:
    """The `TopologyError` shim (errors < testing, listed in `ALLOWED`) says when it goes;
    once the package's version reaches that, this fails until the shim is removed."""
    for name, (home, removed_in) in redisson_py.errors._MOVED.items():
        assert _version(redisson_py.__version__) < _version(removed_in), (
            f"remove the shim of {name} (moved to {home}) from redisson_py and its errors"
        )
        with pytest.warns(DeprecationWarning, match=f"removed in {re.escape(removed_in)}"):
            getattr(redisson_py.errors, name)

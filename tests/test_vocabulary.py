"""One vocabulary (issue 41, item 3): a project module is called by its own name.

An ``import ... as`` that renames one of redisson-py's modules (``flows.watchdog as
renewal``, ``scripts.fenced_resource as fencing``) brings an old or second name back,
and a reader grepping for the module misses its call sites. Third-party modules
(``redis.asyncio as aioredis``) and names that are not modules (classes, functions) are
out of scope here; ``import x as x``, the explicit re-export, renames nothing.
"""

from __future__ import annotations

import ast
from pathlib import Path

import redisson_py

PACKAGE = Path(redisson_py.__file__).parent
ROOT = PACKAGE.parent


def _is_project_module(dotted: str) -> bool:
    """Whether ``dotted`` names a module or package of redisson-py (not a class or a
    function defined in one)."""
    parts = dotted.split(".")
    if parts[0] != PACKAGE.name:
        return False
    path = ROOT.joinpath(*parts)
    return path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()


def _renamed_modules(source: str) -> list[tuple[int, str, str]]:
    """(line, module, alias) of each import in ``source`` that binds a project module
    under a name other than its own."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            for name in node.names:
                own = name.name.rsplit(".", 1)[-1]
                if name.asname not in (None, own) and _is_project_module(name.name):
                    found.append((node.lineno, name.name, name.asname))
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for name in node.names:
                dotted = f"{node.module}.{name.name}"
                if name.asname not in (None, name.name) and _is_project_module(dotted):
                    found.append((node.lineno, dotted, name.asname))
    return found


def test_the_check_sees_a_renamed_project_module_and_nothing_else() -> None:
    # The rule's own cases, so that the scan of the package below cannot pass by
    # recognising nothing.
    source = (
        "import redis.asyncio as aioredis\n"
        "import redisson_py.core.routing.naming as names\n"
        "from redisson_py.core.flows import watchdog as renewal\n"
        "from redisson_py.core.flows import lock\n"
        "from redisson_py.core.flows.lock import try_lock as attempt\n"
        "from redisson_py.errors import RedissonError as RedissonError\n"
        "from redisson_py.core.scripts import fenced_resource as fenced_resource\n"
        "def late() -> None:\n"
        "    from redisson_py import asyncio as aio\n"
    )
    assert _renamed_modules(source) == [
        (2, "redisson_py.core.routing.naming", "names"),
        (3, "redisson_py.core.flows.watchdog", "renewal"),
        (9, "redisson_py.asyncio", "aio"),
    ]


def test_no_project_module_is_imported_under_another_name() -> None:
    renamed = [
        f"{path.relative_to(ROOT)}:{line}: {module} as {alias}"
        for path in sorted(PACKAGE.rglob("*.py"))
        for line, module, alias in _renamed_modules(path.read_text(encoding="utf-8"))
    ]
    assert not renamed, "import the module by its own name:\n" + "\n".join(renamed)

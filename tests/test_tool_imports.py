"""The operator CLI and the chaos suite are clients of the library like any other: they
use its public or documented names, and of the core only the documented keyspace
(`redisson_py.core.keyspace`, docs/api/keyspace.md), never its internals (flows,
scripts, routing, state), whose names may change in any release."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import redisson_py

PACKAGE = Path(redisson_py.__file__).resolve().parent
TOOLS = ("cli", "chaos")
DOCUMENTED_CORE = {"redisson_py.core.keyspace"}
"""The core modules a tool may import: those with a page under docs/api/."""


def _core_imports(path: Path) -> list[str]:
    """``module`` (or ``module.name`` for ``from redisson_py.core import name``) for
    every import of the core in ``path``."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found += [
                alias.name for alias in node.names if alias.name.startswith("redisson_py.core")
            ]
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith(
            "redisson_py.core"
        ):
            if node.module == "redisson_py.core":
                found += [f"redisson_py.core.{alias.name}" for alias in node.names]
            else:
                found.append(str(node.module))
    return found


def _tool_modules() -> list[Path]:
    return sorted(path for tool in TOOLS for path in (PACKAGE / tool).rglob("*.py"))


@pytest.mark.parametrize("path", _tool_modules(), ids=lambda p: str(p.relative_to(PACKAGE)))
def test_a_tool_imports_only_the_documented_keyspace_from_the_core(path: Path) -> None:
    internal = [name for name in _core_imports(path) if name not in DOCUMENTED_CORE]
    assert internal == [], f"{path.relative_to(PACKAGE)}: use redisson_py or its keyspace"


def test_the_documented_core_modules_have_an_api_page() -> None:
    pages = (PACKAGE.parent / "docs" / "api").glob("*.md")
    documented = {
        line.removeprefix(":::").strip()
        for page in pages
        for line in page.read_text(encoding="utf-8").splitlines()
        if line.startswith(":::")
    }
    assert documented >= DOCUMENTED_CORE

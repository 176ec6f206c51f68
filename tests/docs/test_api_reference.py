"""The API reference (docs/api/, mkdocstrings) renders cross-references as links: no
docstring keeps a Sphinx role (mkdocstrings shows those as raw text), the built pages
show none, and they document the public paths only.

A role in a docstring is fixed by ``python3 scripts/convert_roles.py`` (then
``python3 scripts/generate_sync.py``); it writes ``[`Lock`][redisson_py.Lock]`` for an
object on the API pages and plain code for any other."""

from __future__ import annotations

import ast
import importlib
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
ROLE = re.compile(r":(?:py:)?(?:meth|class|exc|func|mod|data|attr|obj|const):`")
RENDERED_ROLE = re.compile(r":(?:py:)?(?:meth|class|exc|func|mod|data|attr|obj|const):(?:`|<code>)")
"""A role as the site shows it: Markdown makes its backticks a <code> element."""

PUBLIC_MODULES = (
    "redisson_py",
    "redisson_py.asyncio",
    "redisson_py.config",
    "redisson_py.core.keyspace",  # the keys and channels, for tools that read them
    "redisson_py.errors",
    "redisson_py.events",
    "redisson_py.otel",  # its instrument(), on the events page
    "redisson_py.testing",
)


def _docstrings(path: Path) -> list[tuple[int, str]]:
    return [
        (node.lineno, node.value.value)
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.Expr)
        and isinstance(node.value, ast.Constant)
        and isinstance(node.value.value, str)
    ]


def test_no_docstring_keeps_a_sphinx_role() -> None:
    roles = [
        f"{path.relative_to(ROOT)}:{line}: {match.group(0)}"
        for path in sorted((ROOT / "redisson_py").rglob("*.py"))
        for line, text in _docstrings(path)
        for match in ROLE.finditer(text)
    ]
    assert roles == [], "run python3 scripts/convert_roles.py, then scripts/generate_sync.py"


def _rendered_identifiers() -> list[str]:
    return [
        line.removeprefix(":::").strip()
        for page in sorted((ROOT / "docs" / "api").glob("*.md"))
        for line in page.read_text(encoding="utf-8").splitlines()
        if line.startswith(":::")
    ]


@pytest.mark.parametrize("identifier", _rendered_identifiers())
def test_the_api_pages_document_public_paths(identifier: str) -> None:
    if identifier in PUBLIC_MODULES:
        return
    module, _, name = identifier.rpartition(".")
    assert module in PUBLIC_MODULES, f"{identifier}: document it under its public name"
    exported = getattr(importlib.import_module(module), "__all__", None)
    assert exported is None or name in exported, f"{module} does not export {name}"


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The site, built strict: a cross-reference with no target fails the build."""
    pytest.importorskip("mkdocs", reason="the docs extra builds the site")
    from mkdocs.commands.build import build  # noqa: PLC0415
    from mkdocs.config import load_config  # noqa: PLC0415

    directory = tmp_path_factory.mktemp("site")
    build(load_config(str(ROOT / "mkdocs.yml"), site_dir=str(directory), strict=True))
    return directory


def _api_pages(site: Path) -> list[Path]:
    pages = sorted((site / "api").rglob("*.html"))
    assert len(pages) >= 6, pages
    return pages


def test_the_api_pages_show_no_sphinx_role(site: Path) -> None:
    raw = [
        f"{page.relative_to(site)}: ...{text[max(m.start() - 60, 0) : m.end() + 60]}..."
        for page in _api_pages(site)
        for text in [page.read_text(encoding="utf-8")]
        for m in RENDERED_ROLE.finditer(text)
    ]
    assert raw == [], "\n".join(raw)


def test_the_api_pages_show_no_bases(site: Path) -> None:
    """The shells' bases (ClientHandle[Lock, ConnectionManager]...) are internal."""
    assert [p.name for p in _api_pages(site) if "Bases:" in p.read_text(encoding="utf-8")] == []


def test_the_api_pages_link_the_references(site: Path) -> None:
    page = (site / "api" / "sync" / "index.html").read_text(encoding="utf-8")
    # Redisson.create's docstring: "Raises ConfigError for a bad config, ..."
    assert re.search(
        r'<a class="autorefs autorefs-internal"[^>]*href="[^"]*#redisson_py\.errors\.ConfigError"',
        page,
    )

"""Every public class, method and function of both APIs has a docstring: the API
reference (docs/api/, mkdocstrings) is generated from them."""

from __future__ import annotations

import inspect
from pathlib import Path

import pytest

import redisson_py
import redisson_py.asyncio
import redisson_py.config
import redisson_py.testing


def _public_names() -> list[tuple[str, str, object]]:
    found = []
    for module in (redisson_py, redisson_py.asyncio, redisson_py.config, redisson_py.testing):
        for name in module.__all__:
            found.append((module.__name__, name, getattr(module, name)))
    return found


def _undocumented(owner: str, value: object) -> list[str]:
    missing = []
    if (inspect.isclass(value) or inspect.isfunction(value)) and not inspect.getdoc(value):
        missing.append(owner)
    if inspect.isclass(value) and value.__module__.startswith("redisson_py"):
        for name, member in inspect.getmembers(value):
            if name.startswith("_") or not (
                inspect.isfunction(member) or isinstance(member, property)
            ):
                continue
            defined_in = getattr(member, "__module__", None) or getattr(
                getattr(member, "fget", None), "__module__", ""
            )
            if not str(defined_in).startswith("redisson_py"):
                continue  # inherited from the standard library (an Exception's methods)
            if not inspect.getdoc(member):
                missing.append(f"{owner}.{name}")
    return missing


@pytest.mark.parametrize(
    ("module", "name", "value"), _public_names(), ids=lambda v: v if isinstance(v, str) else ""
)
def test_public_api_is_documented(module: str, name: str, value: object) -> None:
    assert _undocumented(f"{module}.{name}", value) == []


API_PAGES = {"redisson_py": "docs/api/sync.md", "redisson_py.asyncio": "docs/api/asyncio.md"}
"""The API reference page of each API; every public class and function of the module is
rendered there (``::: module.Name``), or, for the objects both APIs share (config, errors,
events), on their own pages."""
SHARED_PAGES = ("docs/api/config.md", "docs/api/errors.md", "docs/api/events.md")


@pytest.mark.parametrize("module", sorted(API_PAGES))
def test_every_public_class_and_function_is_in_the_api_reference(module: str) -> None:
    root = Path(__file__).resolve().parents[2]
    page = (root / API_PAGES[module]).read_text()
    shared = " ".join((root / path).read_text() for path in SHARED_PAGES)
    api = redisson_py if module == "redisson_py" else redisson_py.asyncio
    missing = []
    for name in api.__all__:
        value = getattr(api, name)
        if not (inspect.isclass(value) or inspect.isfunction(value)):
            continue
        home = value.__module__
        if home.startswith(("redisson_py.errors", "redisson_py.config")):
            if value.__name__ not in shared and home not in shared:
                missing.append(name)
            continue
        if api is redisson_py.asyncio and getattr(redisson_py, name, None) is value:
            continue  # the same object as the threaded API's, documented on its page
        if f"::: {module}.{name}\n" not in page + "\n":
            missing.append(name)
    assert missing == [], f"add `::: {module}.<name>` to {API_PAGES[module]} for {missing}"

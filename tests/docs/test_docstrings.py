"""Every public class, method and function of both APIs has a docstring: the API
reference (docs/api/, mkdocstrings) is generated from them."""

from __future__ import annotations

import inspect

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

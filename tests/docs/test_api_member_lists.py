"""An API page that lists a class's members by hand (to lead with what a user calls
first: ``Redisson.create``, ``get_lock``) lists every public member: a method added to
the class and not to the list would vanish from the site."""

from __future__ import annotations

import importlib
import warnings
from pathlib import Path

import pytest
import yaml

API = Path(__file__).resolve().parents[2] / "docs" / "api"


def _listed() -> list[tuple[str, list[str]]]:
    """(identifier, its ``members:`` list) of every ``::: identifier`` block with one."""
    found: list[tuple[str, list[str]]] = []
    for page in sorted(API.glob("*.md")):
        lines = page.read_text(encoding="utf-8").splitlines()
        for index, line in enumerate(lines):
            if not line.startswith(":::"):
                continue
            block = []
            for option in lines[index + 1 :]:
                if not option.startswith("    "):
                    break
                block.append(option[4:])
            options = (yaml.safe_load("\n".join(block)) or {}).get("options", {})
            if isinstance(options.get("members"), list):
                found.append((line.removeprefix(":::").strip(), options["members"]))
    return found


def _resolve(identifier: str) -> object:
    """The module, or the module's attribute, ``identifier`` names."""
    try:
        return importlib.import_module(identifier)
    except ModuleNotFoundError:
        module, _, name = identifier.rpartition(".")
        return getattr(importlib.import_module(module), name)


def test_the_client_pages_lead_with_create_and_get_lock() -> None:
    listed = dict(_listed())
    for client in ("redisson_py.Redisson", "redisson_py.asyncio.Redisson"):
        assert listed[client][:2] == ["create", "get_lock"], client


@pytest.mark.parametrize(("identifier", "members"), _listed(), ids=lambda v: str(v)[:40])
def test_a_hand_made_member_list_is_complete(identifier: str, members: list[str]) -> None:
    public = {name for name in dir(_resolve(identifier)) if not name.startswith("_")}
    assert sorted(members) == sorted(public)
    assert len(members) == len(set(members))


def _documented() -> list[str]:
    return [
        line.removeprefix(":::").strip()
        for page in sorted(API.glob("*.md"))
        for line in page.read_text(encoding="utf-8").splitlines()
        if line.startswith(":::")
    ]


def test_no_rendered_docstring_keeps_a_rest_literal_block() -> None:
    """mkdocstrings renders docstrings as Markdown: a reST ``::`` would show as is, with
    its example as an indented paragraph; a ```` ```python ```` fence renders as code."""
    raw: list[str] = []
    for identifier in _documented():
        target = _resolve(identifier)
        for name in ["", *dir(target)]:
            if name.startswith("_"):
                continue
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")  # a deprecated alias warns on access
                    obj = getattr(target, name) if name else target
            except AttributeError:  # a name a module's __getattr__ refuses
                continue
            doc = getattr(obj, "__doc__", None) or ""
            if any(line.rstrip().endswith("::") for line in doc.splitlines()):
                raw.append(f"{identifier}.{name}" if name else identifier)
    assert raw == []

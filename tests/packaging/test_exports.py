"""What the packages export.

The threaded API (:mod:`redisson_py`) and the asyncio API (:mod:`redisson_py.asyncio`)
offer the same names, and their classes the same methods; the test harness's error is
exported by the harness (:mod:`redisson_py.testing`), and its old homes still give it,
with a DeprecationWarning.
"""

from __future__ import annotations

import inspect
import subprocess
import sys
from types import ModuleType

import pytest

import redisson_py
import redisson_py.asyncio
import redisson_py.errors
import redisson_py.testing
from redisson_py.errors import RedissonError
from redisson_py.testing import TopologyError

APIS = (redisson_py, redisson_py.asyncio)

TOP_LEVEL_ONLY = {"__version__"}
"""Exported by :mod:`redisson_py` alone. ``__version__`` is the distribution's version,
written once in ``redisson_py/__init__.py`` (hatch reads it there); the asyncio API is a
subpackage of the same distribution, not a separately versioned one, so a second copy
would only be a second place to forget."""

ASYNCIO_ONLY_METHODS = {"is_held_by_current_task": "is_held_by_current_thread"}
"""Methods only the asyncio classes have, each with the name both APIs share for it.
An asyncio lock is owned by a task and says so (``is_held_by_current_task``), and keeps
the threaded API's name as an alias (``# async only`` in its source) so code written
against both APIs runs on either; the threaded API has no tasks, so no task name."""

NEW_IMPORT = r"from redisson_py\.testing import TopologyError"


# -- the harness's error ----------------------------------------------------------------


def test_topology_error_is_the_harness_error_and_a_redisson_error() -> None:
    assert redisson_py.testing.TopologyError is TopologyError
    assert TopologyError.__module__ == "redisson_py.testing.errors"
    assert issubclass(TopologyError, RedissonError)
    assert "TopologyError" in redisson_py.testing.__all__
    for api in APIS:
        assert "TopologyError" not in api.__all__, api.__name__


def test_the_old_import_from_errors_gives_the_class_and_warns() -> None:
    with pytest.warns(DeprecationWarning, match=NEW_IMPORT) as caught:
        from redisson_py.errors import TopologyError as old  # noqa: PLC0415

    assert old is TopologyError
    # Attributed to the importing line, so the warning points at the code to change.
    assert {warning.filename for warning in caught} == {__file__}


def test_the_old_import_from_the_package_gives_the_class_and_warns() -> None:
    with pytest.warns(DeprecationWarning, match=NEW_IMPORT) as caught:
        from redisson_py import TopologyError as old  # noqa: PLC0415
    assert old is TopologyError
    assert {warning.filename for warning in caught} == {__file__}

    with pytest.warns(DeprecationWarning, match=NEW_IMPORT):
        assert redisson_py.TopologyError is TopologyError


@pytest.mark.parametrize("module", [redisson_py, redisson_py.errors], ids=lambda m: m.__name__)
def test_other_missing_names_still_raise_attribute_error(module: ModuleType) -> None:
    with pytest.raises(AttributeError, match="no attribute 'NoSuchName'"):
        getattr(module, "NoSuchName")  # noqa: B009


def test_importing_the_package_imports_no_harness_and_warns_nothing() -> None:
    """The deprecated names are served lazily: importing :mod:`redisson_py` (and its
    errors) neither imports the harness (no import cycle) nor warns."""
    probe = (
        "import sys, redisson_py, redisson_py.errors, redisson_py.asyncio\n"
        "loaded = sorted(m for m in sys.modules if m.startswith('redisson_py.testing'))\n"
        "assert not loaded, loaded\n"
    )
    result = subprocess.run(
        [sys.executable, "-W", "error::DeprecationWarning", "-c", probe],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 0, result.stderr


# -- the two APIs offer the same ------------------------------------------------------


@pytest.mark.parametrize("api", APIS, ids=lambda m: m.__name__)
def test_every_exported_name_exists_once(api: ModuleType) -> None:
    assert len(api.__all__) == len(set(api.__all__)), "a name is listed twice"
    assert [name for name in api.__all__ if not hasattr(api, name)] == []


def test_both_apis_export_the_same_names() -> None:
    threaded = set(redisson_py.__all__) - TOP_LEVEL_ONLY
    assert threaded == set(redisson_py.asyncio.__all__), (
        f"only threaded: {sorted(threaded - set(redisson_py.asyncio.__all__))}; "
        f"only asyncio: {sorted(set(redisson_py.asyncio.__all__) - threaded)}"
    )


def _public_methods(cls: type) -> set[str]:
    """The public methods and properties of ``cls``, inherited ones included."""
    return {
        name
        for name, member in inspect.getmembers(cls)
        if not name.startswith("_") and (inspect.isroutine(member) or isinstance(member, property))
    }


def _classes_in_both() -> list[str]:
    return sorted(
        name
        for name in set(redisson_py.__all__) & set(redisson_py.asyncio.__all__)
        if inspect.isclass(getattr(redisson_py, name))
        and inspect.isclass(getattr(redisson_py.asyncio, name))
    )


@pytest.mark.parametrize("name", _classes_in_both())
def test_the_classes_of_both_apis_have_the_same_methods(name: str) -> None:
    threaded = _public_methods(getattr(redisson_py, name))
    asyncio_side = _public_methods(getattr(redisson_py.asyncio, name))
    for asyncio_only, shared in ASYNCIO_ONLY_METHODS.items():
        if shared in asyncio_side:
            asyncio_side.discard(asyncio_only)
    assert threaded == asyncio_side, (
        f"only threaded: {sorted(threaded - asyncio_side)}; "
        f"only asyncio: {sorted(asyncio_side - threaded)}"
    )

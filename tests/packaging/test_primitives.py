"""The two hand-written ``_primitives`` modules are twins.

Every other module of :mod:`redisson_py.sync` is generated from its asyncio source and
uses a primitive by the name the asyncio source uses, so
:mod:`redisson_py.asyncio._primitives` and :mod:`redisson_py.sync._primitives` must
define the same public names, and each class the methods the asyncio twin offers.
"""

from __future__ import annotations

import ast
import inspect
from types import ModuleType

import pytest

import redisson_py.asyncio._primitives as asyncio_primitives
import redisson_py.sync._primitives as sync_primitives

TWINS = (asyncio_primitives, sync_primitives)


def _target_names(target: ast.expr) -> set[str]:
    if isinstance(target, ast.Name):
        return {target.id}
    if isinstance(target, ast.Starred):
        return _target_names(target.value)
    if isinstance(target, ast.Tuple | ast.List):
        return {name for element in target.elts for name in _target_names(element)}
    return set()  # an attribute or item assignment binds no name of the module


def _bound(statements: list[ast.stmt]) -> set[str]:
    names: set[str] = set()
    for node in statements:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names.update(name for target in node.targets for name in _target_names(target))
        elif isinstance(node, ast.AnnAssign | ast.AugAssign):
            names.update(_target_names(node.target))
        elif isinstance(node, ast.If | ast.Try | ast.With):
            # A definition made under a condition (a platform check) is the module's too.
            nested = [*node.body, *getattr(node, "orelse", []), *getattr(node, "finalbody", [])]
            nested += [s for handler in getattr(node, "handlers", []) for s in handler.body]
            names |= _bound(nested)
    return names


def _defined(module: ModuleType) -> set[str]:
    """The public names ``module`` defines itself: its functions, classes and constants.

    Read from its source, not its namespace: a name it imported (``asyncio``, ``Any``) is
    not its own, while a name it binds to an imported object is (the threaded
    ``ThreadLock = threading.Lock``, the asyncio ``Cancelled = asyncio.CancelledError``).
    """
    names = _bound(ast.parse(inspect.getsource(module)).body)
    assert all(hasattr(module, name) for name in names), "read a name the module lacks"
    return {name for name in names if not name.startswith("_")}


def _class_of(value: object) -> type:
    """``value`` if it is a class, else the class of what it makes. ``threading.Lock``
    (the threaded ``ThreadLock``) is a function making locks before Python 3.13 and the
    lock class from 3.13 on; either way its locks' class is compared, the same on every
    version."""
    if inspect.isclass(value):
        return value
    assert callable(value), f"{value!r} is a class on one side only"
    return type(value())


def _public_methods(cls: type) -> set[str]:
    """The public methods and properties of ``cls``, inherited ones included: the
    generated code may call any of them."""
    return {
        name
        for name, member in inspect.getmembers(cls)
        if not name.startswith("_") and (inspect.isroutine(member) or isinstance(member, property))
    }


def test_both_define_the_same_public_names() -> None:
    asyncio_names, sync_names = _defined(asyncio_primitives), _defined(sync_primitives)
    assert asyncio_names == sync_names, (
        f"only asyncio: {sorted(asyncio_names - sync_names)}; "
        f"only threaded: {sorted(sync_names - asyncio_names)}"
    )


def _classes() -> list[str]:
    return sorted(
        name
        for name in _defined(asyncio_primitives) & _defined(sync_primitives)
        if any(inspect.isclass(getattr(module, name)) for module in TWINS)
    )


def _own(cls: type, method: str) -> bool:
    """True when ``method`` of ``cls`` is written in this package, not inherited from
    the standard library class it is or extends."""
    for klass in cls.__mro__:
        if method in vars(klass):
            return klass.__module__.startswith("redisson_py")
    return False


@pytest.mark.parametrize("name", _classes())
def test_each_class_has_the_same_public_methods_in_both(name: str) -> None:
    """The threaded twin offers every method of the asyncio one (the generated code
    calls those), and no other method of its own. It may have more inherited from the
    standard library class it is or extends (``threading.Event.isSet``,
    ``threading.Lock.acquire``): the generated code cannot call those, since its asyncio
    source does not have them."""
    asyncio_cls = _class_of(getattr(asyncio_primitives, name))
    sync_cls = _class_of(getattr(sync_primitives, name))
    asyncio_methods, sync_methods = _public_methods(asyncio_cls), _public_methods(sync_cls)
    assert asyncio_methods <= sync_methods, (
        f"only asyncio: {sorted(asyncio_methods - sync_methods)}"
    )
    own_extras = {method for method in sync_methods - asyncio_methods if _own(sync_cls, method)}
    assert not own_extras, f"only threaded: {sorted(own_extras)}"

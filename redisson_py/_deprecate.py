"""Names that moved: the old import keeps working, with a DeprecationWarning.

A module whose names moved maps each to its new module and serves them from a module-level
``__getattr__`` (PEP 562), which runs only for names the module no longer defines::

    _MOVED = {"TopologyError": ("redisson_py.testing", "0.3.0")}

    def __getattr__(name: str) -> Any:
        return moved_attribute(__name__, name, _MOVED)
"""

from __future__ import annotations

import importlib
import warnings
from collections.abc import Mapping
from typing import Any


def moved_attribute(module: str, name: str, moved: Mapping[str, tuple[str, str]]) -> Any:
    """The object ``name`` of module ``module``, now defined in module ``moved[name][0]``;
    the old name goes in version ``moved[name][1]``.

    Emits a `DeprecationWarning` naming the new import and that version, attributed to
    the line that asked for the old name. The new module is imported only now, so the old
    one need not import it (nor risk an import cycle) when it is itself imported. Raises
    `AttributeError` for a name not in ``moved``, as a module without it would.
    """
    if name not in moved:
        raise AttributeError(f"module {module!r} has no attribute {name!r}")
    home, removed_in = moved[name]
    warnings.warn(
        f"{module}.{name} has moved: use `from {home} import {name}`"
        f" (the old name is removed in {removed_in})",
        DeprecationWarning,
        # 1 is this function, 2 the module's __getattr__, 3 the code that asked (import
        # machinery frames in between are skipped by the warnings module).
        stacklevel=3,
    )
    return getattr(importlib.import_module(home), name)

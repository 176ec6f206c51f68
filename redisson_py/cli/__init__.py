"""The ``redisson-py`` command line.

Each subcommand lives in its own module of this package and is listed once in
`COMMAND_MODULES`. A command module provides::

    def register(subparsers) -> None:
        parser = subparsers.add_parser("name", help="...")
        ...
        parser.set_defaults(handler=run)

    def run(args: argparse.Namespace) -> int: ...

so adding a command (``demo``, ``chaos``) is one new module and one line in `COMMANDS`
(its module and its one-line help). The parser imports a command's module only when that
command runs (or for the full parser, `build_parser()` with no arguments): an operator's
``redisson-py lock status`` loads neither the test harness nor the chaos suite. Errors
redisson-py raises on purpose ([`RedissonError`][redisson_py.errors.RedissonError]) are printed as
one line on stderr and exit with status 1; no traceback.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Callable, Sequence

from redisson_py import __version__
from redisson_py.errors import RedissonError

__all__ = ["COMMANDS", "COMMAND_MODULES", "build_parser", "main"]

# One line per subcommand: its module, and the help `redisson-py --help` shows for it
# without importing the module (the module's own parser says the same; a test holds it).
COMMANDS: dict[str, tuple[str, str]] = {
    "topology": (
        "redisson_py.cli.topology",
        "start and stop local Redis topologies for tests and demos",
    ),
    "chaos": (
        "redisson_py.cli.chaos",
        "run a failover scenario and print what each lock mode guarantees",
    ),
    "demo": (
        "redisson_py.cli.demo",
        "watch worker processes share one lock (starts a local Redis)",
    ),
    "lock": ("redisson_py.cli.lock_command", "show, force-unlock, or hold a lock around a command"),
    "config": ("redisson_py.cli.config_command", "check a Redisson YAML config"),
}
COMMAND_MODULES: tuple[str, ...] = tuple(module for module, _help in COMMANDS.values())

EXIT_ERROR = 1
EXIT_USAGE = 2
EXIT_INTERRUPTED = 130


def build_parser(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """The argument parser for ``argv``.

    With no ``argv``, every command module is imported and registered (the full parser).
    With ``argv``, only the module of the command ``argv`` names is imported; every other
    command is a stub carrying its name and help, enough for ``redisson-py --help``.
    """
    wanted = None if argv is None else _command_named(argv)
    parser = argparse.ArgumentParser(
        prog="redisson-py",
        description="Distributed locks on Redis with Redisson's semantics: tools.",
    )
    parser.add_argument("--version", action="version", version=f"redisson-py {__version__}")
    subparsers = parser.add_subparsers(title="commands", metavar="COMMAND")
    for name, (module, help_text) in COMMANDS.items():
        if argv is None or name == wanted:
            importlib.import_module(module).register(subparsers)
        else:
            subparsers.add_parser(name, help=help_text)
    return parser


def _command_named(argv: Sequence[str]) -> str | None:
    """The command ``argv`` runs: its first argument that is not an option (the top-level
    parser has only ``--help`` and ``--version``, which take no value)."""
    for arg in argv:
        if not arg.startswith("-"):
            return arg
    return None


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line with ``argv`` (default: ``sys.argv[1:]``); return the exit status."""
    arguments = sys.argv[1:] if argv is None else list(argv)
    parser = build_parser(arguments)
    args = parser.parse_args(arguments)
    handler: Callable[[argparse.Namespace], int] | None = getattr(args, "handler", None)
    if handler is None:
        parser.print_help(sys.stderr)
        return EXIT_USAGE
    try:
        return handler(args)
    except RedissonError as exc:
        print(f"redisson-py: error: {exc}", file=sys.stderr, flush=True)
        return EXIT_ERROR
    except KeyboardInterrupt:
        print("redisson-py: interrupted", file=sys.stderr, flush=True)
        return EXIT_INTERRUPTED

"""The ``redisson-py`` command line.

Each subcommand lives in its own module of this package and is listed once in
`COMMAND_MODULES`. A command module provides::

    def register(subparsers) -> None:
        parser = subparsers.add_parser("name", help="...")
        ...
        parser.set_defaults(handler=run)

    def run(args: argparse.Namespace) -> int: ...

so adding a command (``demo``, ``chaos``) is one new module and one line here. Errors
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

__all__ = ["COMMAND_MODULES", "build_parser", "main"]

# One line per subcommand module.
COMMAND_MODULES: tuple[str, ...] = (
    "redisson_py.cli.topology",
    "redisson_py.cli.chaos",
    "redisson_py.cli.demo",
    "redisson_py.cli.lock_command",
    "redisson_py.cli.config_command",
)

EXIT_OK = 0
EXIT_ERROR = 1
EXIT_USAGE = 2
EXIT_INTERRUPTED = 130


def build_parser() -> argparse.ArgumentParser:
    """The full argument parser, with every command module registered."""
    parser = argparse.ArgumentParser(
        prog="redisson-py",
        description="Distributed locks on Redis with Redisson's semantics: tools.",
    )
    parser.add_argument("--version", action="version", version=f"redisson-py {__version__}")
    subparsers = parser.add_subparsers(title="commands", metavar="COMMAND")
    for name in COMMAND_MODULES:
        importlib.import_module(name).register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line with ``argv`` (default: ``sys.argv[1:]``); return the exit status."""
    parser = build_parser()
    args = parser.parse_args(argv)
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

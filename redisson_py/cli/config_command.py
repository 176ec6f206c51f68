"""``redisson-py config check FILE [--connect]``: validate a Redisson YAML config.

Offline, the file is parsed and validated
([`Config.from_yaml`][redisson_py.config.Config.from_yaml]); an invalid file prints the
[`ConfigError`][redisson_py.errors.ConfigError] message (key and line) and exits 2. With
``--connect`` a client is also created, which reaches the deployment and reads its
topology; the mode, the masters and each master's replicas are reported and the client
is shut down. Exit status: 0 valid (and reached), 1 could not connect, 2 invalid.

What the file sets that has no effect here (Java-only keys, keys Redisson removed,
settings redisson-py does not use, likely unit slips) is printed as one sentence each on
stderr, ``FILE, line N: key: what and why``, after the verdict; they do not make the file
invalid. They are collected, not emitted as Python warnings, so no warnings filter
(``PYTHONWARNINGS=error`` included) turns them into a traceback.

``--json`` prints one object: ``{"file", "valid", "error", "warnings"}`` plus, with
``--connect``, ``"connected"`` and ``"topology": {"mode", "masters": [{"address",
"replicas": [...]}]}``. ``"warnings"`` is a list of ``{"file", "line", "key", "message",
"category"}``. Addresses never carry credentials.
"""

from __future__ import annotations

import argparse
import os
import sys
import warnings
from typing import Any

from redisson_py.cli.common import add_common_options, emit_json
from redisson_py.config import Config, ConfigNotice, redact_address
from redisson_py.errors import ConfigError, ConnectError, RedissonError
from redisson_py.sync.client import Redisson

__all__ = ["register", "run_check"]

EXIT_INVALID = 2
_DEVELOPER_WARNINGS = (
    DeprecationWarning,
    PendingDeprecationWarning,
    ResourceWarning,
    ImportWarning,
)
EXIT_UNREACHABLE = 1


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``config`` to the ``redisson-py`` parser."""
    parser = subparsers.add_parser(
        "config", help="check a Redisson YAML config", description="Work with configs."
    )
    commands = parser.add_subparsers(title="config commands", metavar="COMMAND")
    check = commands.add_parser(
        "check",
        help="validate a config offline; --connect also reaches the deployment",
        description="Validate FILE offline (exit 2 with the key and line when invalid). "
        "With --connect also create a client, report the topology it found (mode, masters, "
        "replicas per master) and shut it down (exit 1 when it cannot connect).",
    )
    check.add_argument("file", metavar="FILE", help="the Redisson YAML config to check")
    check.add_argument(
        "--connect", action="store_true", help="also connect and report the topology found"
    )
    add_common_options(check, config=False)
    check.set_defaults(handler=run_check)
    parser.set_defaults(handler=lambda _args: _usage(parser))


def _usage(parser: argparse.ArgumentParser) -> int:
    parser.print_help(sys.stderr)
    return EXIT_INVALID


def topology_report(client: Any) -> dict[str, Any]:
    """The mode, masters and replicas per master a connected client found."""
    manager = client.connection_manager
    view = manager.view
    return {
        "mode": manager.mode.kind,
        "masters": [
            {
                "address": redact_address(str(master)),
                "replicas": [redact_address(str(r)) for r in view.replicas.get(master, ())],
            }
            for master in view.masters
        ],
    }


def run_check(args: argparse.Namespace) -> int:
    """Check the config; see the module docstring for output and exit status."""
    notices: list[ConfigNotice] = []
    document: dict[str, Any] = {"file": args.file, "valid": False, "error": None, "warnings": []}
    # Any Python warning raised on the way (a dependency's, say) is recorded and printed
    # like a notice, never raised, whatever the warnings filter says.
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        return _check(args, document, notices, caught)


def _check(
    args: argparse.Namespace,
    document: dict[str, Any],
    notices: list[ConfigNotice],
    caught: list[warnings.WarningMessage],
) -> int:
    try:
        if _is_file(args.file):
            config = Config.from_yaml(args.file, notices=notices)
        else:
            config = _missing(args.file)
    except ConfigError as exc:
        document["error"] = str(exc)
        _finish(args, document, f"{args.file}: invalid: {exc}", notices, caught, error=True)
        return EXIT_INVALID
    document["valid"] = True
    if not args.connect:
        _finish(args, document, f"{args.file}: valid", notices, caught)
        return 0
    document["connected"] = False
    try:
        client = Redisson.create(config)
    except RedissonError as exc:
        reason = str(exc)
        if isinstance(exc, ConnectError) and exc.next_step:
            reason = reason.removesuffix(" " + exc.next_step)  # it says to run this command
        document["error"] = reason
        message = f"{args.file}: valid, but could not connect: {reason}"
        _finish(args, document, message, notices, caught, error=True)
        return EXIT_UNREACHABLE
    try:
        report = topology_report(client)
    finally:
        client.shutdown()
    document["connected"] = True
    document["topology"] = report
    lines = [f"{args.file}: valid; connected", f"mode: {report['mode']}"]
    for master in report["masters"]:
        replicas = ", ".join(master["replicas"]) or "none"
        lines.append(f"master {master['address']}: replicas: {replicas}")
    _finish(args, document, "\n".join(lines), notices, caught)
    return 0


def _is_file(path: str) -> bool:
    return os.path.isfile(path)


def _missing(path: str) -> Config:
    raise ConfigError(f"config file {path!r} does not exist or is not a file")


def _other_warning(caught: warnings.WarningMessage) -> dict[str, Any]:
    """A Python warning met while checking, in the shape of a notice's ``as_dict``."""
    return {
        "file": None,
        "line": None,
        "key": None,
        "message": str(caught.message),
        "category": caught.category.__name__,
    }


def _finish(
    args: argparse.Namespace,
    document: dict[str, Any],
    message: str,
    notices: list[ConfigNotice],
    caught: list[warnings.WarningMessage],
    *,
    error: bool = False,
) -> None:
    # Warnings meant for developers (deprecations, unclosed resources) stay hidden, as
    # Python's default filters hide them; the rest are said like notices.
    caught = [c for c in caught if not issubclass(c.category, _DEVELOPER_WARNINGS)]
    document["warnings"] = [n.as_dict() for n in notices] + [_other_warning(c) for c in caught]
    if args.json:
        emit_json(document)
        return
    print(message, file=sys.stderr if error else sys.stdout, flush=True)
    for notice in notices:
        print(f"warning: {notice}", file=sys.stderr, flush=True)
    for other in caught:
        print(f"warning: {other.category.__name__}: {other.message}", file=sys.stderr, flush=True)

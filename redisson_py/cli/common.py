"""Pieces shared by the operator commands (``lock``, ``config``): finding the config,
the ``--config``/``--json`` options, and JSON output."""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any

from redisson_py.config import Config, ConfigNotice
from redisson_py.errors import ConfigError

__all__ = ["CONFIG_ENV", "add_common_options", "emit_json", "load_config", "text"]

CONFIG_ENV = "REDISSON_PY_CONFIG"
"""The environment variable naming the config file when ``--config`` is not given."""


def add_common_options(parser: argparse.ArgumentParser, *, config: bool = True) -> None:
    """Add ``--json`` (and ``--config FILE`` unless ``config`` is False) to ``parser``."""
    if config:
        parser.add_argument(
            "--config",
            metavar="FILE",
            default=None,
            help=f"a Redisson YAML config (default: the file ${CONFIG_ENV} names)",
        )
    parser.add_argument(
        "--json", action="store_true", help="print one JSON object (a stable shape) for scripts"
    )


def load_config(path: str | None) -> Config:
    """The config from ``path``, else from the file ``$REDISSON_PY_CONFIG`` names.

    Raises [`ConfigError`][redisson_py.errors.ConfigError] naming both when neither is given, or
    when the file is invalid (the message names the key and line). What the file sets that
    has no effect here is printed on stderr, one ``warning: FILE, line N: key: ...``
    sentence each, never as a Python warning (so no warnings filter ends the command).
    """
    source = path or os.environ.get(CONFIG_ENV) or None
    if source is None:
        raise ConfigError(
            f"no config: pass --config FILE or set the environment variable {CONFIG_ENV} "
            "to the path of a Redisson YAML file"
        )
    if not os.path.isfile(source):
        raise ConfigError(f"config file {source!r} does not exist or is not a file")
    notices: list[ConfigNotice] = []
    config = Config.from_yaml(source, notices=notices)
    for notice in notices:
        print(f"warning: {notice}", file=sys.stderr, flush=True)
    return config


def emit_json(document: dict[str, Any]) -> None:
    """Print ``document`` as one line of JSON on stdout."""
    print(json.dumps(document, sort_keys=True), flush=True)


def text(value: object) -> str:
    """A Redis reply (bytes or str) as text."""
    if isinstance(value, bytes):
        return value.decode("utf-8", "backslashreplace")
    return str(value)

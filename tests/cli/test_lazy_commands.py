"""The command line imports a command's module only when that command runs: an operator's
``redisson-py lock status`` loads neither the test harness nor the chaos suite."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from redisson_py.cli import COMMANDS, build_parser

# A fresh interpreter runs main(ARGV) and prints the redisson_py modules it then holds.
_PROBE = """
import contextlib, io, json, sys
from redisson_py.cli import main
with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
    try:
        main(json.loads(sys.argv[1]))
    except SystemExit:
        pass
print(json.dumps(sorted(m for m in sys.modules if m.startswith("redisson_py"))))
"""


def _loaded(argv: list[str]) -> list[str]:
    out = subprocess.run(
        [sys.executable, "-c", _PROBE, json.dumps(argv)],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    ).stdout
    loaded: list[str] = json.loads(out)
    return loaded


@pytest.mark.parametrize(
    "argv",
    [
        ["lock", "status", "--help"],
        ["lock", "status", "a", "--config", "/nonexistent/redisson.yaml"],
        ["lock", "list", "--help"],
        ["lock", "list", "--config", "/nonexistent/redisson.yaml"],
        ["lock", "unlock", "--help"],
        ["lock", "unlock", "a", "--force", "--yes", "--config", "/nonexistent/redisson.yaml"],
        ["config", "check", "--help"],
        ["config", "check", "/nonexistent/redisson.yaml"],
    ],
    ids=" ".join,
)
def test_operator_commands_load_no_harness_and_no_chaos_suite(argv: list[str]) -> None:
    loaded = _loaded(argv)
    harness = [m for m in loaded if m.startswith(("redisson_py.testing", "redisson_py.chaos"))]
    assert harness == [], f"{argv} loaded {harness}"
    # and far fewer modules than the full parser's (169 of redisson_py before the lazy parser)
    assert len(loaded) < 120, len(loaded)


def test_the_command_that_runs_is_the_one_imported() -> None:
    loaded = _loaded(["topology", "list", "--help"])
    assert "redisson_py.cli.topology" in loaded
    assert "redisson_py.cli.lock_command" not in loaded and "redisson_py.cli.chaos" not in loaded


def test_the_stub_help_is_the_command_modules_help() -> None:
    """``redisson-py --help`` shows each command's help from `COMMANDS` without importing
    the module: it must say what the module's own parser says."""
    full = build_parser()
    lazy = build_parser(["--help"])
    assert full.format_help() == lazy.format_help()
    for _module, help_text in COMMANDS.values():
        assert help_text in lazy.format_help()


def test_a_command_parses_the_same_from_the_lazy_parser() -> None:
    argv = ["lock", "status", "a", "b{c}", "--json", "--config", "x.yaml"]
    lazy = build_parser(argv).parse_args(argv)
    full = build_parser().parse_args(argv)
    assert (lazy.names, lazy.json, lazy.config) == (full.names, full.json, full.config)

"""Run the blocks of one README section, in order, in this process and working directory.

Usage: ``python readme_runner.py BLOCKS_JSON MARKDOWN_PATH``, where ``BLOCKS_JSON`` holds
``[{"language", "text", "line"}, ...]``. Python blocks share one namespace (that of a
``__main__`` module) and are compiled under the Markdown file's name with their own line
numbers, so a traceback points at the README line. YAML blocks that are Redisson configs
go through ``Config.from_yaml`` (with an empty environment, so ``${VAR:-default}`` takes
its default); other YAML must parse. Shell blocks run in bash with ``-e -o pipefail``.
A ``ConfigWarning`` is an error: a reader copying the example would see it.

Prints one line per block; exits 1 at the first block that fails, after its traceback.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
import traceback
import warnings
from pathlib import Path
from typing import Any

SHELL_TIMEOUT = 120.0
"""Seconds a shell block may run; the long commands are skipped in the README instead."""

_REDISSON_CONFIG = re.compile(
    r"^(singleServerConfig|masterSlaveServersConfig|sentinelServersConfig|"
    r"clusterServersConfig|replicatedServersConfig)\s*:",
    re.MULTILINE,
)


def run_python(text: str, line: int, source: str, namespace: dict[str, Any]) -> None:
    code = compile("\n" * (line - 1) + text, source, "exec")
    exec(code, namespace)


def run_yaml(text: str) -> None:
    if _REDISSON_CONFIG.search(text):
        from redisson_py import Config  # noqa: PLC0415

        Config.from_yaml(text, env={})
        return
    import yaml  # noqa: PLC0415

    yaml.safe_load(text)


def run_sh(text: str) -> None:
    result = subprocess.run(
        ["bash", "-e", "-o", "pipefail", "-c", text], timeout=SHELL_TIMEOUT, check=False
    )
    if result.returncode != 0:
        raise RuntimeError(f"the shell block exited with status {result.returncode}")


def main(argv: list[str]) -> int:
    blocks = json.loads(Path(argv[1]).read_text(encoding="utf-8"))
    source = argv[2]
    name = Path(source).name
    from redisson_py.config import ConfigWarning  # noqa: PLC0415

    warnings.simplefilter("error", ConfigWarning)
    namespace: dict[str, Any] = {"__name__": "__main__", "__builtins__": __builtins__}
    for block in blocks:
        language, line = block["language"], block["line"]
        started = time.monotonic()
        print(f"--- {name}:{line} {language}", flush=True)
        try:
            if language == "python":
                run_python(block["text"], line, source, namespace)
            elif language == "yaml":
                run_yaml(block["text"])
            elif language == "sh":
                run_sh(block["text"])
            else:
                raise ValueError(f"no runner for {language!r} blocks")
        except BaseException:
            sys.stdout.flush()
            traceback.print_exc()
            sys.stderr.flush()
            print(f"--- {name}:{line} {language} FAILED", flush=True)
            return 1
        sys.stdout.flush()
        sys.stderr.flush()
        print(f"--- {name}:{line} {language} ok ({time.monotonic() - started:.2f} s)", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

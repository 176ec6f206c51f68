#!/usr/bin/env python3
"""Generate the threaded shell (redisson_py/sync/) from the asyncio shell.

The asyncio modules are the one source; each one becomes its threaded twin by the
substitutions below (drop ``async``/``await``, swap import paths and a few words), then
ruff sorts the imports, drops the ones left unused and formats the result. What cannot be
written once lives in each side's ``_primitives`` module, which is not generated.

    python3 scripts/generate_sync.py          # write redisson_py/sync/*.py
    python3 scripts/generate_sync.py --check  # exit 1 when a generated file is stale

Why our own script and not ``unasync``: unasync renames whole tokens only, and this
shell needs dotted import paths rewritten (``redis.asyncio.client`` -> ``redis.client``),
annotations unwrapped (``Awaitable[R]`` -> ``R``) and docstring words swapped (task ->
thread), which its rules cannot express; the substitution list stays short and visible.
A rule that matches nothing in any asyncio module fails the run (in both modes): a dead
rule would hide that the text it was written for changed or went away.
"""

from __future__ import annotations

import argparse
import difflib
import re
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SOURCE = ROOT / "redisson_py" / "asyncio"
TARGET = ROOT / "redisson_py" / "sync"
HAND_WRITTEN = {"__init__.py", "_primitives.py", "watchdog_threads.py"}
"""Not generated: written by hand on both sides, or (``watchdog_threads.py``, the asyncio
client's watchdog threads) on the asyncio side only."""

HEADER = (
    "# GENERATED from redisson_py/asyncio/{name} by scripts/generate_sync.py: do not edit.\n"
    "# Edit the asyncio source, then run `python3 scripts/generate_sync.py`.\n"
)

Rule = tuple[str, str]
"""A substitution: a regular expression (``re.MULTILINE``) and its replacement."""

ASYNCIO_MODULES = "|".join(sorted(path.stem for path in SOURCE.glob("*.py")))
"""The asyncio shell's modules: ``redisson_py.asyncio.<module>`` is a module path, any
other ``redisson_py.asyncio.<name>`` a public name (re-exported by the package)."""

# Ordered: earlier rules see the text before later ones change it.
SUBSTITUTIONS: list[Rule] = [
    # a docstring paragraph about an asyncio-only argument (Redisson.create's)
    (r"^ *``watchdog_thread``.*\n(?: *\S.*\n)*? *\n", ""),
    # imports and module paths
    (r"^import redis\.asyncio as aioredis$", "import redis"),
    (r"\bredis\.asyncio\.", "redis."),
    (r"\baioredis\.", "redis."),
    # public names in docstrings and cross-references: redisson_py.asyncio.Lock and
    # redisson_py.asyncio.current_owner_id are redisson_py.Lock and .current_owner_id
    (rf"\bredisson_py\.asyncio\.(?!(?:{ASYNCIO_MODULES})\b)(?=\w)", "redisson_py."),
    (r"\bredisson_py\.asyncio\b", "redisson_py.sync"),
    # the async syntax
    (r"\basync def\b", "def"),
    (r"\basync with\b", "with"),
    (r"\bawait ", ""),
    (r"\b__aenter__\b", "__enter__"),
    (r"\b__aexit__\b", "__exit__"),
    (r"\baclose\b", "close"),
    (r"Callable\[P, Awaitable\[R\]\]", "Callable[P, R]"),
    (r"Coroutine\[Any, Any, R\]", "R"),
    # words
    (r"\btasks of its event loop\b", "threads of the process"),
    (r" \(each timer of an event loop costs microseconds\)", ""),
    (r"an async context manager", "a context manager"),
    (r"\basyncio\.Lock\b", "threading.Lock"),
    (r"\bis_held_by_current_task\b", "is_held_by_current_thread"),
    (r"\btasks\b", "threads"),
    (r"\btask\b", "thread"),
    (r"\bTask\b", "Thread"),
    (r"\bWait until\b", "Block until"),
]
ASYNC_ONLY = re.compile(r"^.*# async only\n", re.MULTILINE)
FORBIDDEN = re.compile(r"\b(asyncio|await|async|aioredis)\b")
"""Words that must not survive in a generated module outside this sentence's exceptions."""
ALLOWED_MENTIONS = ("asyncio client",)


def convert(source: str, name: str, used: set[int], rules: Sequence[Rule] = SUBSTITUTIONS) -> str:
    """The threaded twin of asyncio module ``name`` (unformatted), by ``rules``.

    Adds to ``used`` the index in ``rules`` of each rule that matched here at least once.
    """
    text = ASYNC_ONLY.sub("", source)
    for index, (pattern, replacement) in enumerate(rules):
        text, count = re.subn(pattern, replacement, text, flags=re.MULTILINE)
        if count:
            used.add(index)
    leftovers = [
        f"{name}:{number}: {line.strip()}"
        for number, line in enumerate(text.splitlines(), 1)
        if FORBIDDEN.search(line) and not any(ok in line for ok in ALLOWED_MENTIONS)
    ]
    if leftovers:
        raise SystemExit(
            "generate_sync: asyncio-only words left in the threaded twin (move the code to"
            " _primitives, or reword):\n  " + "\n  ".join(leftovers)
        )
    return HEADER.format(name=name) + text


def _ruff(arguments: list[str], text: str, name: str) -> str:
    result = subprocess.run(
        [sys.executable, "-m", "ruff", *arguments, "--stdin-filename", str(TARGET / name), "-"],
        input=text,
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=False,
    )
    if result.returncode not in (0, 1) or not result.stdout:
        raise SystemExit(
            f"generate_sync: ruff {' '.join(arguments)} failed on {name}:\n{result.stderr}"
        )
    return result.stdout


def generate(name: str, used: set[int], rules: Sequence[Rule] = SUBSTITUTIONS) -> str:
    """The formatted threaded twin of asyncio module ``name`` (``used`` as in :func:`convert`)."""
    text = convert((SOURCE / name).read_text(encoding="utf-8"), name, used, rules)
    # Imports: sorted again (redisson_py.sync sorts after redisson_py.core), and the
    # ones only the asyncio side needed (Awaitable, Coroutine) dropped.
    text = _ruff(["check", "--fix", "--quiet", "--select", "I,F401", "--exit-zero"], text, name)
    return _ruff(["format", "--quiet"], text, name)


def unused_rules(rules: Sequence[Rule], used: set[int]) -> list[Rule]:
    """The rules whose index is not in ``used``, in their order."""
    return [rule for index, rule in enumerate(rules) if index not in used]


def main(argv: list[str] | None = None, rules: Sequence[Rule] = SUBSTITUTIONS) -> int:
    """Write (or, with ``--check``, compare) every generated module; 0 when all is well.

    1 when a generated file is stale (``--check``) or left without a source, or when a
    rule of ``rules`` matched nothing in any asyncio module (each is named on stderr).
    """
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="fail if a file is stale")
    args = parser.parse_args(argv)
    names = sorted(p.name for p in SOURCE.glob("*.py") if p.name not in HAND_WRITTEN)
    stale: list[str] = []
    used: set[int] = set()
    for name in names:
        wanted = generate(name, used, rules)
        path = TARGET / name
        current = path.read_text(encoding="utf-8") if path.exists() else ""
        if current == wanted:
            continue
        if args.check:
            stale.append(name)
            sys.stdout.writelines(
                difflib.unified_diff(
                    current.splitlines(keepends=True),
                    wanted.splitlines(keepends=True),
                    f"redisson_py/sync/{name} (committed)",
                    f"redisson_py/sync/{name} (generated)",
                )
            )
        else:
            path.write_text(wanted, encoding="utf-8")
            print(f"wrote redisson_py/sync/{name}")
    generated = set(names)
    orphans = [
        p.name
        for p in TARGET.glob("*.py")
        if p.name not in HAND_WRITTEN
        and p.name not in generated
        and p.read_text(encoding="utf-8").startswith("# GENERATED")
    ]
    if orphans:
        stale.extend(orphans)
        print(f"generated files with no asyncio source: {', '.join(orphans)}")
    if stale:
        print(
            f"generate_sync: {len(stale)} stale file(s) in redisson_py/sync: {', '.join(stale)};"
            " run `python3 scripts/generate_sync.py`",
            file=sys.stderr,
        )
    unused = unused_rules(rules, used)
    if unused:
        print(
            f"generate_sync: {len(unused)} substitution rule(s) matched nothing in"
            " redisson_py/asyncio (delete them from SUBSTITUTIONS, or fix them):\n  "
            + "\n  ".join(f"{pattern!r} -> {replacement!r}" for pattern, replacement in unused),
            file=sys.stderr,
        )
    return 1 if stale or unused else 0


if __name__ == "__main__":
    sys.exit(main())

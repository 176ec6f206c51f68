"""The threaded shell (redisson_py/sync/, generated from redisson_py/asyncio/ by
scripts/generate_sync.py) documents threads: no asyncio word survives the generation in
its docstrings, which the API reference's threads page renders."""

from __future__ import annotations

import ast
import re
from pathlib import Path

SYNC = Path(__file__).resolve().parents[2] / "redisson_py" / "sync"

ASYNC_WORDS = re.compile(
    r"\b(asyncio|async|await(?:s|ed|ing|able)?|coroutines?|event[ -]loops?|tasks?)\b",
    re.IGNORECASE,
)
"""Words of the asyncio side. generate_sync rewrites ``task`` as ``thread`` and drops
``await``; one it does not reach (a capitalised plural, a phrase such as "its event
loop") is a leftover: reword the asyncio source or add a rule to generate_sync.py."""

LEGITIMATE = (
    # both clients compared, in docstrings shared by the two shells
    "a coroutine function on the threaded client, a plain one on the asyncio client",
    "the asyncio client and the threaded one",
    # Redisson's (Java) CountDownLatch.await, named for what it is
    "Redisson's ``await``",
)
"""Phrases that name the asyncio side on purpose; each must still occur somewhere."""


def _generated_docstrings() -> list[tuple[str, str]]:
    found = []
    for path in sorted(SYNC.glob("*.py")):
        source = path.read_text(encoding="utf-8")
        if not source.startswith("# GENERATED"):
            continue  # __init__.py and _primitives.py are written by hand
        for node in ast.walk(ast.parse(source)):
            if (
                isinstance(node, ast.Expr)
                and isinstance(node.value, ast.Constant)
                and isinstance(node.value.value, str)
            ):
                text = " ".join(node.value.value.split())  # phrases wrapped over lines
                found.append((f"{path.name}:{node.lineno}", text))
    return found


def test_the_generated_docstrings_are_found() -> None:
    assert len(_generated_docstrings()) > 100


def test_no_asyncio_word_is_left_in_the_threaded_docstrings() -> None:
    leftovers = []
    for where, docstring in _generated_docstrings():
        text = docstring
        for phrase in LEGITIMATE:
            text = text.replace(phrase, "")
        leftovers += [
            f"{where}: {m.group(0)!r} in ...{_around(text, m)}..."
            for m in ASYNC_WORDS.finditer(text)
        ]
    assert leftovers == [], "asyncio words in the threaded shell's docstrings:\n" + "\n".join(
        leftovers
    )


def test_every_legitimate_phrase_still_occurs() -> None:
    """A phrase no docstring uses any more is dropped from the list, not kept as a hole."""
    texts = " ".join(text for _where, text in _generated_docstrings())
    assert [phrase for phrase in LEGITIMATE if phrase not in texts] == []


def _around(text: str, match: re.Match[str]) -> str:
    return text[max(match.start() - 40, 0) : match.end() + 40]

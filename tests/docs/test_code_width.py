"""The docs site's examples (Python, shell, YAML) fit its code column: a line over 80
characters is cut off at the right edge on a 1280-pixel-wide screen (Material's layout),
so a reader misses the end of a call or its comment unless they scroll. The README is
rendered by GitHub, whose column is wider, and command output may scroll: neither is
checked here."""

from __future__ import annotations

from pathlib import Path

import pytest

DOCS = Path(__file__).resolve().parents[2] / "docs"
WIDTH = 80
CHECKED = ("python", "sh", "yaml")
"""The languages of examples a reader copies; output (a bare fence) may scroll."""


def _long_python_lines(page: Path) -> list[str]:
    long, language = [], None
    for number, line in enumerate(page.read_text().splitlines(), 1):
        if line.startswith("```"):
            language = (line[3:].strip() or "text") if language is None else None
        elif language is not None and language.startswith(CHECKED) and len(line) > WIDTH:
            long.append(f"{page.name}:{number} ({len(line)} characters): {line.strip()}")
    return long


@pytest.mark.parametrize("page", sorted(DOCS.rglob("*.md")), ids=lambda p: p.name)
def test_python_examples_fit_the_code_column(page: Path) -> None:
    assert _long_python_lines(page) == []


def test_a_long_line_is_found(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text("```python\nx = 1\n" + "y = " + "1" * WIDTH + "\n```\n" + "z" * 99)
    assert [line.split(" ")[0] for line in _long_python_lines(page)] == ["page.md:3"]

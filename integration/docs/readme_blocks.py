"""Fenced code blocks of a Markdown file, as the README examples test runs them.

The conventions (the README's editors follow them; ``test_readme_examples`` checks them):

- Every fenced block is one of: ```` ```python ```` (executed), ```` ```yaml ```` (a
  Redisson config is loaded with ``Config.from_yaml``; other YAML must parse),
  ```` ```sh ```` (run by bash with ``-e -o pipefail``), or a bare ```` ``` ```` (output
  shown to the reader, never run). Any other info string is refused, so no block
  escapes the test by its language.
- Blocks are grouped by their ``## `` section (``###`` subsections belong to the section
  above them). The blocks of one section run in order in one Python process, in one
  namespace and one working directory, like a notebook: a block may use names an earlier
  block of its section defined, and a shell block may write a file a later Python block
  reads. Sections never share anything.
- The working directory holds ``config/`` as in the repository, with the files a section
  names (``config/single.yaml``, ``config/sentinel.yaml``, ``config/cluster.yaml``,
  ``config/master-slave.yaml``, ``config/redlock/nodeN.yaml``) made to point at the
  harness topology started for it; the snippets stay as a reader types them. The Quick
  start section is the exception: it must run on what its own commands start.
- asyncio examples are complete programs (``asyncio.run(main())``): no top-level
  ``await``.
- The only way out is an HTML comment on the line before the fence:
  ``<!-- example: skip (why it cannot run here) -->``; the reason is required. Keep skips
  for blocks that cannot run on a test machine (long runs, commands that wait for
  Ctrl-C or a terminal).
- A block that runs only where the machine can do something says so the same way:
  ``<!-- example: needs (partitions) -->`` (one of :data:`CAPABILITIES`). Where the
  capability is there, the block runs like any other; where it is not, the section runs
  without it and the test is reported skipped with the reason. Such a block must not
  define anything a later block uses.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

__all__ = [
    "CAPABILITIES",
    "LANGUAGES",
    "Block",
    "ReadmeError",
    "Section",
    "parse_blocks",
    "read_blocks",
    "sections",
    "slug",
]

LANGUAGES = ("python", "yaml", "sh", "")
"""The info strings a fence may carry; ``""`` is output, never run."""

_FENCE = re.compile(r"^```(?P<info>[^`]*)$")
_DIRECTIVE = re.compile(r"^<!--\s*example:(?P<body>.*?)-->\s*$")
_SKIP = re.compile(r"^\s*skip\s*\((?P<reason>[^()]*\S[^()]*)\)\s*$")
_NEEDS = re.compile(r"^\s*needs\s*\((?P<capability>[^()]*)\)\s*$")

CAPABILITIES = {"partitions": 'topologies with network="namespace" (root, iptables, Redis 7.0+)'}
"""What a ``needs (...)`` block may ask for; the examples test checks each on the machine."""


class ReadmeError(ValueError):
    """The Markdown breaks the conventions above (unclosed fence, unknown language, a
    skip without a reason); the message names the line."""


@dataclass(frozen=True)
class Block:
    """One fenced block. ``line`` is the 1-based line of its first content line."""

    language: str
    text: str
    line: int
    section: str
    skip_reason: str | None = None
    needs: str | None = None
    """A capability of :data:`CAPABILITIES` the block runs only with."""

    @property
    def runnable(self) -> bool:
        return self.language != "" and self.skip_reason is None


@dataclass
class Section:
    """The blocks under one ``## `` heading, in order."""

    title: str
    blocks: list[Block] = field(default_factory=list)

    @property
    def runnable(self) -> list[Block]:
        return [b for b in self.blocks if b.runnable]


def parse_blocks(text: str, *, source: str = "README.md") -> list[Block]:
    """Every fenced block of ``text``, with its section and skip reason.

    Raises :class:`ReadmeError` for an unclosed fence, an unknown info string, or an
    ``example:`` comment that is not ``skip (reason)`` or ``needs (capability)`` or is not
    followed by a fence.
    """
    lines = text.splitlines()
    blocks: list[Block] = []
    section = ""
    # (line of the directive, "skip" or "needs", its reason or capability)
    pending: tuple[int, str, str] | None = None
    index = 0
    while index < len(lines):
        line = lines[index]
        number = index + 1
        fence = _FENCE.match(line)
        if fence:
            language = fence.group("info").strip()
            if language not in LANGUAGES:
                raise ReadmeError(
                    f"{source}:{number}: fenced block in {language!r}; use one of "
                    "python, yaml, sh, or a bare fence for output"
                )
            end = index + 1
            while end < len(lines) and lines[end].rstrip() != "```":
                end += 1
            if end == len(lines):
                raise ReadmeError(f"{source}:{number}: fenced block never closed")
            blocks.append(
                Block(
                    language=language,
                    text="\n".join(lines[index + 1 : end]) + "\n",
                    line=number + 1,
                    section=section,
                    skip_reason=pending[2] if pending and pending[1] == "skip" else None,
                    needs=pending[2] if pending and pending[1] == "needs" else None,
                )
            )
            pending = None
            index = end + 1
            continue
        if line.lstrip().startswith("```"):
            raise ReadmeError(
                f"{source}:{number}: indented fence; the examples test reads fences at the "
                "start of a line only"
            )
        directive = _DIRECTIVE.match(line.strip())
        if directive:
            pending = _directive(directive.group("body"), number, source)
        elif pending and line.strip():
            raise ReadmeError(
                f"{source}:{pending[0]}: an example directive must be on the line "
                "just before a fence"
            )
        if line.startswith("## "):
            section = line[3:].strip()
        index += 1
    if pending:
        raise ReadmeError(f"{source}:{pending[0]}: example directive with no block after it")
    return blocks


def _directive(body: str, number: int, source: str) -> tuple[int, str, str]:
    skip = _SKIP.match(body)
    if skip:
        return (number, "skip", skip.group("reason").strip())
    needs = _NEEDS.match(body)
    if needs and needs.group("capability").strip() in CAPABILITIES:
        return (number, "needs", needs.group("capability").strip())
    if needs:
        raise ReadmeError(
            f"{source}:{number}: needs ({needs.group('capability').strip()}) is not a known "
            f"capability; use one of: {', '.join(CAPABILITIES)}"
        )
    raise ReadmeError(
        f"{source}:{number}: write <!-- example: skip (why it cannot run) --> or "
        f"<!-- example: needs (capability) -->; those are the only directives"
    )


def sections(blocks: list[Block]) -> list[Section]:
    """``blocks`` grouped by section, in the order the sections appear."""
    grouped: dict[str, Section] = {}
    for block in blocks:
        grouped.setdefault(block.section, Section(block.section)).blocks.append(block)
    return list(grouped.values())


def slug(title: str) -> str:
    """A test id for a section title: ``"Deadlines and errors"`` -> ``deadlines-and-errors``."""
    return re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-") or "preamble"


def read_blocks(path: Path) -> list[Block]:
    """:func:`parse_blocks` of the file at ``path``."""
    return parse_blocks(path.read_text(encoding="utf-8"), source=path.name)

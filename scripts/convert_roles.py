#!/usr/bin/env python3
"""Rewrite the Sphinx roles in redisson_py's docstrings as mkdocstrings cross-references.

mkdocstrings renders docstrings as Markdown and does not read Sphinx roles, so
``:class:`~redisson_py.Lock``` would show as raw text on the API pages. Each role in a
docstring of ``redisson_py/**/*.py`` becomes:

- ``[`Lock`][redisson_py.Lock]`` when its target is rendered on the API pages (with ``~``
  the text is the last component, without it the text as written); the identifier is the
  heading's, read from the inventory (``objects.inv``) of a build of the site (a few
  seconds; needs the ``docs`` extra), so it follows mkdocs.yml and docs/api/*.md as they
  are: run it after changing those;
- plain inline code, `` `Lock` ``, when the target is on no API page (internal modules,
  the standard library, a name it cannot resolve, which it reports): autorefs fails the
  strict build on a link without an anchor.

Targets resolve with griffe as Sphinx resolves them: a member of the enclosing class, a
name of the module (its own or imported), a submodule for ``.name``, an absolute path;
then a name an enclosing package exports. A line the rewrite makes longer than 100
characters is re-wrapped, with the rest of its paragraph, at 88; one that cannot be is
reported. Generated files (``# GENERATED``: the threaded shell) are skipped: convert,
then run ``python3 scripts/generate_sync.py``.

Idempotent: a converted docstring has no role left, so a second run changes nothing; run
it again after moving modules or adding roles. ``--check`` writes nothing and exits 1
when a file would change.

    python3 scripts/convert_roles.py && python3 scripts/generate_sync.py
"""

from __future__ import annotations

import argparse
import ast
import builtins
import functools
import importlib.util
import logging
import re
import sys
import tempfile
import textwrap
import zlib
from collections import Counter
from pathlib import Path

import griffe

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = "redisson_py"
LINE_LENGTH = 100
WRAP_WIDTH = 88
"""The width a re-wrapped paragraph gets, as the docstrings are written (ruff allows 100)."""
ROLE = re.compile(r":(?:py:)?(?:meth|class|exc|func|mod|data|attr|obj|const):`([^`]+)`")
"""A Sphinx role; its target may be split over two lines of a docstring."""
CODE_SPAN = re.compile(r"``.+?``|`[^`]+`")
MARKDOWN_START = re.compile(r"(?:[-*+>#:]|\d+[.)])(?:\s|$)")
"""A line starting like this would be a list, a quote, a heading or a field: no wrapped
line may start so."""


def documented_anchors() -> dict[str, str]:
    """Every identifier the API pages register (each rendered object's path, canonical
    path and aliases), mapped to the identifier of its heading."""
    from mkdocs.commands.build import build  # noqa: PLC0415 (docs tooling, only here)
    from mkdocs.config import load_config  # noqa: PLC0415

    logging.getLogger("mkdocs").setLevel(logging.ERROR)
    with tempfile.TemporaryDirectory() as site:
        build(load_config(str(ROOT / "mkdocs.yml"), site_dir=site, strict=False))
        data = (Path(site) / "objects.inv").read_bytes()
    anchors = {}
    for line in zlib.decompress(data.split(b"\n", 4)[4]).decode().splitlines():
        name, domain, _priority, uri, _title = line.split(" ", 4)
        if domain.startswith("py:"):
            fragment = uri.partition("#")[2]
            anchors[name] = name if fragment == "$" else fragment
    return anchors


def _lookup(
    collection: griffe.ModulesCollection, path: str
) -> griffe.Object | griffe.Alias | str | None:
    """The object at ``path``; "external" for a name imported from outside the package."""
    try:
        found: griffe.Object | griffe.Alias = collection[path]
    except (KeyError, ValueError, griffe.AliasResolutionError, griffe.CyclicAliasError):
        return None
    try:
        found.canonical_path  # noqa: B018 (raises when an alias cannot resolve)
    except (griffe.AliasResolutionError, griffe.CyclicAliasError):
        return (
            "external"
            if isinstance(found, griffe.Alias) and not found.target_path.startswith(f"{PACKAGE}.")
            else None
        )
    return found


def _importable(name: str) -> bool:
    """Whether ``name`` is a builtin, or a module of the standard library or a dependency."""
    if hasattr(builtins, name) or name in sys.stdlib_module_names:
        return True
    spec = importlib.util.find_spec(name)
    return spec is not None and spec.origin is not None


class Converter:
    """The rewrite of one tree, with its counts and reports."""

    def __init__(self, *, write: bool = True) -> None:
        self.write = write
        self.anchors = documented_anchors()
        package = griffe.load(
            PACKAGE, search_paths=[ROOT], resolve_aliases=True, resolve_external=False
        )
        self.collection = package.modules_collection
        self.counts: Counter[str] = Counter()
        self.reports: list[str] = []

    def resolve(self, target: str, module: str, scopes: list[str]) -> tuple[str, str]:
        """What ``target``, written in ``scopes`` (innermost class first) of ``module``,
        is: ("link", the identifier its API page renders), ("internal", "") when it is on
        no API page, ("external", "") for the standard library or a dependency, or
        ("unresolved", "")."""
        name = target.lstrip(".")
        packages = [module.rsplit(".", depth)[0] for depth in range(1, module.count(".") + 1)]
        paths = [f"{scope}.{name}" for scope in scopes]
        paths.append(f"{module}.{name}")
        if target.startswith("."):
            paths.append(f"{packages[0]}.{name}")
        paths.append(name)
        head = name.partition(".")[0]
        if head != PACKAGE and _importable(head):
            paths = paths[:-1]  # asyncio.Lock is the standard library's, not ours
        else:
            # not Sphinx's rule, but what the author meant: a name an enclosing package
            # exports (``ConfigError`` in redisson_py.config.decode: redisson_py.config's)
            paths += [f"{package}.{name}" for package in packages]
        for path in paths:
            found = _lookup(self.collection, path)
            if found == "external":
                return "external", ""
            if isinstance(found, griffe.Object | griffe.Alias):
                for key in (found.path, found.canonical_path, *found.aliases):
                    if key in self.anchors:
                        return "link", self.anchors[key]
                return "internal", ""
        return ("external", "") if head != PACKAGE and _importable(head) else ("unresolved", "")

    def rewrite(self, match: re.Match[str], where: str, module: str, scopes: list[str]) -> str:
        """The Markdown for one role."""
        target = re.sub(r"\s+", "", match.group(1))
        # as Sphinx shows it: ~ keeps the last component, a leading dot is dropped
        text = target.lstrip(".~")
        text = text.rpartition(".")[2] if target.startswith("~") else text
        kind, anchor = self.resolve(target.lstrip("~"), module, scopes)
        self.counts[kind] += 1
        if kind == "unresolved":
            self.reports.append(f"{where}: unresolved {match.group(0)!r}, now plain code")
        return f"[`{text}`][{anchor}]" if anchor else f"`{text}`"

    def convert_file(self, path: Path) -> bool:
        """Rewrite the docstrings of ``path``; True when it changed."""
        source = path.read_text(encoding="utf-8")
        relative = path.relative_to(ROOT)
        module = ".".join(relative.with_suffix("").parts).removesuffix(".__init__")
        starts = [0]
        for line in source.splitlines(keepends=True):
            starts.append(starts[-1] + len(line))
        edits: list[tuple[int, int, str]] = []
        for node, scopes in _docstrings(ast.parse(source), module):
            begin = starts[node.lineno - 1] + node.col_offset
            end = starts[node.end_lineno - 1] + node.end_col_offset  # type: ignore[operator]
            where = f"{relative}:{node.lineno}"
            rewrite = functools.partial(self.rewrite, where=where, module=module, scopes=scopes)
            text = ROLE.sub(rewrite, source[begin:end])
            if text != source[begin:end]:
                indent = source[starts[node.lineno - 1] : begin]
                text = self.wrap(indent + text, f"{relative}:", node.lineno)[len(indent) :]
                edits.append((begin, end, text))
        for begin, end, text in reversed(edits):
            source = source[:begin] + text + source[end:]
        if edits and self.write:
            path.write_text(source, encoding="utf-8")
        self.counts["files"] += bool(edits)
        return bool(edits)

    def wrap(self, text: str, where: str, first: int) -> str:
        """``text`` (a docstring from the start of its first line) with each line longer
        than the limit re-wrapped with the rest of its paragraph."""
        lines = text.split("\n")
        base = len(lines[0]) - len(lines[0].lstrip())
        index = 0
        while index < len(lines):
            line = lines[index]
            if len(line) <= LINE_LENGTH:
                index += 1
                continue
            wrapped, end = _wrap_paragraph(lines, index, base)
            if wrapped is None:
                self.counts["too long"] += 1
                self.reports.append(f"{where}{first + index}: too long, not wrapped")
                index += 1
                continue
            self.counts["wrapped"] += 1
            lines[index:end] = wrapped
            for number, new in enumerate(wrapped, first + index):
                if len(new) > LINE_LENGTH:
                    self.counts["too long"] += 1
                    self.reports.append(f"{where}{number}: too long after wrapping")
            index += len(wrapped)
        return "\n".join(lines)


def _docstrings(tree: ast.Module, module: str) -> list[tuple[ast.Constant, list[str]]]:
    """Every string statement (module, class, function and attribute docstrings) with
    the paths of its enclosing classes, innermost first."""
    found: list[tuple[ast.Constant, list[str]]] = []

    def visit(body: list[ast.stmt], scopes: list[str], in_function: bool) -> None:
        for statement in body:
            if (
                isinstance(statement, ast.Expr)
                and isinstance(statement.value, ast.Constant)
                and isinstance(statement.value.value, str)
            ):
                found.append((statement.value, scopes))
            elif isinstance(statement, ast.ClassDef):
                inner = [f"{(scopes or [module])[0]}.{statement.name}", *scopes]
                # griffe knows no class made inside a function
                visit(statement.body, scopes if in_function else inner, in_function)
            elif isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef):
                visit(statement.body, scopes, in_function=True)
            else:
                for field in ("body", "orelse", "finalbody"):
                    visit(getattr(statement, field, []), scopes, in_function)
                for handler in getattr(statement, "handlers", []):
                    visit(handler.body, scopes, in_function)

    visit(tree.body, [], in_function=False)
    return found


def _wrap_paragraph(lines: list[str], index: int, base: int) -> tuple[list[str] | None, int]:
    """Lines ``index``.. to the end of their paragraph, wrapped; None when the line is in
    a literal block or no wrapping fits."""
    line = lines[index]
    indent = len(line) - len(line.lstrip())
    quote = re.match(r'\s*[rRbBuU]?("""|\'\'\')', line) if index == 0 else None
    prefix = quote.group(0) if quote else line[:indent]
    previous = next((lines[i] for i in range(index - 1, -1, -1) if lines[i].strip()), "")
    if indent > base and previous.rstrip().endswith("::"):
        return None, index + 1
    marker = re.match(r"(?:[-*+]|\d+[.)])\s+", line[len(prefix) :])
    continuation = " " * (indent if not quote else base)
    if marker:
        continuation = " " * (len(prefix) + marker.end())
    end = index + 1
    while end < len(lines):
        following = lines[end]
        if (
            not following.strip()
            or following[: len(continuation)] != continuation
            or following[len(continuation) : len(continuation) + 1].isspace()
            or MARKDOWN_START.match(following.lstrip())
            or following.lstrip().startswith(('"""', "'''"))
        ):
            break
        end += 1
    words = " ".join([line[len(prefix) :].strip()] + [ln.strip() for ln in lines[index + 1 : end]])
    # a code span stays on one line (generate_sync rewrites ``await x`` as one piece)
    words = CODE_SPAN.sub(lambda span: span.group(0).replace(" ", "\0"), words)
    for width in range(WRAP_WIDTH, WRAP_WIDTH - 15, -1):
        wrapped = textwrap.wrap(
            words,
            width=width,
            initial_indent=prefix,
            subsequent_indent=continuation,
            break_long_words=False,
            break_on_hyphens=False,
        )
        if not any(MARKDOWN_START.match(w.lstrip()) for w in wrapped[1:]):
            return [w.replace("\0", " ") for w in wrapped], end
    return None, index + 1


def main(argv: list[str] | None = None) -> int:
    """Convert every docstring of the package, then print the reports and counts."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if a role is left")
    args = parser.parse_args(argv)
    converter = Converter(write=not args.check)
    for path in sorted((ROOT / PACKAGE).rglob("*.py")):
        if not path.read_text(encoding="utf-8").startswith("# GENERATED"):
            converter.convert_file(path)
    for report in converter.reports:
        print(report)
    counts = converter.counts
    print(
        f"convert_roles: {counts['link']} links, {counts['internal']} plain code (on no API"
        f" page), {counts['external']} plain code (standard library, dependencies),"
        f" {counts['unresolved']} unresolved (plain code), in {counts['files']} files;"
        f" {counts['wrapped']} paragraphs re-wrapped, {counts['too long']} lines too long"
    )
    if args.check:
        return 1 if counts["files"] else 0
    if counts["files"]:
        print("now run: python3 scripts/generate_sync.py")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Every fenced block of README.md and of the docs site (docs/**/*.md) runs, so no
example can rot.

The conventions the README follows are in ``readme_blocks`` (its docstring): blocks run
per ``## `` section, in order, in one namespace, like a notebook; ``config/`` files a
section names point at a harness topology started for it; ``<!-- example: skip (why)
-->`` is the only way out, and ``<!-- example: needs (capability) -->`` runs a block only
where this machine has the capability (the test is reported skipped, with the reason,
where it does not). Each section runs in a fresh Python process (the runner,
``readme_runner.py``) in a temporary working directory, so one section's clients,
threads and files never reach another, and a reader's exact command line is what runs.

A failure prints the runner's output: the README line of the block that failed and its
traceback, with the README's own lines.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from readme_blocks import (
    CAPABILITIES,
    Block,
    ReadmeError,
    Section,
    parse_blocks,
    read_blocks,
    sections,
    slug,
)

from redisson_py import Config
from redisson_py.testing import Topology
from redisson_py.testing.topologies.paths import run_root

REPO = Path(__file__).resolve().parents[2]
README = REPO / "README.md"
DOCS = sorted((REPO / "docs").rglob("*.md"))
MARKDOWN = [README, *DOCS]
RUNNER = Path(__file__).with_name("readme_runner.py")

SECTION_TIMEOUT = 180.0
"""Seconds one section may take; the whole README runs in well under a minute."""

CONFIG_TOPOLOGIES = {
    "config/single.yaml": "single",
    "config/master-slave.yaml": "master_replica",
    "config/sentinel.yaml": "sentinel",
    "config/cluster.yaml": "cluster",
    "config/redlock/": "redlock",
}
"""A config path a snippet names -> the harness topology it is made to point at."""

SELF_CONTAINED = {("README.md", "Quick start"), ("docs/index.md", "Quick start")}
"""Sections whose snippets must run on what their own commands start (the README's
promise: the first snippet runs right after the commands before it): no harness
topology is started for them and config/ stays as shipped."""

REDLOCK_MEMBERS = 3
"""config/redlock/ has node1..node3.yaml, whose ports come from REDLOCK_NODEn_PORT."""

# Variables a snippet's config reads, or that would point the CLI elsewhere: never
# inherited from the environment the tests run in.
_SCRUBBED = ("REDIS_PORT", "REDIS_PASSWORD", "REDISSON_PY_CONFIG", "REDISSON_PY_TOPOLOGIES")


def missing_capability(capability: str) -> str | None:
    """Why this machine lacks ``capability`` (one of ``CAPABILITIES``), or None."""
    if capability == "partitions":
        from redisson_py.testing.network import partition_support  # noqa: PLC0415

        return partition_support()
    raise AssertionError(f"no check for capability {capability!r}")


def _sections() -> list[tuple[Path, Section]]:
    found: list[tuple[Path, Section]] = []
    for markdown in MARKDOWN:
        # A broken file is reported by test_markdown_follows_the_conventions.
        with contextlib.suppress(ReadmeError):
            found += [(markdown, s) for s in sections(read_blocks(markdown)) if s.runnable]
    return found


def _relative(markdown: Path) -> str:
    return markdown.relative_to(REPO).as_posix()


def _ports(topology: Topology) -> list[int]:
    """The first seed port of each of the topology's client configs (one per master for
    redlock)."""
    return [
        config.server_config.seed_addresses()[0].port
        for config in Config.from_yaml_all(topology.redisson_yaml(), env={})
    ]


def _prepare(
    markdown: Path,
    section: Section,
    workdir: Path,
    env: dict[str, str],
    request: pytest.FixtureRequest,
) -> list[str]:
    """Copy config/ into ``workdir`` and point the files the section names at started
    topologies; returns what was pointed where, for the failure message."""
    shutil.copytree(REPO / "config", workdir / "config")
    if (_relative(markdown), section.title) in SELF_CONTAINED:
        return []
    text = "".join(block.text for block in section.runnable)
    pointed: list[str] = []
    for name, kind in CONFIG_TOPOLOGIES.items():
        if name not in text:
            continue
        topology: Topology = request.getfixturevalue(f"{kind}_topology")
        ports = _ports(topology)
        if kind == "single":
            # The shipped file reads its port from the environment: run it unchanged.
            env["REDIS_PORT"] = str(ports[0])
        elif kind == "redlock":
            for index, port in enumerate(ports[:REDLOCK_MEMBERS], start=1):
                env[f"REDLOCK_NODE{index}_PORT"] = str(port)
        else:
            (workdir / name).write_text(topology.redisson_yaml(), encoding="utf-8")
        pointed.append(f"{name} -> {topology.kind} {ports}")
    return pointed


def _environment(run_dir: Path, backend: str) -> dict[str, str]:
    env = {
        key: value
        for key, value in os.environ.items()
        if key not in _SCRUBBED and not key.startswith("REDLOCK_NODE")
    }
    scripts = str(Path(sys.executable).parent)
    env["PATH"] = os.pathsep.join([scripts, env.get("PATH", "")])
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))
    env["PYTHONUNBUFFERED"] = "1"
    # A private run directory: `topology down --all` in a snippet (or in the cleanup
    # below) sees only the topologies this test's snippets started.
    env["REDISSON_PY_RUN_DIR"] = str(run_dir)
    run_dir.mkdir(mode=0o700, exist_ok=True)
    # The harness caches there whether a registry answers; reuse the answer rather than
    # ask again from the fresh directory.
    cached = run_root() / "registry-check.json"
    if cached.is_file():
        shutil.copyfile(cached, run_dir / cached.name)
    env["REDISSON_PY_REDIS_BACKEND"] = backend
    return env


def _stop_detached(env: dict[str, str], run_dir: Path) -> None:
    """Stop what a snippet left detached (one that failed before its `topology down`)."""
    topologies = run_dir / "topologies"
    if not topologies.is_dir() or not any(topologies.iterdir()):
        return
    subprocess.run(
        [sys.executable, "-m", "redisson_py.cli", "topology", "down", "--all"],
        env=env,
        capture_output=True,
        timeout=120,
        check=False,
    )


@pytest.mark.parametrize(
    ("markdown", "section"),
    _sections(),
    ids=[f"{_relative(m)}::{slug(s.title)}" for m, s in _sections()],
)
def test_section_runs(
    markdown: Path,
    section: Section,
    request: pytest.FixtureRequest,
    tmp_path: Path,
    redis_backend: str,
) -> None:
    left_out = {
        block.line: f"{_relative(markdown)}:{block.line} needs {block.needs}: {reason}"
        for block in section.runnable
        if block.needs is not None and (reason := missing_capability(block.needs)) is not None
    }
    running = [b for b in section.runnable if b.line not in left_out]
    if not running:
        pytest.skip("; ".join(left_out.values()))
    workdir = tmp_path / "work"
    workdir.mkdir()
    run_dir = tmp_path / "run"
    env = _environment(run_dir, redis_backend)
    pointed = _prepare(markdown, section, workdir, env, request)
    blocks = tmp_path / "blocks.json"
    blocks.write_text(
        json.dumps([{"language": b.language, "text": b.text, "line": b.line} for b in running]),
        encoding="utf-8",
    )
    try:
        result = subprocess.run(
            [sys.executable, str(RUNNER), str(blocks), str(markdown)],
            cwd=workdir,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            timeout=SECTION_TIMEOUT,
            check=False,
        )
    finally:
        _stop_detached(env, run_dir)
    if result.returncode != 0:
        pytest.fail(
            f"{_relative(markdown)} section {section.title!r} failed"
            f" (configs: {pointed or 'none'}):\n"
            f"{result.stdout}",
            pytrace=False,
        )
    print(result.stdout)  # shown with -rP: which blocks ran, and how long each took
    if left_out:
        # The rest of the section passed; the blocks left out are what the report shows.
        pytest.skip(f"ran {len(running)} blocks, left out " + "; ".join(left_out.values()))


@pytest.mark.parametrize("markdown", MARKDOWN, ids=_relative)
def test_markdown_follows_the_conventions(markdown: Path) -> None:
    """Fences are closed and in a known language, skips give a reason, Python compiles
    as a module (no top-level ``await``), and the README still has examples to run."""
    blocks = read_blocks(markdown)
    python = [b for b in blocks if b.language == "python"]
    for block in python:
        compile("\n" * (block.line - 1) + block.text, str(markdown), "exec")
    runnable = [b for b in blocks if b.runnable]
    skipped = [b for b in blocks if b.language and b.skip_reason]
    if markdown == README:
        assert len(python) >= 3  # the first lock, with a wait and a lease, with asyncio
    # Skips are for what cannot run on a test machine; keep them rare.
    assert len(skipped) * 3 <= len(runnable), [f"{b.line}: {b.skip_reason}" for b in skipped]


def _parse(text: str) -> list[Block]:
    return parse_blocks(text, source="T.md")


def test_sections_share_blocks_in_order_and_skips_need_a_reason() -> None:
    blocks = _parse(
        "## One\n```python\na = 1\n```\n### Sub\n<!-- example: skip (waits for Ctrl-C) -->\n"
        "```sh\nsleep 1000\n```\n```\noutput\n```\n## Two\n```yaml\nk: v\n```\n"
    )
    assert [(b.language, b.section, b.line, b.runnable) for b in blocks] == [
        ("python", "One", 3, True),
        ("sh", "One", 8, False),
        ("", "One", 11, False),
        ("yaml", "Two", 15, True),
    ]
    assert blocks[1].skip_reason == "waits for Ctrl-C"
    assert [s.title for s in sections(blocks)] == ["One", "Two"]


def test_a_block_may_need_a_capability() -> None:
    (block,) = _parse("## One\n<!-- example: needs (partitions) -->\n```python\na = 1\n```\n")
    assert block.needs == "partitions" and block.skip_reason is None and block.runnable
    assert set(CAPABILITIES) == {"partitions"}
    assert missing_capability("partitions") is None or "partitions" in str(
        missing_capability("partitions")
    )


@pytest.mark.parametrize(
    ("text", "complaint"),
    [
        ("<!-- example: skip -->\n```sh\nx\n```\n", "skip (why it cannot run)"),
        ("<!-- example: skip () -->\n```sh\nx\n```\n", "skip (why it cannot run)"),
        ("<!-- example: skip (why) -->\ntext\n```sh\nx\n```\n", "just before a fence"),
        ("<!-- example: needs (docker) -->\n```sh\nx\n```\n", "not a known capability"),
        ("```bash\nx\n```\n", "'bash'"),
        ("```python\nx\n", "never closed"),
        ("- item\n  ```python\n  x\n  ```\n", "indented fence"),
    ],
    ids=[
        "no-reason",
        "empty-reason",
        "not-before-fence",
        "unknown-need",
        "bash",
        "unclosed",
        "indented",
    ],
)
def test_convention_breaks_are_refused(text: str, complaint: str) -> None:
    with pytest.raises(ReadmeError) as caught:
        _parse(text)
    assert complaint in str(caught.value)


README_MAX_LINES = 300
"""The README is the front door (issue 41): what it is, the two commands, a first lock,
the tables, the headlines; everything else is a page of the docs site."""


def _nav_pages() -> list[str]:
    import yaml  # noqa: PLC0415 (only here)

    def walk(items: object) -> list[str]:
        found: list[str] = []
        if isinstance(items, list):
            for item in items:
                found += walk(item)
        elif isinstance(items, dict):
            for value in items.values():
                found += walk(value)
        elif isinstance(items, str) and items.endswith(".md"):
            found.append(items)
        return found

    mkdocs = yaml.safe_load((REPO / "mkdocs.yml").read_text(encoding="utf-8"))
    return walk(mkdocs["nav"])


def test_the_readme_is_a_front_door_to_every_page() -> None:
    """At most about 300 lines, and one click from it to every page of the site's
    navigation but the API reference (reached from its first page and the nav)."""
    text = README.read_text(encoding="utf-8")
    assert text.count("\n") <= README_MAX_LINES
    pages = [p for p in _nav_pages() if not p.startswith("api/") or p == "api/sync.md"]
    unlinked = [p for p in pages if f"](docs/{p}" not in text]
    assert unlinked == []
    on_disk = {p.relative_to(REPO / "docs").as_posix() for p in DOCS}
    assert set(_nav_pages()) == on_disk, "every page is in mkdocs.yml's nav"

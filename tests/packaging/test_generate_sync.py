"""scripts/generate_sync.py fails on a substitution rule that matches nothing.

The generator runs into a temporary directory here, never into redisson_py/sync/: a
generated tree made with the same rules is what ``--check`` compares against, so only the
rule under test can make a run fail.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "generate_sync.py"
BOGUS = (r"\bno_asyncio_module_says_this\b", "nor_this")


@pytest.fixture(scope="module")
def generator() -> ModuleType:
    # The generator formats its output with ruff, a dev tool: the test environments of
    # the matrix (redis-py versions) install the test extra only.
    pytest.importorskip("ruff", reason="the generator formats with ruff (the dev extra)")
    spec = importlib.util.spec_from_file_location("generate_sync_under_test", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def generated(generator: ModuleType, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A threaded shell written by the real rules into a directory of its own."""
    target = tmp_path_factory.mktemp("sync")
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(generator, "TARGET", target)
        assert generator.main([]) == 0, "a rule matches nothing: see the message above"
    yield target


def test_every_rule_matches_some_asyncio_module(generator: ModuleType) -> None:
    used: set[int] = set()
    for path in sorted(generator.SOURCE.glob("*.py")):
        if path.name not in generator.HAND_WRITTEN:
            generator.convert(path.read_text(encoding="utf-8"), path.name, used)
    assert generator.unused_rules(generator.SUBSTITUTIONS, used) == []


@pytest.mark.parametrize("mode", [[], ["--check"]], ids=["write", "check"])
def test_an_unused_rule_fails_the_run_and_is_named(
    generator: ModuleType,
    generated: Path,
    mode: list[str],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setattr(generator, "TARGET", generated)
    before = {path.name: path.read_text(encoding="utf-8") for path in generated.glob("*.py")}

    assert generator.main(mode, rules=[*generator.SUBSTITUTIONS, BOGUS]) == 1

    out, err = capsys.readouterr()
    assert "1 substitution rule(s) matched nothing" in err
    assert f"{BOGUS[0]!r} -> {BOGUS[1]!r}" in err
    # Nothing else failed: the rule changed no output, so no file was stale or rewritten.
    assert "stale" not in err and "wrote" not in out
    assert {p.name: p.read_text(encoding="utf-8") for p in generated.glob("*.py")} == before

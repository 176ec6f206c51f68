"""Installs beyond editable mode work: a built wheel, or the source directory, installed
into a fresh virtual environment, imports, finds the topology specs it carries, and runs
its command.

Offline: the wheel is built without build isolation (hatchling comes with the ``test``
extra) and installed with ``--no-index`` into a venv that sees this environment's
site-packages, where redis-py and PyYAML already are. Takes a few seconds.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SPECS = {"single", "master-replica", "sentinel", "cluster", "redlock"}

# What the installed package must do, run by the venv's interpreter outside the checkout.
_PROBE = """
import json, sys
import redisson_py, redisson_py.asyncio, redisson_py.testing
from redisson_py.asyncio import Config, Redisson
from redisson_py.testing.topologies.spec import known_topologies, load_spec, topologies_dir
spec = load_spec("sentinel")
print(json.dumps({
    "module": redisson_py.__file__,
    "version": redisson_py.__version__,
    "specs_dir": str(topologies_dir()),
    "specs": known_topologies(),
    "sentinel": [spec.masters, spec.replicas_per_master, spec.sentinels],
}))
"""


def _run(command: list[str], cwd: Path, env: dict[str, str] | None = None) -> str:
    result = subprocess.run(
        command, cwd=cwd, env=env, capture_output=True, text=True, timeout=120, check=False
    )
    assert result.returncode == 0, f"{command}: {result.returncode}\n{result.stdout}{result.stderr}"
    return result.stdout


@pytest.mark.parametrize("source", ["wheel", "directory"])
def test_install_into_a_fresh_venv_imports_and_runs(tmp_path: Path, source: str) -> None:
    """``pip install`` of a wheel built with ``pip wheel --no-deps -w DIR .`` or of the
    source directory (``pip install .``) gives a working package, not a link to the
    checkout."""
    pytest.importorskip("hatchling", reason="hatchling (the test extra) builds the wheel offline")
    venv = tmp_path / "venv"
    _run(
        [sys.executable, "-m", "venv", "--system-site-packages", "--without-pip", str(venv)],
        cwd=tmp_path,
    )
    python = venv / "bin" / "python"
    # Run from a virtualenv (a nox session), --system-site-packages shows the base
    # interpreter's packages, not this environment's: point the new venv at these too
    # (plain paths, so no editable-install hook in them runs and links the checkout).
    outer = {sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]}
    (site_packages,) = (venv / "lib").glob("python*/site-packages")
    (site_packages / "_outer_environment.pth").write_text("".join(f"{p}\n" for p in outer))
    if source == "wheel":
        dist = tmp_path / "dist"
        _run(
            [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation",
             "--no-index", "-q", "-w", str(dist), str(REPO)],
            cwd=tmp_path,
        )  # fmt: skip
        wheels = list(dist.glob("redisson_py-*.whl"))
        assert len(wheels) == 1, wheels
        target = str(wheels[0])
    else:
        target = str(REPO)
    # With its dependencies (no --no-deps): they must resolve from what is installed.
    _run(
        [sys.executable, "-m", "pip", "--python", str(python), "install", "--no-index",
         "--no-build-isolation", "-q", target],
        cwd=tmp_path,
    )  # fmt: skip

    # Outside the checkout, with nothing pointing back at it.
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "REDISSON_PY_"))}
    env["PATH"] = os.pathsep.join([str(venv / "bin"), env.get("PATH", "")])
    found = json.loads(_run([str(python), "-I", "-c", _PROBE], cwd=tmp_path, env=env))
    site = venv.resolve()
    assert Path(found["module"]).resolve().is_relative_to(site), found
    assert Path(found["specs_dir"]).resolve().is_relative_to(site), found
    assert Path(found["specs_dir"]).parts[-2:] == ("topologies", "specs")
    assert set(found["specs"]) >= SPECS
    assert found["sentinel"] == [1, 2, 3]

    help_text = _run([str(venv / "bin" / "redisson-py"), "--help"], cwd=tmp_path, env=env)
    assert "topology" in help_text
    assert "redisson-py" in help_text

"""docs/yaml-reference.md is generated from the config schema and must be up to date:
a key added to the schema without regenerating the page fails here."""

from __future__ import annotations

import runpy
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "gen_yaml_reference.py"


def test_the_yaml_reference_lists_every_key_of_the_schema() -> None:
    generator = runpy.run_path(str(SCRIPT))
    assert generator["main"](["--check"]) == 0, "run python3 scripts/gen_yaml_reference.py"
    page = generator["PAGE"].read_text(encoding="utf-8")
    for _title, cls in generator["SECTIONS"]:
        for spec in generator["specs"](cls):
            assert f"| `{spec.key}`" in page, spec.key

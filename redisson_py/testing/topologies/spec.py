"""Declarative topology specs: ``topologies/*.yaml``, loaded and validated.

A spec says what a topology is made of (how many masters, replicas per master,
sentinels), how it is wired (its *layout*), and the settings the harness writes into each
node's config file. It says nothing about ports, directories or backends: those are
chosen when the topology is started.

Layouts:

``standalone``
    ``masters`` independent servers that know nothing of each other (``single`` has
    one, ``redlock`` five).
``replication``
    one master and ``replicas_per_master`` replicas, no automatic failover. Its client
    config is ``masterSlaveServersConfig`` (the master named), or with ``client:
    replicated`` Redisson's ``replicatedServersConfig`` (every node listed, the master
    found by its role: what managed Redis services offer).
``sentinel``
    one master, its replicas, and ``sentinels`` Sentinel processes watching it.
``cluster``
    a Redis Cluster of ``masters`` shards, each with ``replicas_per_master`` replicas,
    the 16384 slots split evenly between the shards.

Validation reports every problem at once, one sentence per problem, each naming the file
and the field, and raises `SpecError` (a [`TopologyError`][redisson_py.testing.TopologyError]).
"""

from __future__ import annotations

import difflib
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from redisson_py.testing.errors import TopologyError
from redisson_py.testing.topologies.security import Security

__all__ = [
    "LAYOUTS",
    "ClusterSettings",
    "SentinelSettings",
    "SpecError",
    "TopologySpec",
    "known_topologies",
    "load_spec",
    "parse_spec",
    "topologies_dir",
]

LAYOUTS = ("standalone", "replication", "sentinel", "cluster")

# Directives the harness writes itself: a spec that set them would break the wiring
# (ports, addresses, directories, cluster mode) the harness relies on.
RESERVED_DIRECTIVES = frozenset(
    {
        "port",
        "bind",
        "dir",
        "daemonize",
        "logfile",
        "pidfile",
        "include",
        "replicaof",
        "slaveof",
        "replica-announce-ip",
        "slave-announce-ip",
        "cluster-enabled",
        "cluster-config-file",
        "cluster-announce-ip",
        "cluster-port",
        "cluster-node-timeout",
        "cluster-replica-validity-factor",
        "sentinel",
    }
)

_TOP_LEVEL_FIELDS = (
    "name",
    "description",
    "layout",
    "masters",
    "replicas_per_master",
    "sentinels",
    "sentinel",
    "cluster",
    "redis_conf",
    "sentinel_conf",
    "security",
    "client",
)
CLIENTS = {"replication": ("master_slave", "replicated")}
"""The client configs a layout may ask for with ``client`` (the first is the default);
the other layouts have one each."""
# Fields that may be changed when a topology is started (see ``load_spec``).
OVERRIDABLE_FIELDS = (
    "masters",
    "replicas_per_master",
    "sentinels",
    "sentinel",
    "cluster",
    "redis_conf",
    "sentinel_conf",
    "security",
)
_SENTINEL_FIELDS = (
    "master_name",
    "quorum",
    "down_after_ms",
    "failover_timeout_ms",
    "parallel_syncs",
)
_CLUSTER_FIELDS = ("node_timeout_ms", "replica_validity_factor")


class SpecError(TopologyError):
    """A topology spec, or an override given at start time, is malformed.

    ``problems`` holds one sentence per problem; the message is those sentences, one
    per line.
    """

    def __init__(self, problems: list[str]):
        super().__init__("\n".join(problems))
        self.problems = list(problems)


@dataclass(frozen=True)
class SentinelSettings:
    """How the sentinels watch the master (all durations in milliseconds)."""

    master_name: str
    quorum: int
    down_after_ms: int
    failover_timeout_ms: int
    parallel_syncs: int


@dataclass(frozen=True)
class ClusterSettings:
    """Cluster-wide settings (durations in milliseconds)."""

    node_timeout_ms: int
    replica_validity_factor: int


@dataclass(frozen=True)
class TopologySpec:
    """A validated topology spec.

    ``redis_conf`` holds extra directives for every data node (rendered as
    ``directive value``); ``sentinel_conf`` extra directives for every sentinel.
    ``source`` names where the spec came from, for messages.
    """

    name: str
    layout: str
    masters: int
    replicas_per_master: int
    sentinels: int
    description: str = ""
    sentinel: SentinelSettings | None = None
    cluster: ClusterSettings | None = None
    redis_conf: Mapping[str, str] = field(default_factory=dict)
    sentinel_conf: Mapping[str, str] = field(default_factory=dict)
    security: Security = field(default_factory=Security)
    """Password, ACL user, TLS (see `redisson_py.testing.topologies.security`)."""
    client: str = ""
    """Which Redisson section the client config uses, when the layout offers a choice
    (`CLIENTS`); "" for the layout's only one."""
    source: str = "<memory>"

    @property
    def data_node_count(self) -> int:
        """How many redis-server data nodes (masters and replicas) the topology has."""
        return self.masters * (1 + self.replicas_per_master)

    @property
    def node_count(self) -> int:
        """How many nodes the topology has, sentinels included."""
        return self.data_node_count + self.sentinels


def topologies_dir() -> Path:
    """The directory the named specs are read from.

    ``REDISSON_PY_TOPOLOGIES`` if set; else the copy a wheel carries inside the package;
    else ``topologies/`` at the root of the source checkout.
    """
    override = os.environ.get("REDISSON_PY_TOPOLOGIES")
    if override:
        return Path(override)
    packaged = Path(__file__).resolve().parent / "specs"
    if packaged.is_dir():
        return packaged
    return Path(__file__).resolve().parents[3] / "topologies"


def known_topologies(directory: Path | None = None) -> list[str]:
    """The names of the specs in ``directory`` (default: `topologies_dir`), sorted."""
    directory = directory or topologies_dir()
    if not directory.is_dir():
        return []
    return sorted(p.stem for p in directory.glob("*.yaml"))


def load_spec(
    name_or_path: str | os.PathLike[str],
    overrides: Mapping[str, Any] | None = None,
    *,
    directory: Path | None = None,
) -> TopologySpec:
    """Load a spec by name (``"sentinel"``) or by path, apply ``overrides``, validate.

    Overrides replace top-level fields; for the mapping fields (``sentinel``,
    ``cluster``, ``redis_conf``, ``sentinel_conf``) they are merged key by key, so
    ``load_spec("sentinel", {"replicas_per_master": 1, "sentinel": {"quorum": 1}})``
    keeps the other sentinel settings. ``name`` and ``layout`` cannot be overridden.

    Raises `SpecError` for an unknown name, an unreadable file, malformed YAML,
    or any invalid field, with one sentence per problem.
    """
    path = _resolve(name_or_path, directory)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise SpecError([f"cannot read topology spec {path}: {exc.strerror or exc}."]) from None
    try:
        raw = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        where = ""
        mark = getattr(exc, "problem_mark", None)
        if mark is not None:
            where = f" at line {mark.line + 1}"
        raise SpecError(
            [f"topology spec {path} is not valid YAML{where}; fix its syntax."]
        ) from None
    if not isinstance(raw, dict):
        raise SpecError(
            [f"topology spec {path} must be a YAML mapping of fields, not {_kind(raw)}."]
        )
    data: dict[str, Any] = dict(raw)
    if overrides:
        data = apply_overrides(data, overrides, f"{path.stem} ({path})")
    spec = parse_spec(data, source=str(path))
    if spec.name != path.stem:
        raise SpecError(
            [
                f"field 'name' in {path} is {spec.name!r} but the file is named "
                f"{path.name}; make them the same."
            ]
        )
    return spec


def apply_overrides(
    data: Mapping[str, Any], overrides: Mapping[str, Any], what: str
) -> dict[str, Any]:
    """Return ``data`` with ``overrides`` applied (see `load_spec`).

    Raises `SpecError` naming each unknown or non-overridable override.
    """
    problems: list[str] = []
    merged = dict(data)
    for key, value in overrides.items():
        if key not in OVERRIDABLE_FIELDS:
            hint = _did_you_mean(key, OVERRIDABLE_FIELDS)
            problems.append(
                f"unknown override {key!r} for topology {what}{hint}; "
                f"overridable fields are: {', '.join(OVERRIDABLE_FIELDS)}."
            )
            continue
        current = merged.get(key)
        if isinstance(value, Mapping) and isinstance(current, Mapping):
            merged[key] = {**current, **value}
        else:
            merged[key] = value
    if problems:
        raise SpecError(problems)
    return merged


def parse_spec(data: Mapping[str, Any], *, source: str = "<memory>") -> TopologySpec:
    """Validate a spec given as a mapping and build a `TopologySpec`.

    ``source`` is the file name used in messages. Raises `SpecError`.
    """
    problems: list[str] = []
    where = f"in {source}"

    for key in data:
        if key not in _TOP_LEVEL_FIELDS:
            problems.append(
                f"unknown field {key!r} {where}{_did_you_mean(str(key), _TOP_LEVEL_FIELDS)}; "
                f"known fields are: {', '.join(_TOP_LEVEL_FIELDS)}."
            )

    name = _string(data, "name", where, problems, required=True)
    description = _string(data, "description", where, problems, required=False) or ""
    layout = _string(data, "layout", where, problems, required=True)
    if layout is not None and layout not in LAYOUTS:
        problems.append(
            f"field 'layout' {where} is {layout!r}{_did_you_mean(layout, LAYOUTS)}; "
            f"it must be one of: {', '.join(LAYOUTS)}."
        )
        layout = None

    masters = _integer(data, "masters", where, problems, required=True, minimum=1)
    needs_replicas = layout in ("replication", "sentinel", "cluster")
    replicas = _integer(
        data, "replicas_per_master", where, problems, required=needs_replicas, minimum=0
    )
    sentinels = _integer(
        data, "sentinels", where, problems, required=layout == "sentinel", minimum=0
    )
    # A count that is missing or invalid has been reported; the layout rules below only
    # judge counts that were given correctly (or may be omitted).
    counts_known = (replicas is not None or not needs_replicas) and (
        sentinels is not None or layout != "sentinel"
    )
    replicas = replicas or 0
    sentinels = sentinels or 0

    sentinel_settings: SentinelSettings | None = None
    cluster_settings: ClusterSettings | None = None
    if layout == "sentinel":
        sentinel_settings = _sentinel_settings(data, where, problems, sentinels)
    elif "sentinel" in data:
        problems.append(f"field 'sentinel' {where} is only allowed with layout 'sentinel'.")
    if layout == "cluster":
        cluster_settings = _cluster_settings(data, where, problems)
    elif "cluster" in data:
        problems.append(f"field 'cluster' {where} is only allowed with layout 'cluster'.")

    redis_conf = _directives(data, "redis_conf", where, problems)
    sentinel_conf = _directives(data, "sentinel_conf", where, problems)
    if sentinel_conf and layout != "sentinel":
        problems.append(f"field 'sentinel_conf' {where} is only allowed with layout 'sentinel'.")

    security = _security(data, where, problems)
    client = _string(data, "client", where, problems, required=False) or ""
    choices = CLIENTS.get(layout or "", ())
    if client and client not in choices:
        allowed = (
            f"it must be one of: {', '.join(choices)}"
            if choices
            else f"layout {layout!r} has only one client config; leave it out"
        )
        problems.append(f"field 'client' {where} is {client!r}; {allowed}.")
    elif not client and choices:
        client = choices[0]

    if layout is not None and masters is not None and counts_known:
        _check_layout(
            layout,
            masters=masters,
            replicas=replicas,
            sentinels=sentinels,
            where=where,
            problems=problems,
        )

    if problems:
        raise SpecError(problems)
    assert name is not None and layout is not None and masters is not None
    return TopologySpec(
        name=name,
        description=description,
        layout=layout,
        masters=masters,
        replicas_per_master=replicas,
        sentinels=sentinels,
        sentinel=sentinel_settings,
        cluster=cluster_settings,
        redis_conf=redis_conf,
        sentinel_conf=sentinel_conf,
        security=security,
        client=client,
        source=source,
    )


# -- helpers -----------------------------------------------------------------------------


_SECURITY_FIELDS = ("auth", "acl", "tls")


def _security(data: Mapping[str, Any], where: str, problems: list[str]) -> Security:
    raw = data.get("security")
    if raw is None:
        return Security()
    if not isinstance(raw, Mapping):
        problems.append(f"field 'security' {where} must be a mapping of {_SECURITY_FIELDS}.")
        return Security()
    values: dict[str, bool] = {}
    for key, value in raw.items():
        if key not in _SECURITY_FIELDS:
            problems.append(
                f"unknown field 'security.{key}' {where}"
                f"{_did_you_mean(str(key), _SECURITY_FIELDS)};"
                f" known: {', '.join(_SECURITY_FIELDS)}."
            )
        elif not isinstance(value, bool):
            problems.append(f"field 'security.{key}' {where} must be true or false.")
        else:
            values[key] = value
    security = Security(**values)
    if security.auth and security.acl:
        problems.append(
            f"fields 'security.auth' and 'security.acl' {where} exclude each other: one is"
            " requirepass for the default user, the other switches the default user off."
        )
    return security


def _resolve(name_or_path: str | os.PathLike[str], directory: Path | None) -> Path:
    text = os.fspath(name_or_path)
    if text.endswith((".yaml", ".yml")) or os.sep in text:
        path = Path(text)
        if not path.is_file():
            raise SpecError([f"topology spec file {path} does not exist; check the path."])
        return path
    directory = directory or topologies_dir()
    path = directory / f"{text}.yaml"
    if path.is_file():
        return path
    known = known_topologies(directory)
    if not known:
        raise SpecError(
            [
                f"unknown topology {text!r}: no specs found in {directory}; "
                "set REDISSON_PY_TOPOLOGIES to the directory holding the *.yaml specs."
            ]
        )
    raise SpecError(
        [
            f"unknown topology {text!r}{_did_you_mean(text, known)}; "
            f"known topologies are: {', '.join(known)}."
        ]
    )


def _did_you_mean(word: str, choices: tuple[str, ...] | list[str]) -> str:
    close = difflib.get_close_matches(word, list(choices), n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else ""


_KIND_WORDS: tuple[tuple[type, str], ...] = (
    (type(None), "an empty document"),
    (bool, "a boolean"),  # before int: a bool is an int
    (int, "an integer"),
    (str, "a string"),
    (list, "a list"),
    (dict, "a mapping"),
)


def _kind(value: object) -> str:
    """What ``value`` is, in a problem's words."""
    return next((words for t, words in _KIND_WORDS if isinstance(value, t)), type(value).__name__)


def _string(
    data: Mapping[str, Any],
    key: str,
    where: str,
    problems: list[str],
    *,
    required: bool,
    label: str | None = None,
) -> str | None:
    label = label or key
    if key not in data:
        if required:
            problems.append(f"missing field {label!r} {where}; add it.")
        return None
    value = data[key]
    if not isinstance(value, str) or not value.strip():
        problems.append(f"field {label!r} {where} must be a non-empty string, not {_kind(value)}.")
        return None
    return value.strip()


def _integer(
    data: Mapping[str, Any],
    key: str,
    where: str,
    problems: list[str],
    *,
    required: bool,
    minimum: int,
    label: str | None = None,
) -> int | None:
    label = label or key
    if key not in data:
        if required:
            problems.append(f"missing field {label!r} {where}; add it.")
        return None
    value = data[key]
    # bool is an int in Python; `masters: yes` is a mistake, not 1.
    if isinstance(value, bool) or not isinstance(value, int):
        problems.append(
            f"field {label!r} {where} must be an integer, not {_kind(value)} ({value!r})."
        )
        return None
    if value < minimum:
        problems.append(f"field {label!r} {where} must be at least {minimum}, not {value}.")
        return None
    return value


def _section(
    data: Mapping[str, Any], key: str, fields: tuple[str, ...], where: str, problems: list[str]
) -> Mapping[str, Any] | None:
    if key not in data:
        problems.append(f"missing field {key!r} {where}; add it with: {', '.join(fields)}.")
        return None
    section = data[key]
    if not isinstance(section, Mapping):
        problems.append(f"field {key!r} {where} must be a mapping, not {_kind(section)}.")
        return None
    for sub in section:
        if sub not in fields:
            problems.append(
                f"unknown field '{key}.{sub}' {where}{_did_you_mean(str(sub), fields)}; "
                f"known fields are: {', '.join(fields)}."
            )
    return section


def _sentinel_settings(
    data: Mapping[str, Any], where: str, problems: list[str], sentinels: int
) -> SentinelSettings | None:
    section = _section(data, "sentinel", _SENTINEL_FIELDS, where, problems)
    if section is None:
        return None
    before = len(problems)
    master_name = _string(
        section, "master_name", where, problems, required=True, label="sentinel.master_name"
    )
    values: dict[str, int | None] = {}
    for sub, minimum in (
        ("quorum", 1),
        ("down_after_ms", 1),
        ("failover_timeout_ms", 1),
        ("parallel_syncs", 1),
    ):
        values[sub] = _integer(
            section, sub, where, problems, required=True, minimum=minimum, label=f"sentinel.{sub}"
        )
    quorum = values["quorum"]
    if quorum is not None and sentinels and quorum > sentinels:
        problems.append(
            f"field 'sentinel.quorum' {where} is {quorum} but there are only {sentinels} "
            "sentinels; lower the quorum or add sentinels."
        )
    if len(problems) != before:
        return None
    assert master_name is not None
    return SentinelSettings(
        master_name=master_name,
        quorum=int(values["quorum"] or 0),
        down_after_ms=int(values["down_after_ms"] or 0),
        failover_timeout_ms=int(values["failover_timeout_ms"] or 0),
        parallel_syncs=int(values["parallel_syncs"] or 0),
    )


def _cluster_settings(
    data: Mapping[str, Any], where: str, problems: list[str]
) -> ClusterSettings | None:
    section = _section(data, "cluster", _CLUSTER_FIELDS, where, problems)
    if section is None:
        return None
    before = len(problems)
    timeout = _integer(
        section,
        "node_timeout_ms",
        where,
        problems,
        required=True,
        minimum=100,
        label="cluster.node_timeout_ms",
    )
    factor = _integer(
        section,
        "replica_validity_factor",
        where,
        problems,
        required=True,
        minimum=0,
        label="cluster.replica_validity_factor",
    )
    if len(problems) != before or timeout is None or factor is None:
        return None
    return ClusterSettings(node_timeout_ms=timeout, replica_validity_factor=factor)


def _directives(
    data: Mapping[str, Any], key: str, where: str, problems: list[str]
) -> dict[str, str]:
    if key not in data:
        return {}
    section = data[key]
    if section is None:
        return {}
    if not isinstance(section, Mapping):
        problems.append(
            f"field {key!r} {where} must be a mapping of directive to value, not {_kind(section)}."
        )
        return {}
    out: dict[str, str] = {}
    for directive, value in section.items():
        name = str(directive).strip().lower()
        if name in RESERVED_DIRECTIVES:
            problems.append(
                f"field '{key}.{directive}' {where} sets a directive the harness controls; "
                "remove it."
            )
            continue
        if value is None:
            problems.append(
                f"field '{key}.{directive}' {where} has no value; write \"\" for an empty one."
            )
            continue
        if isinstance(value, bool):
            # YAML 1.1 reads `appendonly: no` as False; Redis wants the word.
            out[name] = "yes" if value else "no"
        elif isinstance(value, int | float | str):
            out[name] = str(value)
        else:
            problems.append(
                f"field '{key}.{directive}' {where} must be a string or a number, "
                f"not {_kind(value)}."
            )
    return out


def _check_layout(
    layout: str, *, masters: int, replicas: int, sentinels: int, where: str, problems: list[str]
) -> None:
    if layout == "standalone":
        if replicas:
            problems.append(
                f"field 'replicas_per_master' {where} must be 0 with layout 'standalone' "
                "(use layout 'replication' for replicas)."
            )
    elif layout in ("replication", "sentinel"):
        if masters != 1:
            problems.append(f"field 'masters' {where} must be 1 with layout {layout!r}.")
        if layout == "replication" and replicas < 1:
            problems.append(
                f"field 'replicas_per_master' {where} must be at least 1 with layout 'replication'."
            )
    elif layout == "cluster" and masters > 16384:
        problems.append(f"field 'masters' {where} must be at most 16384 (one slot each).")
    if layout == "sentinel":
        if sentinels < 1:
            problems.append(f"field 'sentinels' {where} must be at least 1 with layout 'sentinel'.")
    elif sentinels:
        problems.append(f"field 'sentinels' {where} must be 0 unless the layout is 'sentinel'.")

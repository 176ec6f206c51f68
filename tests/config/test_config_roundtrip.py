"""Property: any valid config survives to_yaml -> from_yaml and to_dict -> from_dict."""

from __future__ import annotations

import warnings
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from redisson_py.config import (
    ClusterServersConfig,
    Config,
    ConfigNotice,
    ConstantDelay,
    DecorrelatedJitterDelay,
    EqualJitterDelay,
    FullJitterDelay,
    HostNatMapper,
    HostPortNatMapper,
    MasterSlaveServersConfig,
    ReplicatedServersConfig,
    Secret,
    SentinelServersConfig,
    SingleServerConfig,
)
from redisson_py.config.kinds import (
    AddressKind,
    AddressList,
    Bool,
    EnumKind,
    FileKind,
    Int,
    Kind,
    Millis,
    SecretKind,
    SectionKind,
    Str,
)
from redisson_py.config.kinds.tagged import DelayKind, NatKind
from redisson_py.config.schema import specs

_ms = st.integers(0, 10**7).map(lambda ms: ms / 1000)
_positive_ms = st.integers(1, 10**7).map(lambda ms: ms / 1000)
_text = st.text(st.characters(blacklist_categories=("Cs",)), max_size=30)
_host = st.sampled_from(["127.0.0.1", "localhost", "::1", "redis-0.example"])
_address = st.builds(
    lambda scheme, host, port: f"{scheme}://{'[' + host + ']' if ':' in host else host}:{port}",
    st.sampled_from(["redis", "rediss"]),
    _host,
    st.integers(1, 65535),
)
_endpoint = st.builds(
    lambda h, p: f"{h}:{p}", st.sampled_from(["node-1", "127.0.0.1"]), st.integers(1, 65535)
)
_delay = st.one_of(
    st.builds(ConstantDelay, _ms),
    *(
        st.builds(cls, _ms, _ms)
        for cls in (EqualJitterDelay, FullJitterDelay, DecorrelatedJitterDelay)
    ),
)
_nat = st.one_of(
    st.none(),
    st.builds(HostPortNatMapper, st.dictionaries(_endpoint, _endpoint, max_size=3)),
    st.builds(HostNatMapper, st.dictionaries(_host, _host, max_size=3)),
)
_path = st.from_regex(r"/?[a-z0-9 %._-]{1,12}(/[a-z0-9 %._-]{1,12}){0,2}", fullmatch=True)


def _strategy(kind: Kind) -> st.SearchStrategy[Any]:
    if isinstance(kind, Millis):
        # Within the range and the plausible span (a slip would warn); 0 where allowed.
        low = round(max(kind.minimum, kind.plausible[0]) * 1000)
        base = st.integers(low, 10**7).map(lambda ms: ms / 1000)
        if not kind.minimum:
            base = st.one_of(st.just(0.0), base)
        return st.one_of(st.none(), base) if kind.minus_one_is_none else base
    if isinstance(kind, Int):
        high = kind.minimum + 500
        return st.integers(kind.minimum, high if kind.maximum is None else min(high, kind.maximum))
    if isinstance(kind, Bool):
        return st.booleans()
    if isinstance(kind, Str):
        return _text.filter(bool) if kind.required else st.one_of(st.none(), _text)
    if isinstance(kind, SecretKind):
        return st.one_of(st.none(), _text.map(Secret))
    if isinstance(kind, EnumKind):
        return st.sampled_from(list(kind.enum))
    if isinstance(kind, AddressKind):
        return _address
    if isinstance(kind, AddressList):
        return st.lists(_address, min_size=1 if kind.non_empty else 0, max_size=4)
    if isinstance(kind, FileKind):
        return st.one_of(st.none(), _path)
    if isinstance(kind, DelayKind):
        return _delay
    if isinstance(kind, NatKind):
        return _nat
    raise AssertionError(kind)


def _settings(cls: type[Any]) -> st.SearchStrategy[dict[str, Any]]:
    return st.fixed_dictionaries(
        {s.attr: _strategy(s.kind) for s in specs(cls) if not isinstance(s.kind, SectionKind)}
    )


_SECTIONS = [
    SingleServerConfig,
    MasterSlaveServersConfig,
    SentinelServersConfig,
    ClusterServersConfig,
    ReplicatedServersConfig,
]


@st.composite
def configs(draw: st.DrawFn) -> Config:
    config = Config(**draw(_settings(Config)))
    cls = draw(st.sampled_from(_SECTIONS))
    section = cls(**draw(_settings(cls)))
    # Satisfy the cross-setting rules so the config is valid.
    for name in vars(section):
        if name.endswith("_minimum_idle_size"):
            size = name.replace("_minimum_idle_size", "_pool_size")
            setattr(section, name, min(getattr(section, name), getattr(section, size)))
    if isinstance(section, ClusterServersConfig):
        section.database = 0
    if section.ssl_private_key and not section.ssl_keystore:
        section.ssl_keystore = "/client.pem"
    if config.ssl_private_key and not (config.ssl_keystore or section.ssl_keystore):
        config.ssl_keystore = "/client.pem"
    setattr(
        config,
        {
            SingleServerConfig: "single_server_config",
            MasterSlaveServersConfig: "master_slave_servers_config",
            SentinelServersConfig: "sentinel_servers_config",
            ClusterServersConfig: "cluster_servers_config",
            ReplicatedServersConfig: "replicated_servers_config",
        }[cls],
        section,
    )
    config.validate()
    return config


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(configs())
def test_yaml_round_trip(config: Config) -> None:
    notices: list[ConfigNotice] = []
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # notices are collected, never warned
        assert Config.from_yaml(config.to_yaml(), env={}, notices=notices) == config
        assert (
            Config.from_yaml(config.to_yaml(include_defaults=False), env={}, notices=notices)
            == config
        )
    # Our own output never holds ignored or removed keys; only settings without effect
    # here that the config sets away from their default.
    assert all(n.message.startswith("has no effect in redisson-py") for n in notices)


@settings(max_examples=100, suppress_health_check=[HealthCheck.too_slow])
@given(configs())
def test_dict_round_trip(config: Config) -> None:
    assert Config.from_dict(config.to_dict()) == config


def test_dollar_brace_survives_the_round_trip() -> None:
    config = Config()
    config.use_single_server(address="redis://h:1", password="a${B}c$${d}", client_name="${X}")
    text = config.to_yaml()
    assert Config.from_yaml(text, env={}) == config

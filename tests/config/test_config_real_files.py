"""The YAML files users really have (issue 38, items 5, 6 and 8).

Keys Redisson removed are accepted with a warning naming the Redisson version; typos are
still refused. A ``nameMapper`` is refused. Settings that change nothing here warn when a
file sets them away from their default, once each, with file and line. Key stores that
Python cannot read, pool sizes past redisson-py's own limit, Spring's ``${VAR:default}``
and YAML syntax errors are each named where they are, with why.
"""

from __future__ import annotations

import re
import warnings
from pathlib import Path
from typing import Any

import pytest

from redisson_py.config import (
    ClusterServersConfig,
    Config,
    ConfigNotice,
    ConfigWarning,
    MasterSlaveServersConfig,
    SentinelServersConfig,
    SingleServerConfig,
    TaggedValue,
)
from redisson_py.config.schema import Settings, by_attr, specs
from redisson_py.errors import ConfigError

ROOT = Path(__file__).resolve().parents[2]
SINGLE = "singleServerConfig:\n  address: redis://127.0.0.1:6379\n"


def _notices(text: str) -> list[ConfigNotice]:
    notices: list[ConfigNotice] = []
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # collected notices are never warned
        Config.from_yaml(text, env={}, notices=notices)
    return notices


def _refused(text: str) -> ConfigError:
    with pytest.raises(ConfigError) as info:
        Config.from_yaml(text, env={})
    return info.value


# -- item 5: keys Redisson removed ----------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "key", "version"),
    [
        (SINGLE + "  pingTimeout: 1000\n", "singleServerConfig.pingTimeout", "3.12.4"),
        (
            SINGLE + "  reconnectionTimeout: 3000\n",
            "singleServerConfig.reconnectionTimeout",
            "3.12.4",
        ),
        (SINGLE + "  failedAttempts: 3\n", "singleServerConfig.failedAttempts", "3.12.4"),
        (SINGLE + "  dnsMonitoring: true\n", "singleServerConfig.dnsMonitoring", "3.7.0"),
        (
            SINGLE + "  slaveSubscriptionConnectionPoolSize: 50\n",
            "singleServerConfig.slaveSubscriptionConnectionPoolSize",
            "3.12.4",
        ),
        ("useLinuxNativeEpoll: true\n" + SINGLE, "useLinuxNativeEpoll", "3.10.0"),
        ("decodeInExecutor: true\n" + SINGLE, "decodeInExecutor", "3.14.0"),
        ("redissonReferenceEnabled: true\n" + SINGLE, "redissonReferenceEnabled", "3.5.7"),
        (
            "clusterServersConfig:\n  nodeAddresses: [redis://127.0.0.1:7000]\n"
            "  pingTimeout: 1000\n",
            "clusterServersConfig.pingTimeout",
            "3.12.4",
        ),
    ],
)
def test_keys_redisson_removed_are_accepted_with_the_version(
    text: str, key: str, version: str
) -> None:
    [notice] = _notices(text)
    assert notice.key == key
    name = key.rsplit(".", maxsplit=1)[-1]
    assert notice.line == next(i for i, line in enumerate(text.splitlines(), 1) if name in line)
    assert f"removed in Redisson {version}" in notice.message
    assert "Redisson 4.x ignores it" in notice.message


def test_typos_are_still_refused_and_never_pointed_at_a_key_already_there() -> None:
    error = _refused(SINGLE + "  timeout: 3000\n  timout: 5000\n")
    assert error.path == "singleServerConfig.timout" and error.line == 4
    assert "unknown key" in str(error) and "did you mean" not in str(error)
    error = _refused(SINGLE + "  timout: 5000\n")
    assert "did you mean 'timeout'?" in str(error)


def test_registration_key_is_ignored_with_a_warning() -> None:
    [notice] = _notices("registrationKey: ABCD-1234\n" + SINGLE)
    assert (notice.key, notice.line) == ("registrationKey", 1)
    assert "Redisson PRO" in notice.message
    assert "ABCD" not in notice.message


def test_a_top_level_key_inside_a_section_says_where_it_belongs() -> None:
    for key in ("threads: 16", "codec: !<org.redisson.codec.Kryo5Codec> {}"):
        error = _refused(SINGLE + f"  {key}\n")
        assert error.line == 3
        assert "it belongs at the top level" in str(error)


# -- item 5: what Python cannot read, and redisson-py's own limits -------------------------


@pytest.mark.parametrize("key", ["sslKeystore", "sslTruststore"])
@pytest.mark.parametrize("name", ["client.p12", "client.PFX", "truststore.jks"])
def test_pkcs12_and_jks_key_stores_are_named_at_check_time(key: str, name: str) -> None:
    tls = f"singleServerConfig:\n  address: rediss://127.0.0.1:6379\n  {key}: file:/etc/{name}\n"
    error = _refused(tls)
    assert error.path == f"singleServerConfig.{key}" and error.line == 3
    assert "PEM files only" in str(error)
    # Without rediss:// the file is never opened: a warning, not a refusal.
    [notice] = _notices(tls.replace("rediss://", "redis://"))
    assert notice.key == f"singleServerConfig.{key}" and "PEM files only" in notice.message
    assert not _notices(tls.replace(name, "client.pem"))


def test_pool_sizes_past_our_limit_say_it_is_ours_and_why() -> None:
    error = _refused(SINGLE + "  connectionPoolSize: 20000\n")
    assert error.path == "singleServerConfig.connectionPoolSize" and error.line == 3
    assert "redisson-py's own limit, not Redisson's" in str(error)
    assert "reserves a slot per connection" in str(error)


def test_pool_settings_read_by_nothing_take_what_redisson_takes() -> None:
    # Redisson takes a single server's subscription pool of 0 (pub/sub off) and any size
    # of a pool redisson-py does not open: accepted, with the "no effect" note.
    notices = _notices(SINGLE + "  subscriptionConnectionPoolSize: 0\n")
    assert [n.key for n in notices] == ["singleServerConfig.subscriptionConnectionPoolSize"]
    text = (
        "masterSlaveServersConfig:\n  masterAddress: redis://127.0.0.1:6379\n"
        "  slaveConnectionPoolSize: 20000\n"
    )
    assert [n.line for n in _notices(text)] == [3]
    section = Config.from_yaml(text, env={}, notices=[]).server_config
    assert isinstance(section, MasterSlaveServersConfig)
    assert section.slave_connection_pool_size == 20000


# -- item 5: where a syntax error is, and Spring's default syntax ---------------------------


@pytest.mark.parametrize(
    ("text", "line"),
    [
        ('singleServerConfig:\n  address: "redis://h:1\n  timeout: 3000\n', 2),
        ("singleServerConfig:\n  address: redis://h:1\n  timeout 3000\n  database: 0\n", 3),
        ("singleServerConfig:\n  address: [redis://h:1\n  timeout: 3000\n", 2),
        ("singleServerConfig:\n  address: redis://h:1\n timeout: 3000\n", 3),
    ],
)
def test_syntax_errors_name_the_bad_line(text: str, line: int) -> None:
    error = _refused(text)
    assert error.line == line
    assert str(error).startswith(f"<string>, line {line}: invalid YAML")


def test_spring_default_syntax_gets_redissons_spelling() -> None:
    error = _refused("singleServerConfig:\n  address: ${REDIS_URL:redis://127.0.0.1:6379}\n")
    assert error.path == "singleServerConfig.address" and error.line == 2
    assert "${REDIS_URL:-default}" in str(error) and "Spring" in str(error)
    literal = "singleServerConfig:\n  address: redis://h:1\n  clientName: $${A:b}\n"
    assert Config.from_yaml(literal, env={}).server_config.client_name == "${A:b}"


# -- item 6: nameMapper ----------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "nameMapper: !<com.example.PrefixNameMapper> {prefix: app1}\n" + SINGLE,
        SINGLE + "  nameMapper: !<com.example.PrefixNameMapper> {}\n",
        "nameMapper: prefix\n" + SINGLE,
    ],
)
def test_a_name_mapper_is_refused(text: str) -> None:
    error = _refused(text)
    assert error.path is not None and error.path.endswith("nameMapper")
    assert "lock different keys" in str(error)


def test_redissons_identity_name_mapper_is_accepted() -> None:
    for value in ("!<org.redisson.api.DefaultNameMapper> {}", "null"):
        assert not _notices(f"nameMapper: {value}\n" + SINGLE)


# -- item 8: settings without effect here ---------------------------------------------------

_SECTIONS: list[tuple[type[Any], str]] = [
    (SingleServerConfig, SINGLE),
    (
        MasterSlaveServersConfig,
        "masterSlaveServersConfig:\n  masterAddress: redis://127.0.0.1:6379\n",
    ),
    (
        SentinelServersConfig,
        "sentinelServersConfig:\n  masterName: m\n  sentinelAddresses: [redis://127.0.0.1:26379]\n",
    ),
    (ClusterServersConfig, "clusterServersConfig:\n  nodeAddresses: [redis://127.0.0.1:7000]\n"),
]
_OTHER_VALUE = {
    "idle_connection_timeout": "20000",
    "reconnection_delay": "!<org.redisson.config.ConstantDelay> {delay: PT1S}",
    "subscriptions_per_connection": "10",
    "subscription_connection_pool_size": "25",
    "subscription_connection_minimum_idle_size": "2",
    "connection_minimum_idle_size": "10",
    "slave_connection_minimum_idle_size": "10",
    "master_connection_minimum_idle_size": "10",
    "slave_connection_pool_size": "32",
    "read_mode": "MASTER",
    "check_slave_status_with_syncing": "false",
    "check_master_link_status": "true",
}
_NO_EFFECT_CASES = [(cls, base, attr) for cls, base in _SECTIONS for attr in sorted(cls.NO_EFFECT)]


def test_the_keys_the_issue_names_are_all_marked() -> None:
    marked = set().union(*(cls.NO_EFFECT for cls, _ in _SECTIONS))
    assert marked == set(_OTHER_VALUE)


@pytest.mark.parametrize(
    ("cls", "base", "attr"),
    _NO_EFFECT_CASES,
    ids=[f"{cls.__name__}.{attr}" for cls, _, attr in _NO_EFFECT_CASES],
)
def test_a_setting_without_effect_warns_once_with_its_line(
    cls: type[Any], base: str, attr: str
) -> None:
    key = by_attr(cls)[attr].key
    text = base + f"  {key}: {_OTHER_VALUE[attr]}\n"
    [notice] = _notices(text)
    assert notice.key == f"{base.split(':', maxsplit=1)[0]}.{key}"
    assert notice.line == text.count("\n")
    assert notice.message.startswith("has no effect in redisson-py: ")
    assert notice.message.removeprefix("has no effect in redisson-py: ") == cls.NO_EFFECT[attr]
    # The default written out (as Redisson's own dumps do), or the key absent: no word.
    default = by_attr(cls)[attr].kind.encode(by_attr(cls)[attr].default)
    assert not _notices(base + f"  {key}: {_yaml(default)}\n")
    assert not _notices(base)


def _yaml(value: object) -> str:
    """A default as a YAML value (the one tagged default is written by the encoder)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, TaggedValue):
        fields = ", ".join(f"{k}: {v}" for k, v in value.value.items())  # type: ignore[attr-defined]
        return f"!<{value.tag}> {{{fields}}}"
    return str(value)


def test_defaults_written_out_draw_no_warning() -> None:
    for _, base in _SECTIONS:
        config = Config.from_yaml(base, env={})
        assert not _notices(config.to_yaml())  # every key, at its default


def test_from_yaml_warns_once_per_file_naming_every_key() -> None:
    text = SINGLE + "  idleConnectionTimeout: 20000\n  pingTimeout: 1000\nthreads: 4\n"
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        Config.from_yaml(text, env={})
    assert [w.category for w in caught] == [ConfigWarning]
    message = str(caught[0].message)
    for where in (
        "singleServerConfig.idleConnectionTimeout (line 3): has no effect",
        "singleServerConfig.pingTimeout (line 4): removed in Redisson 3.12.4",
        "threads (line 5): ignored",
    ):
        assert where in message
    assert caught[0].filename == __file__


# -- the reference describes as working only what something reads ---------------------------

# Read under another name, or documented in place as doing nothing.
_READ_ELSEWHERE = {"tcp_no_delay"}


def test_every_setting_not_marked_is_read_by_something() -> None:
    package = ROOT / "redisson_py"
    declared = {package / "config" / "sections.py", package / "config" / "validate.py"}
    text = "\n".join(
        path.read_text(encoding="utf-8")
        for path in package.rglob("*.py")
        if path not in declared and "kinds" not in path.parts
    )
    unread = []
    classes: list[type[Settings]] = [Config, *(cls for cls, _ in _SECTIONS)]
    for cls in classes:
        for spec in specs(cls):
            if spec.attr in cls.NO_EFFECT or spec.attr in _READ_ELSEWHERE:
                continue
            if not re.search(rf"\.{spec.attr}\b|[\"']{spec.attr}[\"']", text):
                unread.append(f"{cls.__name__}.{spec.attr}")
    assert not unread, f"documented as working, read by nothing: {unread}"


def test_the_reference_says_no_effect_for_each_marked_key() -> None:
    page = (ROOT / "docs" / "yaml-reference.md").read_text(encoding="utf-8")
    for cls, _ in _SECTIONS:
        for attr in cls.NO_EFFECT:
            key = by_attr(cls)[attr].key
            rows = [line for line in page.splitlines() if line.startswith(f"| `{key}` ")]
            assert rows and all("**No effect in redisson-py**" in row for row in rows), key

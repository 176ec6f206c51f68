"""YAML fuzzing: whatever the document, loading ends in a Config or a ConfigError.

Documents are built from Redisson's real keys and from the shapes that used to escape as
other exceptions or leak secrets (issue 15): merge keys (self-referencing too), deep
nesting, odd Unicode digits, explicit tags (``!!int``, ``!!bool``, ``!!binary``,
``!!python/...``, Java class tags), ``${VAR}`` substitution, huge and non-finite numbers,
bytes input. Every error must be a :class:`ConfigError`, and never show the secret that
rides in password fields, URL credentials and ``${SECRET}``. CI loads 1,100 generated
inputs (~6 s on the 2-core CI box) plus the regression examples below;
``REDISSON_PY_FUZZ_LONG=1`` loads ten times as many (docs/testing.md).
"""

from __future__ import annotations

import os
import warnings

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from redisson_py.config import Config
from redisson_py.config.schema import specs
from redisson_py.config.sections import SingleServerConfig
from redisson_py.errors import ConfigError

LONG = os.environ.get("REDISSON_PY_FUZZ_LONG") == "1"


def examples(count: int) -> int:
    """``count`` generated examples in CI, ten times as many in the long profile."""
    return count * 10 if LONG else count


SECRET = "pw-Xy7q"
ENV = {"HOST": "127.0.0.1", "PORT": "6379", "SECRET": SECRET, "EMPTY": "", "BIG": "9" * 30}

_KEYS = sorted({spec.key for spec in specs(Config)} | {s.key for s in specs(SingleServerConfig)})
_KEYS += ["<<", "retryInterval", "natMap", "threads", "codec", "bogusKey", "password"]
_SECRET_KEYS = ["password", "username", "sslKeystorePassword", "sslTruststorePassword"]
_SECTIONS = [
    "singleServerConfig",
    "clusterServersConfig",
    "sentinelServersConfig",
    "masterSlaveServersConfig",
]
_DIGITS = ["\u00b9", "\u0663", "\uff11", "\u2167", "\u0967", "1_000", "0x1F", "0o17", "1e400"]
_TAGS = [
    "!!int", "!!bool", "!!float", "!!str", "!!binary", "!!null", "!!timestamp", "!!set",
    "!!omap", "!!python/object:os.system", "!!python/name:os.system", "!!python/tuple",
    "!<org.redisson.config.ConstantDelay>", "!<org.redisson.codec.Kryo5Codec>", "!custom", "!",
]  # fmt: skip
_SCALARS = [
    "redis://127.0.0.1:6379", f"redis://default:{SECRET}@h:6379", f"rediss://:{SECRET}@h:1",
    "plain-value", "${HOST}", "${SECRET}", "${UNSET}", "${UNSET:-3000}", "${EMPTY:-x}", "$${x}",
    "redis://${HOST}:${PORT}", "${BIG}", "-1", "0", "1e13", "-.inf", ".nan", "1e-9", "3000",
    "PT1S", "PT10000000000000H", "P1Y", "true", "~", "''", '"\\ud800"', "[]", "{}", "yes",
    "0.0001", "99999999999999999999999999", "file:///tmp/x", "MASTER", "RESP3",
]  # fmt: skip


@st.composite
def _scalar(draw: st.DrawFn) -> str:
    text = draw(st.sampled_from(_SCALARS) | st.sampled_from(_DIGITS) | st.text(max_size=8))
    if draw(st.booleans()):
        text = f"{draw(st.sampled_from(_TAGS))} {text}"
    return text


def _value(depth: int) -> st.SearchStrategy[str]:
    if depth <= 0:
        return _scalar()
    inner = _value(depth - 1)
    return st.one_of(
        _scalar(),
        st.lists(inner, max_size=3).map(lambda items: "[" + ", ".join(items) + "]"),
        st.lists(st.tuples(st.sampled_from(_KEYS), inner), max_size=3).map(
            lambda pairs: "{" + ", ".join(f"{k}: {v}" for k, v in pairs) + "}"
        ),
        st.sampled_from(["&a {<<: *a}", "&b [*b]", "{<<: [{a: 1}, {b: 2}]}", "*nowhere"]),
        st.integers(1, 300).map(lambda n: "[" * n + "]" * n),
        st.just("[" * 5000),
    )


_SECTION_KEY = st.sampled_from([*_KEYS, "address", "nodeAddresses"])
_VALUE = _value(2)  # built once: building strategies per draw costs more than loading


@st.composite
def documents(draw: st.DrawFn) -> str:
    lines = []
    if draw(st.booleans()):
        lines.append("defaults: &defaults {timeout: 3000, password: " + SECRET + "}")
    for _ in range(draw(st.integers(0, 3))):
        lines.append(f"{draw(st.sampled_from(_KEYS))}: {draw(_VALUE)}")
    if draw(st.booleans()):  # a password, tagged or not, at the top or in the section
        tag = draw(st.sampled_from(["", *_TAGS]))
        lines.append(f"{draw(st.sampled_from(_SECRET_KEYS))}: {tag} {SECRET}")
    section = draw(st.sampled_from(_SECTIONS))
    lines.append(f"{section}:")
    if draw(st.booleans()):
        tag = draw(st.sampled_from(["", *_TAGS]))
        lines.append(f"  {draw(st.sampled_from(_SECRET_KEYS))}: {tag} {SECRET}")
    if draw(st.booleans()):
        lines.append("  <<: *defaults" if lines[0].startswith("defaults") else "  <<: {}")
    for _ in range(draw(st.integers(0, 5))):
        lines.append(f"  {draw(_SECTION_KEY)}: {draw(_VALUE)}")
    return "\n".join(lines) + "\n"


def _load(source: str | bytes) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            Config.from_yaml(source, env=ENV)
        except ConfigError as error:
            assert SECRET not in str(error), str(error)
            assert SECRET not in repr(error.path)


# 400 here (2,000 until 2026-11-28: 31 s of CI's 2 cores for one unit test); every
# strategy's branch is a small sampled_from or a short list, so 400 draws still reach
# each of them many times over, and the long profile covers the rest.
@settings(max_examples=examples(400), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(documents())
def test_generated_documents_load_or_raise_config_error(text: str) -> None:
    _load(text)


@settings(max_examples=examples(300), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(documents(), st.binary(max_size=4), st.integers(0, 200))
@example("sslKeystorePassword: !!int pw-Xy7q\nsingleServerConfig:\n", b" ", 12)
@example("sslKeystorePassword: !!int pw-Xy7q\nsingleServerConfig:\n", b"A", 12)
@example("sslKeystorePassword: !!int pw-Xy7q\nsingleServerConfig:\n", b"AbCd", 15)
def test_generated_bytes_load_or_raise_config_error(text: str, noise: bytes, at: int) -> None:
    data = text.encode("utf-8", "surrogatepass")
    _load(data[:at] + noise + data[at:])


@settings(max_examples=examples(400), deadline=None)
@given(st.text(max_size=60))
def test_arbitrary_text_loads_or_raises_config_error(text: str) -> None:
    # A trailing newline keeps it YAML text: a one-line str ending in .yaml is a path.
    _load(text + "\n")
    _load("singleServerConfig: {address: redis://h:1}\n" + text)

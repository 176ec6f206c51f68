"""Kinds of the settings Redisson writes as Java-tagged objects: delays and NAT mappers.

``retryDelay: !<org.redisson.config.EqualJitterDelay> {baseDelay: PT1S, maxDelay: PT2S}``
and ``natMapper: !<org.redisson.config.HostPortNatMapper> {hostsPortMap: {...}}`` arrive
as inert `TaggedValue` data; these kinds map the known classes to Python values and
refuse the others (a custom Java class cannot be honoured, and silently ignoring a NAT map
or a retry policy would change behaviour).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from redisson_py.config.delays import (
    DELAY_CLASSES,
    MAX_DELAY,
    ConstantDelay,
    DecorrelatedJitterDelay,
    DelayStrategy,
    EqualJitterDelay,
    FullJitterDelay,
)
from redisson_py.config.diagnostics import Invalid, suggest
from redisson_py.config.durations import format_duration, parse_duration
from redisson_py.config.kinds import Kind, describe
from redisson_py.config.nat import HostNatMapper, HostPortNatMapper, NatMapper, split_host_port
from redisson_py.config.tagged import TaggedValue, display_tag, java_class_of


def _duration(mapping: Mapping[Any, object], key: str) -> float:
    raw = mapping[key]
    if not isinstance(raw, str):
        raise Invalid(
            f"expected an ISO-8601 duration such as 'PT1.5S', got {describe(raw)}", (key,)
        )
    try:
        seconds = parse_duration(raw)
    except ValueError:
        raise Invalid(
            f"bad duration {describe(raw)}; expected ISO-8601 such as 'PT1S', 'PT0.5S' or "
            "'PT1M30S'",
            (key,),
        ) from None
    if seconds < 0:
        raise Invalid(f"bad duration {describe(raw)}: must not be negative", (key,))
    if seconds > MAX_DELAY:
        raise Invalid(f"bad duration {describe(raw)}: must be at most PT24H (1 day)", (key,))
    return seconds


def _tagged_mapping(raw: TaggedValue, allowed: tuple[str, ...]) -> Mapping[Any, object]:
    value = raw.value
    if value is None or value == "":
        return {}
    if not isinstance(value, dict):
        raise Invalid(f"{display_tag(raw.tag)} takes a mapping, got {describe(value)}")
    for key in value:
        if key not in allowed:
            hint = suggest(str(key), allowed)
            tip = f"; did you mean {hint!r}?" if hint else f"; expected {', '.join(allowed)}"
            raise Invalid(f"unknown key{tip}", (str(key),))
    return value


def _java_name(raw: TaggedValue) -> str:
    return java_class_of(raw.tag) or raw.tag


class DelayKind(Kind):
    """A `DelayStrategy`; YAML ``!<org.redisson.config.EqualJitterDelay> {...}``."""

    def decode(self, raw: object) -> object:
        self._null(raw)
        if isinstance(raw, DelayStrategy):
            return raw
        names = ", ".join(cls.JAVA_CLASS for cls in DELAY_CLASSES)
        if not isinstance(raw, TaggedValue):
            raise Invalid(
                f"expected a tagged delay such as !<{EqualJitterDelay.JAVA_CLASS}> "
                f"{{baseDelay: PT1S, maxDelay: PT2S}}, got {describe(raw)}"
            )
        name = _java_name(raw)
        if name == ConstantDelay.JAVA_CLASS:
            mapping = _tagged_mapping(raw, ("delay",))
            if not mapping:  # Redisson's default for an empty mapping
                return ConstantDelay(0.1)
            if "delay" not in mapping:
                raise Invalid("ConstantDelay needs 'delay'")
            return ConstantDelay(_duration(mapping, "delay"))
        for cls in (EqualJitterDelay, FullJitterDelay, DecorrelatedJitterDelay):
            if name == cls.JAVA_CLASS:
                mapping = _tagged_mapping(raw, ("baseDelay", "maxDelay"))
                if not mapping:  # Redisson's default for an empty mapping
                    return cls(0.1, 1.0)
                for key in ("baseDelay", "maxDelay"):
                    if key not in mapping:
                        raise Invalid(f"{cls.__name__} needs both baseDelay and maxDelay")
                return cls(_duration(mapping, "baseDelay"), _duration(mapping, "maxDelay"))
        raise Invalid(f"unsupported delay class {name!r}; expected one of {names}")

    def encode(self, value: object) -> object:
        if isinstance(value, ConstantDelay):
            return TaggedValue(value.JAVA_CLASS, {"delay": format_duration(value.delay_seconds)})
        if isinstance(value, EqualJitterDelay | FullJitterDelay | DecorrelatedJitterDelay):
            return TaggedValue(
                value.JAVA_CLASS,
                {
                    "baseDelay": format_duration(value.base_delay),
                    "maxDelay": format_duration(value.max_delay),
                },
            )
        raise TypeError(f"cannot write a {type(value).__name__} as a Redisson delay")

    def check(self, value: object) -> None:
        if not isinstance(value, DELAY_CLASSES):
            raise Invalid(f"expected a DelayStrategy, got {describe(value)}")


_HOST_NAT: Final = frozenset({HostNatMapper.JAVA_CLASS, "org.redisson.api.HostNatMapper"})
_HOST_PORT_NAT: Final = frozenset(
    {HostPortNatMapper.JAVA_CLASS, "org.redisson.api.HostPortNatMapper"}
)
_DIRECT_NAT: Final = frozenset(
    {"org.redisson.config.DefaultNatMapper", "org.redisson.api.DefaultNatMapper"}
)


def host_port_map(raw: object, subpath: tuple[str, ...] = ()) -> HostPortNatMapper:
    """A ``{"host:port": "host:port"}`` mapping (``natMap``, ``hostsPortMap``) as a mapper."""
    if not isinstance(raw, dict):
        raise Invalid(
            f"expected a mapping of 'host:port' to 'host:port', got {describe(raw)}", subpath
        )
    for key, target in raw.items():
        try:
            split_host_port(str(key))
            if not isinstance(target, str):
                raise ValueError(f"expected 'host:port', got {describe(target)}")
            split_host_port(target)
        except ValueError as exc:
            raise Invalid(str(exc), (*subpath, str(key))) from None
    return HostPortNatMapper({str(k): str(v) for k, v in raw.items()})


class NatKind(Kind):
    """A `NatMapper` or ``None`` (addresses used as announced)."""

    nullable = True

    def decode(self, raw: object) -> object:
        if self._null(raw) or isinstance(raw, NatMapper):
            return raw
        if not isinstance(raw, TaggedValue):
            raise Invalid(
                f"expected a tagged mapper such as !<{HostPortNatMapper.JAVA_CLASS}> "
                f"{{hostsPortMap: {{...}}}}, got {describe(raw)}"
            )
        name = _java_name(raw)
        if name in _DIRECT_NAT:
            return None
        if name in _HOST_PORT_NAT:
            mapping = _tagged_mapping(raw, ("hostsPortMap",))
            return host_port_map(mapping.get("hostsPortMap") or {}, ("hostsPortMap",))
        if name in _HOST_NAT:
            mapping = _tagged_mapping(raw, ("hostsMap",))
            hosts = mapping.get("hostsMap") or {}
            if not isinstance(hosts, dict):
                raise Invalid(
                    f"expected a mapping of host to host, got {describe(hosts)}", ("hostsMap",)
                )
            for key, target in hosts.items():
                if not isinstance(target, str) or not target:
                    raise Invalid(
                        f"expected a host name, got {describe(target)}", ("hostsMap", str(key))
                    )
            return HostNatMapper({str(k): v for k, v in hosts.items()})
        supported = ", ".join(sorted({HostNatMapper.JAVA_CLASS, HostPortNatMapper.JAVA_CLASS}))
        raise Invalid(f"unsupported NAT mapper class {name!r}; expected one of {supported}")

    def encode(self, value: object) -> object:
        if value is None:
            return None
        if isinstance(value, HostPortNatMapper):
            return TaggedValue(value.JAVA_CLASS, {"hostsPortMap": dict(value.hosts_port_map)})
        if isinstance(value, HostNatMapper):
            return TaggedValue(value.JAVA_CLASS, {"hostsMap": dict(value.hosts_map)})
        raise TypeError(f"cannot write a {type(value).__name__} as a Redisson NAT mapper")

    def check(self, value: object) -> None:
        if value is not None and not isinstance(value, HostNatMapper | HostPortNatMapper):
            raise Invalid(
                f"expected HostNatMapper, HostPortNatMapper or None, got {describe(value)}"
            )

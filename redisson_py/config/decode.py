"""From Redisson's YAML shape (a mapping with camelCase keys) to config objects.

Every key is one of: a setting (decoded by its kind), an old Redisson spelling (translated),
a Redisson setting that means nothing here (ignored; one warning lists them all), a mode
redisson-py does not support (refused), or unknown (refused, with a suggestion).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from redisson_py.config.delays import ConstantDelay
from redisson_py.config.diagnostics import Invalid, KeyPath, Origin, suggest
from redisson_py.config.enums import SslVerificationMode
from redisson_py.config.kinds import Bool, Kind, Millis, SectionKind, camel
from redisson_py.config.kinds.tagged import host_port_map
from redisson_py.config.schema import Settings, by_key, loading, specs

S = TypeVar("S", bound=Settings)

_SECTION_LIST = (
    "singleServerConfig, masterSlaveServersConfig, sentinelServersConfig, clusterServersConfig"
    " or replicatedServersConfig"
)


def decode_config(cls: type[S], data: object, origin: Origin, *, stacklevel: int) -> S:
    """Decode ``data`` into a ``cls`` (the top-level Config class), warn once about ignored
    settings, then validate. Raises [`ConfigError`][redisson_py.errors.ConfigError]
    located through ``origin``."""
    if not isinstance(data, Mapping):
        kind = "a list" if isinstance(data, list) else f"a {type(data).__name__}"
        raise origin.error(
            (), f"expected a mapping of Redisson settings at the top level, got {kind}"
        )
    decoder = _Decoder(cls, origin)
    with loading():
        config = decoder.settings(cls, data, ())
    config._origin = origin  # Config's private field: where each key came from
    origin.warn_ignored(decoder.ignored, stacklevel=stacklevel + 1)
    validate = getattr(config, "validate", None)
    if validate is not None:
        validate()
    origin.warn_units(decoder.slips, stacklevel=stacklevel + 1)  # when nothing was refused
    return config


class _Decoder:
    def __init__(self, root: type[Settings], origin: Origin) -> None:
        self.origin = origin
        self.ignored: list[KeyPath] = []
        self.slips: list[tuple[KeyPath, str]] = []
        # Where each class lives in the document, for "it belongs in ..." hints.
        self.homes: dict[type[Settings], str] = {root: "the top level"}
        for spec in specs(root):
            if isinstance(spec.kind, SectionKind):
                self.homes[spec.kind.cls] = spec.key

    def settings(self, cls: type[S], data: Mapping[Any, Any], path: KeyPath) -> S:
        keys = by_key(cls)
        kwargs: dict[str, Any] = {}
        legacy: dict[str, tuple[object, KeyPath]] = {}
        for key, raw in data.items():
            if not isinstance(key, str):
                raise self.origin.error(path, f"keys must be strings, got {type(key).__name__}")
            key_path = (*path, key)
            spec = keys.get(cls.KEY_ALIASES.get(key, key))
            if spec is not None:
                if spec.attr in kwargs:
                    raise self.origin.error(
                        key_path, f"{spec.key} is set twice (an old and a new spelling)"
                    )
                if isinstance(spec.kind, SectionKind):
                    if raw is None:
                        continue
                    if not isinstance(raw, Mapping):
                        raise self.origin.error(key_path, "expected a mapping of settings")
                    kwargs[spec.attr] = self.settings(spec.kind.cls, raw, key_path)
                else:
                    kwargs[spec.attr] = self.value(spec.kind, raw, key_path)
            elif key in cls.LEGACY_KEYS:
                legacy[key] = (raw, key_path)
            elif key in cls.REJECTED_KEYS:
                raise self.origin.error(
                    key_path,
                    f"{cls.REJECTED_KEYS[key]} is not supported by redisson-py; "
                    f"use {_SECTION_LIST}",
                )
            elif key in cls.IGNORED_KEYS:
                self.ignored.append(key_path)
            else:
                raise self.origin.error(key_path, self.unknown(cls, key))
        self.legacy(kwargs, legacy)
        return cls(**kwargs)

    def value(self, kind: Kind, raw: object, path: KeyPath) -> object:
        if kind.textual and not isinstance(raw, str) and path in self.origin.scalar_text:
            raw = self.origin.scalar_text[path]
        try:
            value = kind.decode(raw)
        except Invalid as exc:
            raise self.origin.invalid(path, exc.subpath, exc.message, kind.hint()) from None
        except ValueError as exc:  # a value object refused its arguments
            raise self.origin.invalid(path, (), str(exc), kind.hint()) from None
        if isinstance(kind, Millis):
            slip = kind.implausible(value)
            if slip is not None and slip.startswith("shorter"):
                self.slips.append((path, slip))
        return value

    def legacy(self, kwargs: dict[str, Any], legacy: dict[str, tuple[object, KeyPath]]) -> None:
        """Translate old Redisson keys; the current key wins when both are present."""
        if "retryInterval" in legacy and "retry_delay" not in kwargs:
            raw, path = legacy["retryInterval"]
            seconds = self.value(Millis(), raw, path)
            if not isinstance(seconds, float) or seconds < 0:
                raise self.origin.error(path, "must not be negative")
            try:
                kwargs["retry_delay"] = ConstantDelay(seconds)
            except ValueError:  # out of range: say so in milliseconds, with the line
                raise self.origin.error(path, "must be at most 86400000 (1 day)") from None
        if "sslEnableEndpointIdentification" in legacy and "ssl_verification_mode" not in kwargs:
            raw, path = legacy["sslEnableEndpointIdentification"]
            strict = self.value(Bool(), raw, path)
            kwargs["ssl_verification_mode"] = (
                SslVerificationMode.STRICT if strict else SslVerificationMode.NONE
            )
        if "natMap" in legacy and "nat_mapper" not in kwargs:
            raw, path = legacy["natMap"]
            if raw is not None:
                try:
                    kwargs["nat_mapper"] = host_port_map(raw)
                except Invalid as exc:
                    hint = "expected a mapping of 'host:port' to 'host:port'"
                    raise self.origin.invalid(path, exc.subpath, exc.message, hint) from None

    def unknown(self, cls: type[Settings], key: str) -> str:
        """The message for an unknown key: where it belongs, or the likely intended key."""
        homes = [
            home for other, home in self.homes.items() if other is not cls and key in by_key(other)
        ]
        if homes:
            home = self.homes.get(cls, cls.__name__)
            here = "a top-level setting" if home == "the top level" else f"a setting of {home}"
            where = " or ".join(
                "at the top level" if h == "the top level" else f"in {h}" for h in homes
            )
            return f"not {here}; it belongs {where}"
        known = set(by_key(cls)) | set(cls.KEY_ALIASES) | cls.LEGACY_KEYS | cls.IGNORED_KEYS
        if "_" in key and camel(key) in known:
            return f"unknown key; did you mean {camel(key)!r}? (keys are camelCase, as in Redisson)"
        hint = suggest(key, known)
        return f"unknown key; did you mean {hint!r}?" if hint else "unknown key"

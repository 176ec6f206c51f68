"""From Redisson's YAML shape (a mapping with camelCase keys) to config objects.

Every key is one of: a setting (decoded by its kind), an old Redisson spelling (translated),
a Redisson setting that means nothing here (ignored), a key Redisson removed (ignored,
as Redisson 4.x does, naming the version), a mode redisson-py does not support or a
``nameMapper`` (refused), or unknown (refused, with a suggestion). Ignored keys, settings
without effect here and likely unit slips become `ConfigNotice`s: one warning lists them,
or the caller collects them (``config check``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from redisson_py.config.delays import ConstantDelay
from redisson_py.config.diagnostics import (
    ConfigNotice,
    Invalid,
    KeyPath,
    Origin,
    suggest,
    unit_notices,
    warn_notices,
)
from redisson_py.config.enums import SslVerificationMode
from redisson_py.config.kinds import Bool, Kind, Millis, SectionKind, camel
from redisson_py.config.kinds.tagged import host_port_map
from redisson_py.config.schema import Settings, by_key, loading, specs
from redisson_py.config.sections import ignored_why
from redisson_py.config.tagged import TaggedValue

S = TypeVar("S", bound=Settings)

_SECTION_LIST = (
    "singleServerConfig, masterSlaveServersConfig, sentinelServersConfig, clusterServersConfig"
    " or replicatedServersConfig"
)
_IDENTITY_MAPPER = "org.redisson.api.DefaultNameMapper"
"""Redisson's default name mapper (the identity), as its own YAML dumps may write it."""
_KEYSTORE_SUFFIXES = (".p12", ".pfx", ".pkcs12", ".jks", ".jceks", ".keystore", ".truststore")
"""File names of Java/PKCS#12 key stores, which Python's ssl module cannot read."""
_KEYSTORE_KEYS = ("ssl_keystore", "ssl_truststore")


def decode_config(
    cls: type[S],
    data: object,
    origin: Origin,
    *,
    stacklevel: int,
    notices: list[ConfigNotice] | None = None,
) -> S:
    """Decode ``data`` into a ``cls`` (the top-level Config class) and validate it. Raises
    [`ConfigError`][redisson_py.errors.ConfigError] located through ``origin``.

    What the load has to say about settings it accepted (ignored, removed from Redisson,
    without effect here, likely unit slips) is appended to ``notices`` when given;
    otherwise it is emitted as warnings (`warn_notices`)."""
    if not isinstance(data, Mapping):
        kind = "a list" if isinstance(data, list) else f"a {type(data).__name__}"
        raise origin.error(
            (), f"expected a mapping of Redisson settings at the top level, got {kind}"
        )
    decoder = _Decoder(cls, origin)
    with loading():
        config = decoder.settings(cls, data, ())
    config._origin = origin  # Config's private field: where each key came from
    validate = getattr(config, "validate", None)
    if validate is not None:
        validate()
    decoder.check_keystores(config)
    # Unit slips only when nothing was refused; all in the order of the file.
    found = [*decoder.notices, *unit_notices(origin, decoder.slips)]
    found.sort(key=lambda n: (n.line is None, n.line or 0))
    if notices is None:
        warn_notices(found, stacklevel=stacklevel + 1)
    else:
        notices.extend(found)
    return config


class _Decoder:
    def __init__(self, root: type[Settings], origin: Origin) -> None:
        self.origin = origin
        self.notices: list[ConfigNotice] = []
        self.slips: list[tuple[KeyPath, str]] = []
        self.keystores: list[KeyPath] = []
        """Each sslKeystore/sslTruststore named like a PKCS#12/JKS file."""
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
            if spec is None:
                self.not_a_setting(cls, data, key_path, key, legacy)
            elif spec.attr in kwargs:
                raise self.origin.error(
                    key_path, f"{spec.key} is set twice (an old and a new spelling)"
                )
            elif not isinstance(spec.kind, SectionKind):
                kwargs[spec.attr] = self.value(spec.kind, raw, key_path)
            elif raw is not None:  # an empty section is the default one
                if not isinstance(raw, Mapping):
                    raise self.origin.error(key_path, "expected a mapping of settings")
                kwargs[spec.attr] = self.settings(spec.kind.cls, raw, key_path)
        self.legacy(kwargs, legacy)
        self.no_effect(cls, data, kwargs, path)
        return cls(**kwargs)

    def not_a_setting(
        self,
        cls: type[Settings],
        data: Mapping[Any, Any],
        key_path: KeyPath,
        key: str,
        legacy: dict[str, tuple[object, KeyPath]],
    ) -> None:
        """``key`` of ``data`` (at ``key_path``) that is no setting of ``cls``: an old
        spelling (kept in ``legacy`` for later), refused, ignored with a notice, or
        unknown (an error naming the nearest keys)."""
        raw = data[key]
        if key in cls.LEGACY_KEYS:
            legacy[key] = (raw, key_path)
        elif key in cls.REJECTED_KEYS:
            raise self.origin.error(
                key_path,
                f"{cls.REJECTED_KEYS[key]} is not supported by redisson-py; use {_SECTION_LIST}",
            )
        elif key == "nameMapper":
            self.name_mapper(raw, key_path)
        elif key in cls.IGNORED_KEYS:
            self.notices.append(self.origin.notice(key_path, ignored_why(key)))
        elif key in cls.REMOVED_KEYS:
            version, instead = cls.REMOVED_KEYS[key]
            self.notices.append(
                self.origin.notice(
                    key_path,
                    f"removed in Redisson {version} ({instead}); Redisson 4.x ignores it, "
                    "and so does redisson-py",
                )
            )
        else:
            raise self.origin.error(key_path, self.unknown(cls, key, data))

    def no_effect(
        self, cls: type[Settings], data: Mapping[Any, Any], kwargs: dict[str, Any], path: KeyPath
    ) -> None:
        """Note each setting in ``data`` that changes nothing here (``cls.NO_EFFECT``) and
        is set away from its default (Redisson's own dumps write every default), and each
        key store named like a PKCS#12/JKS file."""
        keys = by_key(cls)
        for key in data:
            spec = keys.get(cls.KEY_ALIASES.get(key, key)) if isinstance(key, str) else None
            if spec is None or spec.attr not in kwargs:
                continue
            value = kwargs[spec.attr]
            if spec.attr in cls.NO_EFFECT and value != spec.default:
                self.notices.append(
                    self.origin.notice(
                        (*path, key), f"has no effect in redisson-py: {cls.NO_EFFECT[spec.attr]}"
                    )
                )
            if (
                spec.attr in _KEYSTORE_KEYS
                and isinstance(value, str)
                and value.lower().endswith(_KEYSTORE_SUFFIXES)
            ):
                self.keystores.append((*path, key))

    def name_mapper(self, raw: object, path: KeyPath) -> None:
        """Accept only Redisson's identity mapper (or null): any other mapper changes the
        Redis key of every lock on the Java side, which redisson-py cannot follow."""
        if raw is None or (
            isinstance(raw, TaggedValue) and raw.tag == _IDENTITY_MAPPER and not raw.value
        ):
            return
        raise self.origin.error(
            path,
            "not supported: a name mapper changes the Redis key of every lock, and "
            "redisson-py cannot run a Java NameMapper, so a Java service using this file and "
            "a Python one would lock different keys and never exclude each other; remove "
            "nameMapper from the file (or map the names in both services' code)",
        )

    def check_keystores(self, config: Settings) -> None:
        """Refuse (when some address is ``rediss://``) or note (when TLS is not used) an
        sslKeystore/sslTruststore named like a PKCS#12 or JKS file: Python's ssl module
        reads PEM only, so the connection would fail later. Judged by the file name only:
        the check touches no file."""
        if not self.keystores:
            return
        section = getattr(config, "server_config", None)
        tls = section is not None and any(a.tls for a in section.seed_addresses())
        for path in self.keystores:
            message = (
                "names a PKCS#12 or JKS key store (judged by its file name); redisson-py reads "
                "PEM files only (convert it, e.g. openssl pkcs12 -in FILE.p12 -out FILE.pem "
                "-nodes)"
            )
            if tls:
                raise self.origin.error(path, message)
            self.notices.append(
                self.origin.notice(path, f"{message}; unused: no rediss:// address")
            )

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

    def unknown(self, cls: type[Settings], key: str, data: Mapping[Any, Any]) -> str:
        """The message for an unknown key: where it belongs, or the likely intended key
        (never one the same mapping already has: that is not what was meant)."""
        homes = [
            home
            for other, home in self.homes.items()
            if other is not cls
            and (key in by_key(other) or key in other.IGNORED_KEYS or key in other.REMOVED_KEYS)
        ]
        if homes:
            home = self.homes.get(cls, cls.__name__)
            here = "a top-level setting" if home == "the top level" else f"a setting of {home}"
            where = " or ".join(
                "at the top level" if h == "the top level" else f"in {h}" for h in homes
            )
            return f"not {here}; it belongs {where}"
        known = set(by_key(cls)) | set(cls.KEY_ALIASES) | cls.LEGACY_KEYS | cls.IGNORED_KEYS
        known |= set(cls.REMOVED_KEYS)
        if "_" in key and camel(key) in known:
            return f"unknown key; did you mean {camel(key)!r}? (keys are camelCase, as in Redisson)"
        hint = suggest(key, known)
        if hint is None or hint in data:  # a key the mapping has is not what was meant
            return "unknown key"
        return f"unknown key; did you mean {hint!r}?"

"""The glue between dataclass fields and settings: YAML keys, kinds, checked assignment."""

from __future__ import annotations

import dataclasses
from typing import Any, ClassVar

from redisson_py.config.diagnostics import suggest
from redisson_py.config.kinds import Kind, camel


@dataclasses.dataclass(frozen=True)
class Spec:
    """One setting of a settings class."""

    attr: str
    """Python attribute (snake_case)."""
    key: str
    """YAML key (Redisson's camelCase)."""
    kind: Kind
    default: object
    """The default value (from ``default`` or ``default_factory``)."""


_SPECS: dict[type[Any], tuple[Spec, ...]] = {}


def specs(cls: type[Any]) -> tuple[Spec, ...]:
    """The settings of ``cls`` in declaration order."""
    cached = _SPECS.get(cls)
    if cached is not None:
        return cached
    out = []
    for f in dataclasses.fields(cls):
        kind = f.metadata.get("kind")
        if kind is None:
            continue
        if f.default is not dataclasses.MISSING:
            default = f.default
        elif f.default_factory is not dataclasses.MISSING:
            default = f.default_factory()
        else:  # pragma: no cover - every setting has a default
            default = None
        out.append(Spec(f.name, f.metadata.get("key") or camel(f.name), kind, default))
    _SPECS[cls] = tuple(out)
    return _SPECS[cls]


def by_attr(cls: type[Any]) -> dict[str, Spec]:
    """Settings of ``cls`` by Python attribute name."""
    return {spec.attr: spec for spec in specs(cls)}


def by_key(cls: type[Any]) -> dict[str, Spec]:
    """Settings of ``cls`` by YAML key."""
    return {spec.key: spec for spec in specs(cls)}


class Settings:
    """Base of the config dataclasses: assignments are coerced and unknown names refused.

    ``section.password = "x"`` stores a :class:`Secret`; ``section.read_mode = "MASTER"``
    stores :attr:`ReadMode.MASTER`; ``section.adress = ...`` raises :class:`AttributeError`
    with a suggestion instead of silently creating an attribute.
    """

    IGNORED_KEYS: ClassVar[frozenset[str]] = frozenset()
    """Redisson keys accepted in YAML but meaningless here (one warning lists them)."""
    LEGACY_KEYS: ClassVar[frozenset[str]] = frozenset()
    """Old Redisson keys translated on load (``retryInterval``, ``natMap``, ...)."""
    KEY_ALIASES: ClassVar[dict[str, str]] = {}
    """Old Redisson spellings of a current key."""
    REJECTED_KEYS: ClassVar[dict[str, str]] = {}
    """Redisson keys refused with a "not supported" error, and what they select."""

    def __repr__(self) -> str:
        # Hand-written (the dataclasses use repr=False) so URL credentials are redacted.
        fields = ", ".join(
            f"{spec.attr}={spec.kind.show(getattr(self, spec.attr))}" for spec in specs(type(self))
        )
        return f"{type(self).__name__}({fields})"

    def __setattr__(self, name: str, value: object) -> None:
        spec = by_attr(type(self)).get(name)
        if spec is None and not name.startswith("_"):
            hint = suggest(name, by_attr(type(self)))
            tip = f"; did you mean {hint!r}?" if hint else ""
            raise AttributeError(f"{type(self).__name__} has no setting {name!r}{tip}")
        if spec is not None:
            value = spec.kind.coerce(value)
        object.__setattr__(self, name, value)

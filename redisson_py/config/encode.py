"""From config objects to Redisson's YAML shape (the inverse of `decode`)."""

from __future__ import annotations

from typing import Any

from redisson_py.config.kinds import SectionKind
from redisson_py.config.schema import Settings, Spec, specs


def encode_settings(obj: Settings, *, include_defaults: bool = True) -> dict[str, Any]:
    """``obj`` as a dict of YAML keys: sections first (as Redisson writes them), then the
    other settings in declaration order. ``None`` settings are left out;
    ``include_defaults=False`` also leaves out settings equal to their default."""
    sections: dict[str, Any] = {}
    plain: dict[str, Any] = {}
    for spec in _own_first(type(obj)):
        value = getattr(obj, spec.attr)
        if isinstance(spec.kind, SectionKind):
            if value is not None:
                sections[spec.key] = encode_settings(value, include_defaults=include_defaults)
            continue
        if not include_defaults and value == spec.default:
            continue
        encoded = spec.kind.encode(value)
        if encoded is not None:
            plain[spec.key] = encoded
    return {**sections, **plain}


def _own_first(cls: type[Settings]) -> list[Spec]:
    """Settings of the most derived class first (``address`` before the shared timeouts)."""
    depth: dict[str, int] = {}
    for level, klass in enumerate(cls.__mro__):
        for name in getattr(klass, "__annotations__", {}):
            depth.setdefault(name, level)
    return sorted(specs(cls), key=lambda spec: depth.get(spec.attr, 0))

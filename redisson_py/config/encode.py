"""From config objects to Redisson's YAML shape (the inverse of `decode`)."""

from __future__ import annotations

from typing import Any

from redisson_py.config.kinds import SectionKind
from redisson_py.config.schema import Settings, Spec, specs


def encode_settings(obj: Settings, *, include_defaults: bool = True) -> dict[str, Any]:
    """``obj`` as a dict of YAML keys: sections first (as Redisson writes them), then the
    other settings in declaration order. ``None`` settings are left out, and so are the
    keys not every Redisson reads (redisson-py's own, Redisson 4's top-level ones) at
    their default: Redisson's YAML loader refuses a key it does not know, so a config
    that sets none of them stays readable by Redisson 3.x and 4.x;
    ``include_defaults=False`` also leaves out every other setting equal to its
    default."""
    sections: dict[str, Any] = {}
    plain: dict[str, Any] = {}
    for spec in _own_first(type(obj)):
        value = getattr(obj, spec.attr)
        if isinstance(spec.kind, SectionKind):
            if value is not None:
                sections[spec.key] = encode_settings(value, include_defaults=include_defaults)
            continue
        if (not spec.write_default or not include_defaults) and value == spec.default:
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

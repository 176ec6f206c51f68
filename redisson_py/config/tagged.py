"""A YAML value carrying a Java type tag, as inert data.

``codec: !<org.redisson.codec.Kryo5Codec> {}`` loads as
``TaggedValue("org.redisson.codec.Kryo5Codec", {})``. Nothing is ever constructed from a
tag: the config decoder maps the few it knows (delays, NAT mappers) and ignores or refuses
the rest. [`Config.to_dict`][redisson_py.config.Config.to_dict] produces them too, and
the YAML writer emits them in Redisson's verbatim form ``!<class.Name>``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final

_JAVA_CLASS: Final = re.compile(r"[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)+")
_YAML_PREFIX: Final = "tag:yaml.org,2002:"


@dataclass(frozen=True)
class TaggedValue:
    """``tag`` is a Java class name (``org.redisson.config.EqualJitterDelay``)."""

    tag: str
    value: object


def java_class_of(tag: str) -> str | None:
    """The Java class a YAML tag names, or ``None`` when it is not a Java class tag.

    ``!<a.b.C>``, ``!!a.b.C`` and ``!a.b.C`` all name ``a.b.C``. ``!!python/object:x``
    and other non-class tags give ``None``.
    """
    name = tag.removeprefix(_YAML_PREFIX).removeprefix("!")
    return name if _JAVA_CLASS.fullmatch(name) else None


def display_tag(tag: str) -> str:
    """How a tag is written in YAML, for messages: ``!!python/object``, ``!<a.b.C>``."""
    if tag.startswith(_YAML_PREFIX):
        return "!!" + tag.removeprefix(_YAML_PREFIX)
    if tag.startswith("!"):
        return tag
    return f"!<{tag}>"

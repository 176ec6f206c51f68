"""The glue between dataclass fields and settings: YAML keys, kinds, checked assignment."""

from __future__ import annotations

import contextlib
import dataclasses
import warnings
from collections.abc import Iterator
from contextvars import ContextVar
from typing import Any, ClassVar

from redisson_py.config.diagnostics import ConfigUnitWarning, Invalid, suggest
from redisson_py.config.kinds import Int, Kind, Millis, camel
from redisson_py.errors import ConfigError

_LOADING: ContextVar[bool] = ContextVar("redisson_py_config_loading", default=False)


@contextlib.contextmanager
def loading() -> Iterator[None]:
    """While decoding YAML: assignments skip their checks, which validation repeats with
    the file's lines once the whole document is read."""
    token = _LOADING.set(True)
    try:
        yield
    finally:
        _LOADING.reset(token)


OWNER_KEYS: dict[type[Any], str] = {}
"""The YAML key of each section class (filled by `redisson_py.config.sections`)."""


def setting_path(cls: type[Any], key: str) -> str:
    """``singleServerConfig.timeout`` (a section's setting) or ``lockWatchdogTimeout``."""
    owner = OWNER_KEYS.get(cls, "")
    return f"{owner}.{key}" if owner else key


def warn_unit_slip(cls: type[Any], spec: Spec, value: object, *, stacklevel: int) -> None:
    """Warn (`ConfigUnitWarning`) when a time set in Python is too long to be meant
    as seconds, e.g. ``timeout=3000`` (50 minutes; probably meant as milliseconds)."""
    if not isinstance(spec.kind, Millis):
        return
    slip = spec.kind.implausible(value)
    if slip is not None and slip.startswith("longer") and isinstance(value, int | float):
        warnings.warn(
            f"{setting_path(cls, spec.key)} ({spec.attr}={value!r}) is {slip}: Python times "
            f"are seconds (if milliseconds were meant, write {spec.attr}={value / 1000!r})",
            ConfigUnitWarning,
            stacklevel=stacklevel + 1,
        )


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
    write_default: bool = True
    """False for a key that not every Redisson reads: written only when set (see
    `setting`)."""


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
        key = f.metadata.get("key") or camel(f.name)
        out.append(Spec(f.name, key, kind, default, f.metadata.get("write_default", True)))
    _SPECS[cls] = tuple(out)
    return _SPECS[cls]


def by_attr(cls: type[Any]) -> dict[str, Spec]:
    """Settings of ``cls`` by Python attribute name."""
    return {spec.attr: spec for spec in specs(cls)}


def by_key(cls: type[Any]) -> dict[str, Spec]:
    """Settings of ``cls`` by YAML key."""
    return {spec.key: spec for spec in specs(cls)}


class Settings:
    """Base of the config dataclasses: assignments are coerced and unknown names refused;
    numbers out of their range raise [`ConfigError`][redisson_py.errors.ConfigError] at
    once, and a time above its plausible span (see the section docs) warns with
    `ConfigUnitWarning`.

    ``section.password = "x"`` stores a [`Secret`][redisson_py.config.Secret];
    ``section.read_mode = "MASTER"`` stores `ReadMode.MASTER`; ``section.adress = ...``
    raises `AttributeError` with a suggestion instead of silently creating an attribute.
    """

    IGNORED_KEYS: ClassVar[frozenset[str]] = frozenset()
    """Redisson keys accepted in YAML but meaningless here (one warning lists them)."""
    LEGACY_KEYS: ClassVar[frozenset[str]] = frozenset()
    """Old Redisson keys translated on load (``retryInterval``, ``natMap``, ...)."""
    KEY_ALIASES: ClassVar[dict[str, str]] = {}
    """Old Redisson spellings of a current key."""
    REJECTED_KEYS: ClassVar[dict[str, str]] = {}
    """Redisson keys refused with a "not supported" error, and what they select."""
    REMOVED_KEYS: ClassVar[dict[str, tuple[str, str]]] = {}
    """Keys Redisson removed (and Redisson 4.x ignores): accepted with a warning naming the
    Redisson version that dropped each and what replaced it."""
    NO_EFFECT: ClassVar[dict[str, str]] = {}
    """Settings (by attribute) that are checked but change nothing in redisson-py, and why;
    a YAML file setting one away from its default draws a warning."""

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
            if not _LOADING.get():
                self._check_number(spec, value)
                if name in self.__dict__:  # an assignment after construction
                    warn_unit_slip(type(self), spec, value, stacklevel=2)
        object.__setattr__(self, name, value)

    def _check_number(self, spec: Spec, value: object) -> None:
        """Range-check a number as it is assigned (types wait for validation, which
        also reports them): [`ConfigError`][redisson_py.errors.ConfigError] naming the
        setting and the range."""
        numeric = isinstance(value, int | float) and not isinstance(value, bool)
        if numeric and isinstance(spec.kind, Millis | Int):
            try:
                spec.kind.check(value)
            except Invalid as exc:
                path = setting_path(type(self), spec.key)
                raise ConfigError(f"{path}: {exc.message}", path=path) from None

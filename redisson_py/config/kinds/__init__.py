"""The value kinds of config settings: how each reads from YAML, writes back, and checks.

This package holds every kind: the plain ones here, the kinds of Java-tagged objects
(delays, NAT mappers) in `redisson_py.config.kinds.tagged`.

A setting is a dataclass field whose metadata holds a `Kind`. The kind converts
between Redisson's YAML value (milliseconds, ISO durations, tagged objects, ``file:`` URLs)
and the Python attribute (seconds, `DelayStrategy`, a path), coerces assignments
(a ``str`` password becomes a [`Secret`][redisson_py.config.Secret]), and checks a
Python value for validation. Messages raised here never contain the value of a secret
setting.
"""

from __future__ import annotations

import dataclasses
import math
import os
import re
from abc import ABC, abstractmethod
from enum import StrEnum
from typing import Any, Final
from urllib.parse import quote, unquote

from redisson_py.config.addresses import address_problem, redact_address
from redisson_py.config.diagnostics import Invalid
from redisson_py.config.secret import Secret
from redisson_py.config.tagged import TaggedValue, display_tag

_INT_TEXT: Final = re.compile(r"[-+]?\d+", re.ASCII)
_NUMBER_TEXT: Final = re.compile(r"[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?", re.ASCII)

MAX_DURATION: Final = 86400.0
"""The longest time any setting takes: one day (seconds)."""
MIN_DURATION: Final = 0.001
"""The shortest non-zero time: 1 ms, the unit of Redisson's YAML and of PEXPIRE."""
MAX_INT: Final = 2**31 - 1
"""The largest integer setting (Java's ``int``, as in Redisson)."""


def format_millis(seconds: float) -> str:
    """``0.1`` -> ``"100 ms"``, ``86400`` -> ``"86400000 ms (1 day)"``: bounds in messages."""
    millis = seconds * 1000
    text = f"{int(millis)} ms" if millis == int(millis) and millis < 1e15 else f"{millis:.6g} ms"
    return f"{text} (1 day)" if seconds == MAX_DURATION else text


def describe(value: object) -> str:
    """How a wrong value is described: strings are quoted (short), other values by type.

    Never used for a secret setting's value (SecretKind only reports non-strings).
    """
    if value is None:
        return "null"
    if isinstance(value, str):
        value = redact_address(value) if "@" in value else value  # URL credentials
        return repr(value) if len(value) <= 40 else repr(value[:37] + "...")
    if isinstance(value, TaggedValue):
        return f"a tagged value {display_tag(value.tag)}"
    return {dict: "a mapping", list: "a list", bool: "a boolean"}.get(
        type(value), type(value).__name__
    )


class Kind(ABC):
    """One kind of setting value."""

    nullable: bool = False
    """Whether ``None`` (YAML ``null``) is a legal value."""
    textual: bool = False
    """Whether the value is text, so a YAML scalar that looks like a number is taken as
    written (Redisson reads ``password: 12345`` as the string "12345")."""

    @abstractmethod
    def decode(self, raw: object) -> object:
        """YAML/dict value -> Python value. Raises `Invalid` on a wrong type."""

    def encode(self, value: object) -> object:
        """Python value -> YAML/dict value; ``None`` means the key is left out."""
        return value

    def coerce(self, value: object) -> object:
        """Normalize an assigned value (``str`` -> ``Secret``, name -> enum); never raises."""
        return value

    def hint(self) -> str:
        """What the setting expects, quoting no value: for errors about secret values
        and values that came from ``${VAR}``."""
        return "see the setting's documentation"

    def show(self, value: object) -> str:
        """The value in a repr. Addresses hide URL credentials; secrets hide themselves."""
        return repr(value)

    @abstractmethod
    def check(self, value: object) -> None:
        """Validate a Python value. Raises `Invalid`."""

    def _null(self, raw: object) -> bool:
        if raw is None:
            if self.nullable:
                return True
            raise Invalid("must not be null")
        return False


class Millis(Kind):
    """A time: seconds (float) in Python, milliseconds in YAML.

    Range: 0 (or, with ``positive``, ``minimum``: 1 ms unless given) up to ``maximum``
    (1 day unless given); anything else is refused by `check`.
    ``minus_one_is_none`` maps Redisson's ``-1`` ("disabled") to ``None``.
    ``plausible`` is the span outside which a value is more likely a unit slip than
    meant (YAML ``timeout: 30`` is 30 ms, Python ``timeout=3000`` is 50 minutes); such a
    value is accepted with a `ConfigUnitWarning`.
    """

    def __init__(
        self,
        *,
        positive: bool = False,
        minus_one_is_none: bool = False,
        minimum: float | None = None,
        maximum: float = MAX_DURATION,
        plausible: tuple[float, float] = (0.1, 3600.0),
    ) -> None:
        self.positive = positive
        self.minus_one_is_none = minus_one_is_none
        self.nullable = minus_one_is_none
        self.minimum = minimum if minimum is not None else (MIN_DURATION if positive else 0.0)
        self.maximum = maximum
        self.plausible = plausible

    def implausible(self, value: object) -> str | None:
        """Why ``value`` (seconds) looks like a unit slip, or ``None``. 0 ("off") is fine."""
        if isinstance(value, bool) or not isinstance(value, int | float) or not value:
            return None
        low, high = self.plausible
        if value < low:
            return f"shorter than {format_millis(low)}"
        if value > high:
            return f"longer than {high:g} s"
        return None

    def decode(self, raw: object) -> object:
        if self._null(raw):
            return None
        if isinstance(raw, str) and _NUMBER_TEXT.fullmatch(raw.strip()):
            raw = float(raw)
        if isinstance(raw, bool) or not isinstance(raw, int | float):
            raise Invalid(f"expected a number of milliseconds, got {describe(raw)}")
        if self.minus_one_is_none and raw == -1:
            return None
        try:
            return raw / 1000
        except OverflowError:  # an integer too large for a float
            raise Invalid(
                f"out of range; allowed 0 to {format_millis(self.maximum)} in milliseconds"
            ) from None

    def hint(self) -> str:
        low = format_millis(self.minimum) if self.minimum else "0"
        return f"expected milliseconds from {low} to {format_millis(self.maximum)}"

    def encode(self, value: object) -> object:
        if value is None:
            return -1 if self.minus_one_is_none else None
        assert isinstance(value, int | float)
        millis = value * 1000
        rounded = round(millis)
        # Redisson's fields are integers; keep a fraction only when there is one.
        return rounded if math.isclose(millis, rounded, rel_tol=0, abs_tol=1e-6) else millis

    def check(self, value: object) -> None:
        if value is None and self.minus_one_is_none:
            return
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise Invalid(f"expected a number of seconds, got {describe(value)}")
        if not math.isfinite(value):
            raise Invalid("must be a finite number")
        if value < 0:
            raise Invalid("must not be negative")
        if self.positive and value == 0:
            raise Invalid("must be greater than 0")
        if not self.minimum <= value <= self.maximum:
            low = format_millis(self.minimum) if self.minimum else "0"
            raise Invalid(
                f"{format_millis(value)} is out of range; allowed {low} to "
                f"{format_millis(self.maximum)} (Python takes seconds, YAML milliseconds)"
            )


class Int(Kind):
    """An integer within ``minimum`` .. ``maximum`` (by default Java's ``int`` range)."""

    def __init__(
        self, minimum: int = 0, maximum: int | None = MAX_INT, *, why: str | None = None
    ) -> None:
        self.minimum = minimum
        self.maximum = maximum
        self.why = why
        """Why ``maximum`` is what it is, when it is not Java's ``int`` range (said in the
        error, so a Redisson file refused for it is not taken for a wrong file)."""

    def hint(self) -> str:
        return f"expected an integer from {self.minimum} to {self.maximum}"

    def decode(self, raw: object) -> object:
        self._null(raw)
        if isinstance(raw, str) and _INT_TEXT.fullmatch(raw.strip()):
            return int(raw)
        if isinstance(raw, bool) or not isinstance(raw, int):
            raise Invalid(f"expected an integer, got {describe(raw)}")
        return raw

    def check(self, value: object) -> None:
        if isinstance(value, bool) or not isinstance(value, int):
            raise Invalid(f"expected an integer, got {describe(value)}")
        if value < self.minimum:
            raise Invalid(f"must be at least {self.minimum}, got {value}")
        if self.maximum is not None and value > self.maximum:
            shown = value if value < 10**12 else f"a {len(str(value))}-digit number"
            why = f" ({self.why})" if self.why else ""
            raise Invalid(f"must be at most {self.maximum}{why}, got {shown}")


class Bool(Kind):
    def hint(self) -> str:
        return "expected true or false"

    def decode(self, raw: object) -> object:
        self._null(raw)
        if isinstance(raw, str) and raw.strip().lower() in ("true", "false"):
            return raw.strip().lower() == "true"
        if not isinstance(raw, bool):
            raise Invalid(f"expected true or false, got {describe(raw)}")
        return raw

    def check(self, value: object) -> None:
        if not isinstance(value, bool):
            raise Invalid(f"expected a bool, got {describe(value)}")


class Str(Kind):
    """A string; ``required`` refuses ``None`` and the empty string at validation."""

    textual = True

    def __init__(self, *, required: bool = False) -> None:
        self.required = required
        self.nullable = True  # "required" is a validation rule, so a YAML null reads fine

    def decode(self, raw: object) -> object:
        if self._null(raw):
            return None
        if not isinstance(raw, str):
            raise Invalid(f"expected a string, got {describe(raw)}")
        return raw

    def check(self, value: object) -> None:
        if value is None or value == "":
            if self.required:
                raise Invalid("is required")
            return
        if not isinstance(value, str):
            raise Invalid(f"expected a string, got {describe(value)}")


class SecretKind(Kind):
    """A password: a [`Secret`][redisson_py.config.Secret] in Python, plain text in YAML."""

    textual = True

    nullable = True

    def decode(self, raw: object) -> object:
        if self._null(raw):
            return None
        if not isinstance(raw, str):
            # Never quote the value: it is a password.
            raise Invalid(f"expected a string, got {describe(raw)}")
        return Secret(raw)

    def encode(self, value: object) -> object:
        return value.reveal() if isinstance(value, Secret) else None

    def coerce(self, value: object) -> object:
        return Secret(value) if isinstance(value, str) else value

    def check(self, value: object) -> None:
        if value is not None and not isinstance(value, Secret):
            raise Invalid(f"expected a password string or Secret, got {describe(value)}")


class EnumKind(Kind):
    """One of a `StrEnum`'s names; case-insensitive on input."""

    def __init__(self, enum: type[StrEnum]) -> None:
        self.enum = enum

    def _allowed(self) -> str:
        return ", ".join(member.value for member in self.enum)

    def hint(self) -> str:
        return f"expected one of {self._allowed()}"

    def _lookup(self, raw: str) -> StrEnum | None:
        for member in self.enum:
            if member.value == raw.strip().upper():
                return member
        return None

    def decode(self, raw: object) -> object:
        self._null(raw)
        if not isinstance(raw, str):
            raise Invalid(f"expected one of {self._allowed()}, got {describe(raw)}")
        member = self._lookup(raw)
        if member is None:
            raise Invalid(f"unknown value {describe(raw)}; expected one of {self._allowed()}")
        return member

    def encode(self, value: object) -> object:
        return str(value)

    def coerce(self, value: object) -> object:
        if isinstance(value, str) and not isinstance(value, self.enum):
            return self._lookup(value) or value
        return value

    def check(self, value: object) -> None:
        if not isinstance(value, self.enum):
            raise Invalid(f"unknown value {describe(value)}; expected one of {self._allowed()}")


class AddressKind(Kind):
    """A server URL kept as text; parsed (scheme, host, port) at validation."""

    textual = True

    nullable = True

    def show(self, value: object) -> str:
        return repr(redact_address(value)) if isinstance(value, str) else repr(value)

    def hint(self) -> str:
        return "expected an address such as redis://host:6379"

    def __init__(self, *, required: bool = False) -> None:
        self.required = required

    def decode(self, raw: object) -> object:
        if self._null(raw):
            return None
        if not isinstance(raw, str):
            raise Invalid(f"expected an address string, got {describe(raw)}")
        return raw

    def check(self, value: object) -> None:
        if value is None:
            if self.required:
                raise Invalid("is required")
            return
        _, problem = address_problem(value)
        if problem is not None:
            raise Invalid(problem)


class AddressList(Kind):
    """A list of server URLs; ``non_empty`` requires at least one."""

    nullable = True

    def __init__(self, *, non_empty: bool) -> None:
        self.non_empty = non_empty

    def hint(self) -> str:
        return "expected a list of addresses such as redis://host:6379"

    def show(self, value: object) -> str:
        if isinstance(value, list):
            return repr([redact_address(v) if isinstance(v, str) else v for v in value])
        return repr(value)

    def decode(self, raw: object) -> object:
        if self._null(raw):
            return []
        if not isinstance(raw, list):
            raise Invalid(f"expected a list of addresses, got {describe(raw)}")
        for index, item in enumerate(raw):
            if not isinstance(item, str):
                raise Invalid(f"expected an address string, got {describe(item)}", (index,))
        return list(raw)

    def encode(self, value: object) -> object:
        assert isinstance(value, list)
        return list(value)

    def coerce(self, value: object) -> object:
        # A set or tuple of addresses (Redisson's slaveAddresses is a Set) becomes a list.
        if isinstance(value, set | frozenset | tuple):
            return list(value)
        return value

    def check(self, value: object) -> None:
        if not isinstance(value, list):
            raise Invalid(f"expected a list of addresses, got {describe(value)}")
        if self.non_empty and not value:
            raise Invalid("must list at least one address")
        for index, item in enumerate(value):
            _, problem = address_problem(item)
            if problem is not None:
                raise Invalid(problem, (index,))


class FileKind(Kind):
    """A local file: a path in Python; in YAML a ``file:`` URL (Redisson's form) or a path."""

    textual = True

    nullable = True

    def decode(self, raw: object) -> object:
        if self._null(raw):
            return None
        if not isinstance(raw, str) or not raw.strip():
            raise Invalid(f"expected a file path or file: URL, got {describe(raw)}")
        text = raw.strip()
        if text.lower().startswith("file:"):
            rest = text[len("file:") :]
            if rest.startswith("//"):  # file://host/path: only the local host is meaningful
                host, _, path = rest[2:].partition("/")
                if host not in ("", "localhost"):
                    raise Invalid(f"file URL names a remote host {host!r}")
                rest = "/" + path
            return unquote(rest)
        if re.match(r"[A-Za-z][A-Za-z0-9+.-]+:", text) and not re.match(r"[A-Za-z]:[\\/]", text):
            raise Invalid("only local files are supported (a path or a file: URL)")
        return text

    def encode(self, value: object) -> object:
        # Redisson reads a URL; quoting keeps spaces and "%" in the path intact.
        return None if value is None else f"file:{quote(str(value))}"

    def coerce(self, value: object) -> object:
        return os.fspath(value) if isinstance(value, os.PathLike) else value

    def check(self, value: object) -> None:
        if value is not None and (not isinstance(value, str) or not value):
            raise Invalid(f"expected a file path, got {describe(value)}")


class SectionKind(Kind):
    """A topology section (decoded by the decoder itself, which recurses into it)."""

    nullable = True

    def __init__(self, cls: type[Any]) -> None:
        self.cls = cls

    def decode(self, raw: object) -> object:  # pragma: no cover - the decoder recurses
        raise NotImplementedError

    def check(self, value: object) -> None:
        if value is not None and not isinstance(value, self.cls):
            raise Invalid(f"expected a {self.cls.__name__}, got {describe(value)}")


def setting(
    kind: Kind,
    default: object = dataclasses.MISSING,
    *,
    factory: Any = None,
    key: str | None = None,
    write_default: bool = True,
) -> Any:
    """A dataclass field for a setting: its kind and, when it differs from the camelCase
    of the attribute name, its YAML key. ``write_default=False``: a key that some
    Redisson version we interoperate with does not have (redisson-py's own keys, and the
    top-level keys Redisson added in 4.0), which its YAML loader refuses, so
    ``to_yaml()`` writes it only when it is set to something else than its default."""
    metadata = {"kind": kind, "key": key, "write_default": write_default}
    if factory is not None:
        return dataclasses.field(default_factory=factory, metadata=metadata)
    return dataclasses.field(default=default, metadata=metadata)


def camel(name: str) -> str:
    """``connect_timeout`` -> ``connectTimeout``."""
    head, *rest = name.split("_")
    return head + "".join(part.capitalize() for part in rest)

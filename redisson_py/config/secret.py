"""A password that never shows itself.

Config attributes holding credentials store a [`Secret`][redisson_py.config.Secret];
only [`Secret.reveal`][redisson_py.config.Secret.reveal] returns the text, and the only
callers of it in redisson-py are the functions that hand credentials to redis-py
(`redisson_py.config.redis_kwargs`) and the YAML writer.
"""

from __future__ import annotations

import hmac
from typing import Final

_MASK: Final = "**********"


class Secret:
    """An opaque wrapper around a password.

    Guarantees: ``repr()``, ``str()`` and ``format()`` print a fixed mask, never the value
    or its length; two secrets are equal when their values are equal (compared in constant
    time); a secret never equals a plain ``str``. Not promised: protection against a
    debugger or ``pickle``, which see the value.
    """

    __slots__ = ("_value",)

    def __init__(self, value: str) -> None:
        if not isinstance(value, str):
            # Name the type only: the value may be the password itself.
            raise TypeError(f"Secret() takes a str, not {type(value).__name__}")
        self._value = value

    def reveal(self) -> str:
        """Return the wrapped password. Call it only where the password leaves the process."""
        return self._value

    def __repr__(self) -> str:
        return f"Secret('{_MASK}')"

    def __str__(self) -> str:
        return _MASK

    def __format__(self, format_spec: str) -> str:
        return format(_MASK, format_spec)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Secret):
            return NotImplemented
        return hmac.compare_digest(self._value.encode(), other._value.encode())

    def __hash__(self) -> int:
        return hash((Secret, self._value))

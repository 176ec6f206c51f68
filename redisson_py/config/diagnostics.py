"""How config problems are reported: key paths, YAML lines, did-you-mean, one warning.

Every message built here names settings by their YAML key path
(``sentinelServersConfig.sentinelAddresses[1]``) and, for YAML input, the source and line:
``config.yaml, line 4: singleServerConfig.adress: unknown key; did you mean 'address'?``.
Values are quoted only for settings that cannot hold a secret (see `secret_key`)
and never when they came from ``${VAR}`` (the variable is named instead):
`Origin.invalid` enforces this for every value error.
"""

from __future__ import annotations

import difflib
import re
import warnings
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Final

from redisson_py.config.addresses import redact_address
from redisson_py.errors import ConfigError

KeyPath = tuple[str | int, ...]
"""A position in the config document: mapping keys and sequence indexes."""

STRING_SOURCE: Final = "<string>"
_PLAIN_KEY: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_SECRET_WORDS: Final = ("password", "secret", "token", "username", "credential")
_TYPO_GAP: Final = 4
"""Letters a mistyped key may have inside a secret word and still count as one."""
_SECRET_PATTERN: Final = re.compile(
    "|".join(
        f"{re.escape(word[:cut])}.{{0,{_TYPO_GAP}}}{re.escape(word[cut:])}"
        for word in _SECRET_WORDS
        for cut in range(1, len(word))
    )
)
"""A secret word, possibly with up to `_TYPO_GAP` stray letters inside it."""


def secret_key(path: KeyPath) -> bool:
    """Whether the setting at ``path`` may hold a secret: any key on it containing
    password, secret, token, username or credential (case-insensitive, letters only, and
    with up to four stray letters inside the word: a mistyped ``sslKeystoreP assword``
    or ``sslKeystorePAassword`` still counts). Such values are never quoted in a
    message."""
    return any(
        isinstance(part, str)
        and _SECRET_PATTERN.search("".join(filter(str.isalpha, part.lower()))) is not None
        for part in path
    )


class ConfigWarning(UserWarning):
    """Settings were ignored: they exist in Redisson but mean nothing in redisson-py."""


class ConfigUnitWarning(ConfigWarning):
    """A time setting is accepted but implausible for its unit: most likely seconds and
    milliseconds were mixed up (YAML ``timeout: 3`` is 3 ms; Python ``timeout=3000`` is
    50 minutes). A warning, not a logging record: it points at the caller's line, shows
    once per place by default, and tests can turn it into an error (``-W error``)."""


class Invalid(Exception):
    """A value does not fit its setting. Internal: turned into
    [`ConfigError`][redisson_py.errors.ConfigError].

    ``subpath`` points below the setting's own key (a list item, a key of a tagged
    mapping) so the error names the exact spot. The message never holds a secret.
    """

    def __init__(self, message: str, subpath: KeyPath = ()) -> None:
        super().__init__(message)
        self.message = message
        self.subpath = subpath


def format_path(path: KeyPath) -> str:
    """``("a", "b", 0, "c")`` -> ``"a.b[0].c"``."""
    out = ""
    for part in path:
        if isinstance(part, int):
            out += f"[{part}]"
        elif not _PLAIN_KEY.fullmatch(part):
            shown = redact_address(part) if "@" in part else part  # URL credentials
            out += f"[{shown!r}]"  # a map key such as "node-5.internal:6379"
        else:
            out += f".{part}" if out else part
    return out


def suggest(word: str, candidates: Iterable[str]) -> str | None:
    """The closest candidate to ``word``, if one is close enough to be a likely typo."""
    pool = sorted(set(candidates))
    lowered = {c.lower(): c for c in pool}
    if word.lower() in lowered:
        return lowered[word.lower()]
    matches = difflib.get_close_matches(word, pool, n=1, cutoff=0.6)
    return matches[0] if matches else None


@dataclass(frozen=True)
class Origin:
    """Where a config came from: the source name and the line of every key path."""

    source: str | None = None
    """A file path, ``"<string>"``, ``"<stream>"``; ``None`` for dicts and code."""
    lines: Mapping[KeyPath, int] = field(default_factory=dict)
    """1-based line of each mapping key and sequence item."""
    scalar_text: Mapping[KeyPath, str] = field(default_factory=dict)
    """The source text of each plain scalar YAML typed as a number or bool, so a string
    setting can take it as written (``password: 0123`` is "0123", as in Redisson)."""
    from_env: Mapping[KeyPath, tuple[str, ...]] = field(default_factory=dict)
    """The variables substituted into each scalar that held ``${VAR}``."""

    def env_names(self, path: KeyPath) -> tuple[str, ...]:
        """The ``${VAR}`` names that fed ``path`` or anything under it."""
        names: list[str] = []
        for where, found in self.from_env.items():
            if where[: len(path)] == path or path[: len(where)] == where:
                names.extend(n for n in found if n not in names)
        return tuple(names)

    def invalid(self, base: KeyPath, subpath: KeyPath, message: str, hint: str) -> ConfigError:
        """The error for a bad value of the setting at ``base``: ``message`` as the kind
        wrote it, unless the value came from ``${VAR}``; then ``hint`` (what the setting
        expects, quoting nothing of the value) with the variables named."""
        path = (*base, *subpath)
        names = self.env_names(base)
        if names:
            variables = ", ".join(f"${{{name}}}" for name in names)
            return self.error(path, f"the value from {variables} is not valid: {hint}")
        # A secret setting's own kinds (SecretKind, Str) describe a wrong value by its
        # type only, so their message is safe to keep.
        return self.error(path, message)

    def line_of(self, path: KeyPath) -> int | None:
        """The line of ``path``, else of its nearest ancestor that has one."""
        for end in range(len(path), -1, -1):
            line = self.lines.get(path[:end])
            if line is not None:
                return line
        return None

    def error(self, path: KeyPath, message: str) -> ConfigError:
        """A [`ConfigError`][redisson_py.errors.ConfigError] for ``path``:
        ``source, line N: a.b: message``."""
        line = self.line_of(path) if self.lines else None
        where = self.source or ""
        if line is not None:
            where = f"{where}, line {line}" if where else f"line {line}"
        dotted = format_path(path)
        text = ": ".join(part for part in (where, dotted, message) if part)
        return ConfigError(text, path=dotted or None, line=line)

    def notice(
        self, path: KeyPath, message: str, category: type[ConfigWarning] = ConfigWarning
    ) -> ConfigNotice:
        """A [`ConfigNotice`][redisson_py.config.ConfigNotice] about the setting at
        ``path``, located through this origin."""
        line = self.line_of(path) if self.lines else None
        return ConfigNotice(format_path(path), message, self.source, line, category)


@dataclass(frozen=True)
class ConfigNotice:
    """One thing a config load has to say about a setting it accepted: ignored,
    removed from Redisson, without effect here, or a likely unit slip.

    [`Config.from_yaml`][redisson_py.config.Config.from_yaml] turns them into Python
    warnings (`ConfigWarning`, `ConfigUnitWarning`); given a ``notices`` list it
    appends them there instead and warns about nothing, which is how
    ``redisson-py config check`` prints them as sentences and lists them in ``--json``.
    ``message`` never quotes a value that may be a secret.
    """

    key: str
    """The setting's key path, ``singleServerConfig.readMode``."""
    message: str
    """What is wrong or ignored, and why; a sentence without the location."""
    source: str | None = None
    """The file (or ``"<string>"``) the setting came from; ``None`` for a dict."""
    line: int | None = None
    """The 1-based line of the key, when known."""
    category: type[ConfigWarning] = ConfigWarning
    """The warning class ``from_yaml`` emits it as."""

    def __str__(self) -> str:
        where = self.source or ""
        if self.line is not None:
            where = f"{where}, line {self.line}" if where else f"line {self.line}"
        return ": ".join(part for part in (where, self.key, self.message) if part)

    def as_dict(self) -> dict[str, object]:
        """The notice as JSON-ready data: file, line, key, message, category."""
        return {
            "file": self.source,
            "line": self.line,
            "key": self.key,
            "message": self.message,
            "category": self.category.__name__,
        }


_MS_HINT: Final = "YAML times are milliseconds (write 30000 for 30 seconds)"


def unit_notices(origin: Origin, slips: list[tuple[KeyPath, str]]) -> list[ConfigNotice]:
    """A `ConfigUnitWarning` notice for each YAML time that looks like seconds written
    where milliseconds belong (key and line, no value)."""
    return [origin.notice(path, f"is {why}: {_MS_HINT}", ConfigUnitWarning) for path, why in slips]


def warn_notices(notices: list[ConfigNotice], *, stacklevel: int) -> None:
    """Emit the notices as Python warnings: ONE `ConfigWarning` listing every setting
    that has no effect (each with its line and why), and ONE `ConfigUnitWarning` listing
    every likely unit slip."""
    plain = [n for n in notices if not issubclass(n.category, ConfigUnitWarning)]
    if plain:
        source = next((n.source for n in plain if n.source), None)
        items = [f"{n.key} (line {n.line})" if n.line else n.key for n in plain]
        prefix = f"{source}: " if source else ""
        warnings.warn(
            f"{prefix}ignored {len(plain)} Redisson setting(s) that redisson-py does not use: "
            + "; ".join(f"{item}: {n.message}" for item, n in zip(items, plain, strict=True)),
            ConfigWarning,
            stacklevel=stacklevel + 1,
        )
    units = [n for n in notices if issubclass(n.category, ConfigUnitWarning)]
    if units:
        source = next((n.source for n in units if n.source), None)
        items = [f"{n.key} (line {n.line})" if n.line else n.key for n in units]
        whys = [n.message.removesuffix(f": {_MS_HINT}") for n in units]
        prefix = f"{source}: " if source else ""
        warnings.warn(
            f"{prefix}{'; '.join(f'{i} {w}' for i, w in zip(items, whys, strict=True))}: "
            f"{_MS_HINT}",
            ConfigUnitWarning,
            stacklevel=stacklevel + 1,
        )

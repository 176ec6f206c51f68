"""Reading and writing Redisson's YAML, safely.

Reading composes the document with `yaml.SafeLoader` into nodes and converts them
itself: standard scalars are typed by PyYAML's safe rules, Java class tags become inert
`TaggedValue` data, and every other tag (``!!python/object`` included) is refused.
Nothing is ever constructed from a tag. ``${VAR}`` / ``${VAR:-default}`` are substituted
in scalar values, then plain scalars are typed again (so ``${PORT}`` can become an int).
Each mapping key and sequence item's line is recorded for error messages.
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Mapping
from typing import IO, Any, Final, NoReturn

import yaml
from yaml.constructor import SafeConstructor
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode
from yaml.resolver import Resolver

from redisson_py.config.addresses import redact_address
from redisson_py.config.diagnostics import STRING_SOURCE, KeyPath, Origin, secret_key
from redisson_py.config.tagged import TaggedValue, display_tag, java_class_of
from redisson_py.errors import ConfigError, ConfigFileError

_Y: Final = "tag:yaml.org,2002:"
_SCALAR_TAGS: Final = {
    f"{_Y}{t}" for t in ("null", "bool", "int", "float", "str", "timestamp", "binary")
}
_MERGE: Final = f"{_Y}merge"
_MAX_DEPTH: Final = 64
_MAX_NODES: Final = 100_000  # bounds alias expansion ("billion laughs")
_MAX_CHARS: Final = 1 << 20  # a Redisson config is a few KB; bounds the parser's work
# "$${" is an escaped "${" (a redisson-py extension, as in Docker Compose), so that
# to_yaml() can write values that contain "${" and read them back unchanged.
_ENV_VAR: Final = re.compile(r"\$\$\{|\$\{([\w.]+)(?::-(.*?))?\}")
_PLAIN_SAFE: Final = re.compile(r"[A-Za-z0-9.]+")
# Spring's "${VAR:default}" (no "-"), which Redisson leaves as literal text.
_SPRING_DEFAULT: Final = re.compile(r"(?<!\$)\$\{([\w.]+):(?!-)")

_SAFE: Final = SafeConstructor()
_RESOLVER: Final = Resolver()


Source = str | bytes | bytearray | os.PathLike[str] | IO[str] | IO[bytes]
"""What the loaders read: a path, YAML text, UTF-8 YAML bytes, or an open stream."""


def _read(source: Source) -> tuple[str, str]:
    """``(text, source name)``. Only this function touches the file system."""
    if isinstance(source, bytes | bytearray):
        return _text(bytes(source), "<bytes>"), "<bytes>"
    if isinstance(source, os.PathLike):
        path = os.fspath(source)
        return _text(_read_file(path), path), path
    if isinstance(source, str):
        if "\n" not in source and (
            source.strip().endswith((".yaml", ".yml")) or os.path.isfile(source)
        ):
            return _text(_read_file(source), source), source
        return source, STRING_SOURCE
    content = source.read()
    name = getattr(source, "name", None)
    name = name if isinstance(name, str) else "<stream>"
    if isinstance(content, bytes):
        return _text(content, name), name
    if not isinstance(content, str):
        raise ConfigError(f"{name}: expected text or bytes, got {type(content).__name__}")
    return content, name


def _read_file(path: str) -> bytes:
    try:
        with open(path, "rb") as handle:
            return handle.read()
    except OSError as exc:
        raise ConfigFileError(
            f"{path}: cannot read the config file ({exc.strerror or exc})",
            errno=exc.errno,
            filename=path,
        ) from exc


def _text(content: bytes, name: str) -> str:
    try:
        return content.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{name}: not UTF-8 text (byte {exc.start})") from None


def load_yaml(source: Source, *, env: Mapping[str, str]) -> tuple[object, Origin]:
    """Parse one YAML document into plain data and its `Origin` (source, lines).

    Raises [`ConfigError`][redisson_py.errors.ConfigError] for bad syntax (with the
    line; the offending text is not quoted, as it may hold a password), more than one
    document, an empty document, an unsupported tag, or an unresolved ``${VAR}``;
    [`ConfigFileError`][redisson_py.errors.ConfigFileError] (also an ``OSError``) when
    the file cannot be read.
    """
    text, name = _read(source)
    nodes = _compose(text, name, single=True)
    if not nodes:
        raise ConfigError(
            f"{name}: the document is empty; expected a mapping with one server section"
        )
    return _convert(nodes[0], name, env)


def load_yaml_all(source: Source, *, env: Mapping[str, str]) -> list[tuple[object, Origin]]:
    """Like `load_yaml` for a stream of ``---``-separated documents (one per entry).

    Lines stay those of the whole stream. Empty documents are skipped.
    """
    text, name = _read(source)
    return [_convert(node, name, env) for node in _compose(text, name, single=False)]


def _check_depth(text: str, name: str) -> None:
    """Refuse nesting deeper than ``_MAX_DEPTH`` (and text longer than ``_MAX_CHARS``)
    before composing: PyYAML's composer recurses once per level, so 5,000 ``[`` would end
    in a RecursionError, and its scanner is quadratic in the flow depth (0.26 s for 5,000
    ``[``). The events come from libyaml when it is there (linear, stops at the first
    level too deep); its syntax errors are left to the composer, which words them. The
    libyaml that PyYAML 6.0.4 bundles refuses more than 1,000 levels itself, while it
    scans ahead, before the events that would show the depth: that refusal is one too."""
    if len(text) > _MAX_CHARS:
        raise ConfigError(f"{name}: the document is larger than {_MAX_CHARS} characters")
    depth = 0
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    try:
        for event in yaml.parse(text, Loader=loader):
            if isinstance(event, yaml.CollectionStartEvent):
                depth += 1
                if depth > _MAX_DEPTH:
                    _too_deep(name, event.start_mark)
            elif isinstance(event, yaml.CollectionEndEvent):
                depth -= 1
    except yaml.MarkedYAMLError as exc:
        if "nesting depth" in (exc.problem or ""):  # libyaml's own limit, far past ours
            _too_deep(name, exc.problem_mark)
    except yaml.YAMLError:
        return


def _too_deep(name: str, mark: Any) -> NoReturn:
    """Raise [`ConfigError`][redisson_py.errors.ConfigError] for nesting past
    ``_MAX_DEPTH`` at ``mark`` (a PyYAML or libyaml mark, or None)."""
    line = mark.line + 1 if mark is not None else None
    where = f"{name}, line {line}" if line else name
    raise ConfigError(f"{where}: nested more than {_MAX_DEPTH} levels deep", line=line)


def _compose(text: str, name: str, *, single: bool) -> list[Node]:
    try:
        _check_depth(text, name)
        if single:
            node = yaml.compose(text, Loader=yaml.SafeLoader)
            return [] if node is None else [node]
        return list(yaml.compose_all(text, Loader=yaml.SafeLoader))
    except yaml.MarkedYAMLError as exc:
        mark, noticed = _error_mark(exc)
        line = mark.line + 1 if mark is not None else None
        where = f"{name}, line {line}" if line else name
        problem = exc.problem or exc.context or "syntax error"
        context = f" ({exc.context})" if exc.context and exc.problem else ""
        later = f"; noticed on line {noticed}" if noticed else ""
        raise ConfigError(f"{where}: invalid YAML: {problem}{context}{later}", line=line) from None
    except yaml.YAMLError as exc:
        raise ConfigError(f"{name}: invalid YAML: {type(exc).__name__}") from None
    except RecursionError:  # a last resort: _check_depth bounds what PyYAML recurses on
        raise ConfigError(f"{name}: invalid YAML: nested too deeply") from None


def _error_mark(exc: yaml.MarkedYAMLError) -> tuple[Any, int | None]:
    """The mark to name for a syntax error, and the later line where the parser noticed
    it (or None). The scanner notices an unclosed quote or a key without ``:`` only lines
    further on, and an unclosed ``[``/``{`` at the next token that does not fit: then the
    bad token starts at the context mark ("while scanning a quoted scalar", "while parsing
    a flow sequence"). A block mapping's context mark is only where the mapping began, so
    there the problem mark stays."""
    problem, context = exc.problem_mark, exc.context_mark
    scanning = isinstance(exc, yaml.scanner.ScannerError) or "flow" in (exc.context or "")
    if scanning and problem is not None and context is not None and context.line < problem.line:
        return context, problem.line + 1
    return problem or context, None


def _convert(node: Node, name: str, env: Mapping[str, str]) -> tuple[object, Origin]:
    converter = _Converter(name, env)
    data = converter.convert(node, (), 0)
    return data, Origin(name, converter.lines, converter.scalar_text, converter.from_env)


def _implicit_tag(text: str) -> str:
    """The tag PyYAML's safe resolver gives a plain scalar with this text."""
    tag = _RESOLVER.resolve(ScalarNode, text, (True, False))  # type: ignore[no-untyped-call]
    assert isinstance(tag, str)
    return tag


class _Converter:
    def __init__(self, source: str, env: Mapping[str, str]) -> None:
        self.source = source
        self.env = env
        self.lines: dict[KeyPath, int] = {}
        self.scalar_text: dict[KeyPath, str] = {}
        self.from_env: dict[KeyPath, tuple[str, ...]] = {}
        self.count = 0

    def error(self, path: KeyPath, node: Node, message: str) -> ConfigError:
        lines = {**self.lines, path: node.start_mark.line + 1}
        return Origin(self.source, lines).error(path, message)

    def convert(self, node: Node, path: KeyPath, depth: int) -> object:
        self.count += 1
        if self.count > _MAX_NODES:
            raise self.error(path, node, "the document is too large (alias expansion?)")
        if depth > _MAX_DEPTH:
            raise self.error(path[:4], node, "nested too deeply (a recursive alias?)")
        self.lines.setdefault(path, node.start_mark.line + 1)
        tag = node.tag
        java: str | None = None
        if not (tag in _SCALAR_TAGS or tag in (f"{_Y}seq", f"{_Y}map", f"{_Y}set", "!")):
            java = java_class_of(tag)
            if java is None:
                raise self.error(
                    path,
                    node,
                    f"unsupported YAML tag {display_tag(tag)}; only Redisson's Java class tags "
                    "such as !<org.redisson.config.EqualJitterDelay> are accepted",
                )
        value: object
        if isinstance(node, ScalarNode):
            value = self.scalar(node, path, typed=java is None)
        elif isinstance(node, SequenceNode):
            items: list[object] = []
            for index, item in enumerate(node.value):
                self.lines[(*path, index)] = item.start_mark.line + 1
                items.append(self.convert(item, (*path, index), depth + 1))
            value = items
        elif isinstance(node, MappingNode):
            value = self.mapping(node, path, depth)
            if tag == f"{_Y}set":
                value = list(value)
        else:  # pragma: no cover - PyYAML has only these three node kinds
            raise self.error(path, node, "unexpected YAML node")
        return TaggedValue(java, value) if java is not None else value

    def mapping(self, node: MappingNode, path: KeyPath, depth: int) -> dict[str, object]:
        # Merged mappings recurse here without convert(): count and bound them too, or a
        # self-referencing merge ("x: &a {<<: *a}") recurses for ever.
        self.count += 1
        if self.count > _MAX_NODES:
            raise self.error(path, node, "the document is too large (alias expansion?)")
        if depth > _MAX_DEPTH:
            raise self.error(path[:4], node, "nested too deeply (a recursive merge key?)")
        result: dict[str, object] = {}
        merges: list[Node] = []
        for key_node, value_node in node.value:
            if key_node.tag == _MERGE:
                merges.append(value_node)
                continue
            if not isinstance(key_node, ScalarNode):
                raise self.error(path, key_node, "mapping keys must be plain strings")
            key = key_node.value
            if key in result:
                raise self.error((*path, key), key_node, "duplicate key")
            self.lines[(*path, key)] = key_node.start_mark.line + 1
            result[key] = self.convert(value_node, (*path, key), depth + 1)
        # "<<: *defaults" merge keys: explicit keys win, then earlier merged mappings.
        for merge in merges:
            sources = merge.value if isinstance(merge, SequenceNode) else [merge]
            for source in sources:
                if not isinstance(source, MappingNode):
                    raise self.error(
                        path, source, "a merge key '<<' takes a mapping or a list of mappings"
                    )
                for key, value in self.mapping(source, path, depth + 1).items():
                    result.setdefault(key, value)
        return result

    def scalar(self, node: ScalarNode, path: KeyPath, *, typed: bool) -> object:
        text = node.value
        tag = node.tag
        if "${" in text:
            spring = _SPRING_DEFAULT.search(text)
            if spring is not None:
                # Redisson would keep the text as it is, a silent misconfiguration.
                name = spring.group(1)
                raise self.error(
                    path,
                    node,
                    f"${{{name}:...}} is Spring's default syntax, which Redisson does not "
                    f"read; Redisson and redisson-py write ${{{name}:-default}}",
                )
            names = tuple(m.group(1) for m in _ENV_VAR.finditer(text) if m.group(1))
            if names:
                self.from_env[path] = names
            substituted = self.substitute(text, node, path)
            # A plain scalar typed from its text is typed again from the substituted text.
            if node.style is None and tag == _implicit_tag(text):
                tag = _implicit_tag(substituted)
            text = substituted
        if not typed or tag in (f"{_Y}str", f"{_Y}timestamp", f"{_Y}binary", "!"):
            return text
        if tag == f"{_Y}null":
            return None
        self.scalar_text[path] = text
        kind = {f"{_Y}bool": "true or false", f"{_Y}int": "an integer"}.get(tag, "a number")
        try:
            if tag == f"{_Y}bool":
                return SafeConstructor.bool_values[text.lower()]
            if tag == f"{_Y}int":
                return _SAFE.construct_yaml_int(ScalarNode(tag, text))
            return _SAFE.construct_yaml_float(ScalarNode(tag, text))
        except (KeyError, IndexError, ValueError, OverflowError, yaml.YAMLError):
            raise self.error(path, node, f"not {kind}: {self.shown(path, text)}") from None

    def shown(self, path: KeyPath, text: str) -> str:
        """``text`` as an error may quote it: never a secret setting's value, and a
        value from ``${VAR}`` by its variable."""
        if path in self.from_env:
            return " ".join(f"${{{name}}}" for name in self.from_env[path]) + " (value not shown)"
        if secret_key(path):
            return "(value not shown)"
        text = redact_address(text) if "@" in text else text  # URL credentials
        return repr(text) if len(text) <= 40 else repr(text[:37] + "...")

    def substitute(self, text: str, node: ScalarNode, path: KeyPath) -> str:
        def replace(match: re.Match[str]) -> str:
            if match.group(0) == "$${":
                return "${"
            name, default = match.group(1), match.group(2)
            value = self.env.get(name)
            if default is not None and not value:  # the shell's ":-": unset or empty
                return default
            if value is None:
                raise self.error(
                    path,
                    node,
                    f"environment variable {name} is not set and has no default "
                    f"(write ${{{name}:-value}} to give one)",
                )
            return value

        return _ENV_VAR.sub(replace, text)


# -- writing ----------------------------------------------------------------------------------


def dump_yaml(data: Mapping[str, Any]) -> str:
    """Write ``data`` (as [`Config.to_dict`][redisson_py.config.Config.to_dict] makes
    it) the way Redisson does: block style, double-quoted strings, tagged values as
    ``!<class> {flow: mapping}``."""
    node = _node(data, flow=False)
    out = yaml.serialize(
        node, Dumper=yaml.SafeDumper, explicit_start=True, allow_unicode=True, width=1 << 16
    )
    assert isinstance(out, str)
    return out


def _key(key: str, *, flow: bool) -> ScalarNode:
    # Keys are plain like Redisson's; in flow maps ("host:port" keys) quoted like values.
    plain = not flow or _PLAIN_SAFE.fullmatch(key) is not None
    return ScalarNode(f"{_Y}str", key, style=None if plain else '"')


def _node(value: object, *, flow: bool) -> Node:
    if isinstance(value, TaggedValue):
        inner = _node(value.value, flow=True)
        if isinstance(inner, MappingNode):
            return MappingNode(value.tag, inner.value, flow_style=True)
        if isinstance(inner, SequenceNode):
            return SequenceNode(value.tag, inner.value, flow_style=True)
        assert isinstance(inner, ScalarNode)
        return ScalarNode(value.tag, inner.value, style=inner.style)
    if isinstance(value, Mapping):
        pairs = [(_key(str(k), flow=flow), _node(v, flow=flow)) for k, v in value.items()]
        return MappingNode(f"{_Y}map", pairs, flow_style=flow)
    if isinstance(value, list | tuple):
        return SequenceNode(f"{_Y}seq", [_node(v, flow=flow) for v in value], flow_style=flow)
    return _scalar(value, flow=flow)


def _scalar(value: object, *, flow: bool) -> ScalarNode:
    if isinstance(value, bool):
        return ScalarNode(f"{_Y}bool", "true" if value else "false")
    if isinstance(value, int):
        return ScalarNode(f"{_Y}int", str(value))
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError("cannot write a non-finite number")
        text = repr(value)
        if "e" in text and "." not in text.split("e")[0]:
            mantissa, exponent = text.split("e")
            text = f"{mantissa}.0e{exponent}"  # YAML 1.1 floats need a dot
        return ScalarNode(f"{_Y}float", text)
    if value is None:
        return ScalarNode(f"{_Y}null", "null")
    if isinstance(value, str):
        # Redisson double-quotes strings; short tokens such as PT1S stay plain in flow.
        plain = flow and _PLAIN_SAFE.fullmatch(value) is not None
        escaped = value.replace("${", "$${")  # read back literally, not substituted
        return ScalarNode(f"{_Y}str", escaped, style=None if plain else '"')
    raise TypeError(f"cannot write a {type(value).__name__} to YAML")

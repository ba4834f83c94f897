"""Configuration YAML parsed strictly, every error located (pure: bytes in, data out).

The daemon's configuration, a campus description and a file of pool shapes are all written by
hand, so a parse problem names the file, line and column, and a key given twice is refused
instead of YAML silently keeping the last one.
"""

from __future__ import annotations

from typing import Any

import yaml

from plugins.contract.config_checks import ConfigError


class DuplicateKeyError(yaml.constructor.ConstructorError):
    """A mapping names the same key twice (YAML would keep the last one silently)."""

    def __init__(self, key: Any, mark: yaml.Mark, first: yaml.Mark) -> None:
        super().__init__(None, None, f"duplicate key {key!r}", mark)
        self.key, self.at, self.first = key, mark, first


class StrictLoader(yaml.SafeLoader):
    """Safe YAML that refuses a key given twice in one mapping and locates every value it cannot
    construct (a date like 2024-13-45, ``!!int abc``) at its line and column."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: dict[Any, yaml.Mark] = {}
        for key_node, _ in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":
                continue  # keys merged in from an anchor may be overridden here
            key = self.construct_object(key_node, deep=deep)
            try:
                first = seen.setdefault(key, key_node.start_mark)
            except TypeError:
                continue  # unhashable: the base class says so, at its place
            if first is not key_node.start_mark:
                raise DuplicateKeyError(key, key_node.start_mark, first)
        return super().construct_mapping(node, deep)

    def construct_object(self, node: yaml.Node, deep: bool = False) -> Any:
        try:
            return super().construct_object(node, deep)
        except (ValueError, TypeError, OverflowError) as exc:
            raise yaml.constructor.ConstructorError(None, None, str(exc), node.start_mark) from None


def one_line(text: str) -> str:
    """``text`` with line breaks and other unprintable characters escaped."""
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


def _line_column(data: str | bytes, offset: int) -> tuple[int, int]:
    """1-based line and column of ``offset`` (characters of a text, bytes of bytes)."""
    before = data[:offset]
    newlines = before.count("\n") if isinstance(before, str) else before.count(b"\n")
    start = before.rfind("\n") if isinstance(before, str) else before.rfind(b"\n")
    return newlines + 1, offset - start


def parse_yaml(data: bytes, path: str) -> Any:
    """``data`` (the file ``path``) as UTF-8 YAML; every way it can fail is a ConfigError naming
    the file, and the line and column when there is one."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line, column = _line_column(data, exc.start)
        raise ConfigError(
            f"{path}:{line}:{column}: not UTF-8 text (byte 0x{data[exc.start]:02x}); "
            "save the file as UTF-8"
        ) from None
    try:
        return yaml.load(text, Loader=StrictLoader)  # a SafeLoader
    except DuplicateKeyError as exc:
        mark = exc.at
        raise ConfigError(
            f"{path}:{mark.line + 1}:{mark.column + 1}: duplicate key {one_line(repr(exc.key))} "
            f"(first at line {exc.first.line + 1}); keep one of them"
        ) from None
    except yaml.reader.ReaderError as exc:  # no mark: where is the position in the text
        line, column = _line_column(text, exc.position)
        char = f"U+{exc.character:04X}" if isinstance(exc.character, int) else "a character"
        raise ConfigError(
            f"{path}:{line}:{column}: not valid YAML (unprintable character {char}); delete it, "
            "or write it as an escape like \\x07 inside double quotes"
        ) from None
    except yaml.MarkedYAMLError as exc:
        marked = exc.problem_mark or exc.context_mark
        where = f"{path}:{marked.line + 1}:{marked.column + 1}" if marked else str(path)
        problem = one_line(exc.problem or exc.context or "syntax error")
        raise ConfigError(
            f"{where}: not valid YAML ({problem}); correct it there (quote text that YAML "
            "reads as something else)"
        ) from None
    except yaml.YAMLError as exc:
        raise ConfigError(f"{path}: not valid YAML ({one_line(str(exc))})") from None
    except RecursionError:
        raise ConfigError(
            f"{path}: not valid YAML (nested too deeply); a configuration needs a few levels"
        ) from None

"""Reading the kit's TOML files (mixes, campaign specs, platforms, profiles).

One layer for all of them: ``TomlFile`` parses a file, finds the line of
any key path, and checks values (type, range, choice, unknown keys), each
error saying the file, the line and the key, and what would be right.

tomllib gives no positions, so ``locate()`` scans the text for them: table
headers (``[a.b]``, ``[[app]]``, with spaces inside the brackets or quoted
parts), keys (bare, quoted, dotted), and the elements and keys of inline
tables and arrays, also across lines. A key path is a tuple of table keys
and array indices, ``("app", 1, "threads")`` for the second ``[[app]]``'s
``threads``, ``("platforms", 2)`` for the third element of ``platforms``
(at its own line, in an array written over several); a path not written
in the file resolves to its nearest written parent, and one whose parent is
the top-level table to the file's first line, where that table begins.
"""

import json
import math
import re
import tomllib
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, NoReturn

from ampkit.errors import AmpkitError

Key = tuple[str | int, ...]


def read_toml(path: Path) -> tuple[str, dict[str, Any]]:
    """The file's text (for line numbers in later errors) and its data."""
    try:
        text = path.read_text()
    except OSError as e:
        raise AmpkitError(f"{path}: cannot read it: {e.strerror}") from e
    try:
        return text, tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise AmpkitError(_syntax_error(path, text, str(e)), _SYNTAX_HINT) from e


_SYNTAX_HINT = "the TOML syntax: https://toml.io/en/v1.0.0"
#: Where tomllib says an error is: "<reason> (at line N, column M)" or
#: "<reason> (at end of document)".
_AT = re.compile(r"^(.*) \(at (?:line (\d+), column (\d+)|(end of document))\)$", re.DOTALL)


def _syntax_error(path: Path, text: str, message: str) -> str:
    """tomllib's message as every other error: FILE:LINE: what is wrong."""
    m = _AT.match(message)
    if m is None:
        return f"{path}: not valid TOML: {message}"
    reason, line, column, end = m.groups()
    if end:  # the last line that is not blank
        last = len(text.rstrip().splitlines()) or 1
        return f"{path}:{last}: not valid TOML: {reason} (at the end of the file)"
    return f"{path}:{line}: not valid TOML: {reason} (column {column})"


_BARE = re.compile(r"[A-Za-z0-9_-]+")
_WS = " \t"


def _key_parts(text: str, i: int) -> tuple[list[str], int]:
    """A (dotted) key starting at text[i]: its parts and the index after it."""
    parts: list[str] = []
    while True:
        while i < len(text) and text[i] in _WS:
            i += 1
        if i < len(text) and text[i] in "\"'":
            quote = text[i]
            j = i + 1
            while j < len(text) and text[j] != quote and text[j] != "\n":
                j += 2 if quote == '"' and text[j] == "\\" else 1
            raw = text[i + 1 : j]
            parts.append(_basic_string(raw) if quote == '"' else raw)
            i = j + 1
        else:
            m = _BARE.match(text, i)
            if not m:
                return parts, i
            parts.append(m.group())
            i = m.end()
        while i < len(text) and text[i] in _WS:
            i += 1
        if i < len(text) and text[i] == ".":
            i += 1
            continue
        return parts, i


def _basic_string(raw: str) -> str:
    """A double-quoted TOML key's text, its escapes (JSON's, mostly) undone."""
    try:
        value = json.loads(f'"{raw}"')
    except ValueError:
        return raw
    return value if isinstance(value, str) else raw


def locate(text: str) -> dict[Key, int]:
    """The first line (1-based) of every key path written in a TOML text."""
    found: dict[Key, int] = {}
    counts: dict[Key, int] = {}
    table: Key = ()
    line = 1
    i = 0
    n = len(text)

    def resolve(parts: list[str]) -> Key:
        """A header's path, with the current element of every array of
        tables it passes through ([app.env] is the last [[app]]'s env)."""
        path: Key = ()
        for part in parts:
            path = (*path, part)
            if path in counts:
                path = (*path, counts[path] - 1)
        return path

    def mark(path: Key, at: int) -> None:
        for k in range(1, len(path) + 1):
            found.setdefault(path[:k], at)

    def skip_string(j: int) -> int:
        """Index after the string starting at text[j], counting its newlines."""
        nonlocal line
        quote = text[j]
        triple = text.startswith(quote * 3, j)
        end = quote * 3 if triple else quote
        j += 3 if triple else 1
        while j < n and not text.startswith(end, j):
            if text[j] == "\n":
                line += 1
            j += 2 if quote == '"' and text[j] == "\\" else 1
        return j + len(end)

    def value(j: int, path: Key) -> int:
        """Scan the value at text[j] for ``path``: records inline elements and keys."""
        nonlocal line
        while j < n and text[j] in _WS:
            j += 1
        if j < n and text[j] in "[{":
            return container(j, path)
        while j < n and text[j] not in "\n#,]}":
            if text[j] in "\"'":
                j = skip_string(j)
            else:
                j += 1
        return j

    def container(j: int, path: Key) -> int:
        nonlocal line
        is_array = text[j] == "["
        j += 1
        index = 0
        while j < n:
            c = text[j]
            if c == "\n":
                line += 1
                j += 1
            elif c in _WS or c == ",":
                j += 1
            elif c == "#":
                while j < n and text[j] != "\n":
                    j += 1
            elif c in "]}":
                return j + 1
            elif is_array:
                mark((*path, index), line)
                j = value(j, (*path, index))
                index += 1
            else:  # a key of an inline table
                parts, j = _key_parts(text, j)
                if not parts:
                    j += 1
                    continue
                mark((*path, *parts), line)
                while j < n and text[j] in _WS:
                    j += 1
                if j < n and text[j] == "=":
                    j = value(j + 1, (*path, *parts))
        return j

    while i < n:
        end = text.find("\n", i)
        end = n if end < 0 else end
        stripped = text[i:end].lstrip(_WS)
        start = end - len(stripped) if end > i else i
        if stripped.startswith("[["):
            parts, _ = _key_parts(text, start + 2)
            base: Key = (*resolve(parts[:-1]), *parts[-1:])
            index = counts.get(base, 0)
            counts[base] = index + 1
            table = (*base, index)
            mark(table, line)
            i = end
        elif stripped.startswith("["):
            parts, _ = _key_parts(text, start + 1)
            table = resolve(parts)
            mark(table, line)
            i = end
        elif stripped and stripped[0] not in "#":
            parts, j = _key_parts(text, start)
            while j < n and text[j] in _WS:
                j += 1
            if parts and j < n and text[j] == "=":
                path = (*table, *parts)
                mark(path, line)
                i = value(j + 1, path)
                nl = text.find("\n", i)
                i = n if nl < 0 else nl
            else:
                i = end
        else:
            i = end
        if i < n and text[i] == "\n":
            line += 1
            i += 1
    return found


def show(path: Key) -> tuple[str, str]:
    """A key path as errors show it: the element of the innermost array of
    tables as a scope ("app 2: ", 1-based), and the key in it, dotted."""
    scope, rest = "", path
    indices = [i for i, part in enumerate(path) if isinstance(part, int)]
    if indices:
        last = indices[-1]
        name = ".".join(str(p) for p in path[:last] if not isinstance(p, int))
        scope, rest = f"{name} {int(path[last]) + 1}: ", path[last + 1 :]
    return scope, ".".join(str(p) for p in rest)


#: How errors name a value's TOML type (bool before int: True is an int).
_KINDS: tuple[tuple[type, str], ...] = (
    (bool, "a boolean"),
    (int, "an integer"),
    (float, "a number"),
    (str, "a string"),
    (dict, "a table"),
    (list, "an array"),
)


def _kind(value: Any) -> str:
    return next((name for t, name in _KINDS if isinstance(value, t)), type(value).__name__)


class TomlFile:
    """A parsed TOML file that reports errors with file, line and key."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.text, self.data = read_toml(path)
        self._lines: dict[Key, int] | None = None

    def line(self, key: Key) -> int:
        """The line of ``key``, or of its nearest parent written in the file;
        1, where the top-level table begins, for a top-level key that is not
        written (a required key that is absent)."""
        if self._lines is None:
            self._lines = locate(self.text)
        for k in range(len(key), 0, -1):
            if key[:k] in self._lines:
                return self._lines[key[:k]]
        return 1

    def fail(self, key: Key, msg: str, hint: str | None = None) -> NoReturn:
        """Raise the error: file:line: [array element: ]'key' msg."""
        where = f"{self.path}:{self.line(key)}"
        scope, name = show(key)
        raise AmpkitError(
            f"{where}: {scope}'{name}' {msg}" if name else f"{where}: {scope}{msg}", hint
        )

    # --- checks -----------------------------------------------------------

    def require(self, key: Key, hint: str | None = None) -> Any:
        """The value at ``key``; an error, at the line of the table it
        belongs in, when the file does not have it."""
        value = self.get(key)
        if value is None:
            self.fail(key, "is required but absent", hint)
        return value

    def get(self, key: Key) -> Any:
        """The value at ``key``, or None if absent."""
        value: Any = self.data
        for part in key:
            if isinstance(part, int):
                if not isinstance(value, list) or part >= len(value):
                    return None
                value = value[part]
            else:
                if not isinstance(value, dict) or part not in value:
                    return None
                value = value[part]
        return value

    def only_keys(self, key: Key, allowed: Iterable[str], what: str = "a key") -> dict[str, Any]:
        """The table at ``key`` (empty if absent), with no key but ``allowed``."""
        table = self.get(key)
        if table is None:
            return {}
        if not isinstance(table, dict):
            self.fail(key, f"must be a table, not {_kind(table)}")
        valid = sorted(allowed)
        for name in table:
            if name not in valid:
                self.fail((*key, name), f"is not {what}", hint=f"valid keys: {', '.join(valid)}")
        return table

    def tables(self, key: Key, *, required: bool = True) -> list[dict[str, Any]]:
        """The array of tables at ``key`` ([[name]] or an array of inline tables)."""
        value = self.get(key)
        if value is None and not required:
            return []
        name = str(key[-1])
        if not isinstance(value, list) or not value:
            self.fail(key, f"must be a non-empty array of tables ([[{name}]])")
        for i, item in enumerate(value):
            if not isinstance(item, dict):
                self.fail(
                    (*key, i),
                    f"must be a table ([[{name}]] with keys), not {_kind(item)} {item!r}",
                )
        return value

    def string(
        self,
        key: Key,
        *,
        choices: Sequence[str] | None = None,
        default: str | None = None,
    ) -> str:
        value = self.get(key)
        if value is None and default is not None:
            return default
        if not isinstance(value, str):
            self.fail(key, f"must be a string, not {_describe(value)}")
        if choices is not None and value not in choices:
            self.fail(key, f"must be one of {', '.join(choices)}, not {value!r}")
        return value

    def integer(
        self, key: Key, *, low: int, high: int | None = None, default: int | None = None
    ) -> int:
        value = self.get(key)
        if value is None and default is not None:
            return default
        if not isinstance(value, int) or isinstance(value, bool):
            self.fail(key, f"must be an integer{_range(low, high)}, not {_describe(value)}")
        if value < low or (high is not None and value > high):
            self.fail(key, f"must be an integer{_range(low, high)}, not {value}")
        return value

    def number(
        self, key: Key, *, low: float, high: float | None = None, default: float | None = None
    ) -> float:
        value = self.get(key)
        if value is None and default is not None:
            return default
        if (
            not isinstance(value, int | float)
            or isinstance(value, bool)
            or not math.isfinite(value)
        ):
            self.fail(key, f"must be a number{_range(low, high)}, not {_describe(value)}")
        if value < low or (high is not None and value > high):
            self.fail(key, f"must be a number{_range(low, high)}, not {value}")
        return float(value)

    def strings(
        self, key: Key, *, default: list[str] | None = None, non_empty: bool = False
    ) -> list[str]:
        """An array of strings; with ``non_empty``, at least one, none empty."""
        value = self.get(key)
        if value is None and default is not None:
            return default
        if (
            not isinstance(value, list)
            or not all(isinstance(v, str) for v in value)
            or (non_empty and not (value and all(value)))
        ):
            what = "a non-empty list of strings" if non_empty else "an array of strings"
            self.fail(key, f"must be {what}, not {_describe(value)}")
        return value


def _describe(value: Any) -> str:
    return "nothing (it is missing)" if value is None else f"{_kind(value)} {value!r}"


def _range(low: float, high: float | None) -> str:
    return f" from {low} to {high}" if high is not None else f" of at least {low}"


def provenance_lines(provenance: Iterable[tuple[str, str]]) -> list[str]:
    """A ``[provenance]`` table of strings (what measured or trained a file),
    after a blank line; nothing when there is none."""
    lines = [f"{key} = {json.dumps(value)}" for key, value in provenance]
    return ["", "[provenance]", *lines] if lines else []

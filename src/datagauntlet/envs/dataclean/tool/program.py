"""The cleaning program: a JSON list of whitelisted operations, validated deny-by-default.

Nothing outside the whitelist can run: an operation is data (a name and literal arguments),
never code. Validation checks sizes before it looks at contents, so a hostile program costs
the same small bounded time however large it is, and every error names the operation by its
index and says why.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from datagauntlet.core.call_text import loads_strict

MAX_OPERATIONS = 40
MAX_COLUMNS_PER_OP = 64
MAX_MAP_ENTRIES = 500
MAX_TOKENS = 50
MAX_DEDUPE_KEYS = 4
MAX_TEXT = 200  # characters in one map key, map value or missing token
MAX_NAME = 64  # characters in a column or operation name
MAX_PROGRAM_BYTES = 1_000_000  # JSON text of a whole program (CLI files, string arguments)

COLUMN_OPS = ("strip", "lower", "upper", "phone_us", "date_us", "date_eu", "decimal2", "integer")
OPS = (*COLUMN_OPS[:3], "map", "replace_missing", *COLUMN_OPS[3:], "dedupe")
FIELDS: dict[str, tuple[str, ...]] = {
    **{op: ("op", "columns") for op in COLUMN_OPS},
    "map": ("op", "column", "mapping"),
    "replace_missing": ("op", "columns", "tokens"),
    "dedupe": ("op", "keys"),
}
# Characters that only make sense in a pattern. Map keys and tokens match whole cell values
# literally, so a wildcard would silently match nothing; it is refused instead.
_PATTERN_CHARS = frozenset("*\\^|[]{}?")
_PATTERN_PIECES = (".+", ".*", "(?")
_INVISIBLE = frozenset(("Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"))


class ProgramError(ValueError):
    """Why a program is invalid; the message names the operation and the rule it broke."""


@dataclass(frozen=True)
class Schema:
    """What a program may touch: the table's columns, the protected ones, the dedupe keys."""

    columns: tuple[str, ...]
    protected: frozenset[str]
    dedupe_keys: tuple[str, ...]


@dataclass(frozen=True)
class Operation:
    op: str
    columns: tuple[str, ...] = ()
    mapping: Mapping[str, str | None] | None = None
    tokens: frozenset[str] = frozenset()
    keys: tuple[str, ...] = ()

    def as_dict(self) -> dict[str, Any]:
        if self.op == "map":
            return {"op": "map", "column": self.columns[0], "mapping": dict(self.mapping or {})}
        if self.op == "replace_missing":
            return {"op": self.op, "columns": list(self.columns), "tokens": sorted(self.tokens)}
        if self.op == "dedupe":
            return {"op": self.op, "keys": list(self.keys)}
        return {"op": self.op, "columns": list(self.columns)}


def kind_of(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, (list, tuple)):
        return "array"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__


def shown(text: str, limit: int = 40) -> str:
    """A short, ASCII-escaped rendering, so invisible or look-alike characters are visible."""
    cut = text if len(text) <= limit else text[:limit] + "..."
    return ascii(cut)


def _text_problem(value: Any, what: str, limit: int, literal: bool) -> str | None:
    if not isinstance(value, str):
        return f"{what} must be a string, got {kind_of(value)}"
    if len(value) > limit:
        return f"{what} is {len(value)} characters long; at most {limit}"
    for ch in value:
        if unicodedata.category(ch) in _INVISIBLE:
            code = f"U+{ord(ch):04X}"
            return f"{what} {shown(value)} contains the invisible or control character {code}"
    if literal and (
        any(ch in _PATTERN_CHARS for ch in value) or any(p in value for p in _PATTERN_PIECES)
    ):
        return (
            f"{what} {shown(value)} looks like a pattern; values match whole cells literally, "
            "so wildcards are not allowed"
        )
    return None


class _Checker:
    def __init__(self, schema: Schema) -> None:
        self.schema = schema
        self.known = frozenset(schema.columns)

    def column(self, value: Any, what: str) -> str:
        problem = _text_problem(value, what, MAX_NAME, literal=False)
        if problem:
            raise ProgramError(problem)
        if value not in self.known:
            raise ProgramError(
                f"{what}: unknown column {shown(value)}; columns: {', '.join(self.schema.columns)}"
            )
        if value in self.schema.protected:
            raise ProgramError(f"{what}: column {value!r} is protected and cannot be changed")
        return value

    def columns(self, value: Any) -> tuple[str, ...]:
        if not isinstance(value, list):
            raise ProgramError(f"columns must be an array of column names, got {kind_of(value)}")
        if not 1 <= len(value) <= MAX_COLUMNS_PER_OP:
            raise ProgramError(
                f"columns must list 1 to {MAX_COLUMNS_PER_OP} names, got {len(value)}"
            )
        out = [self.column(v, f"columns[{i}]") for i, v in enumerate(value)]
        if len(set(out)) != len(out):
            raise ProgramError("columns lists a column twice")
        return tuple(out)

    def mapping(self, value: Any) -> dict[str, str | None]:
        if not isinstance(value, dict):
            raise ProgramError(f"mapping must be an object of value -> value, got {kind_of(value)}")
        if not 1 <= len(value) <= MAX_MAP_ENTRIES:
            raise ProgramError(
                f"mapping must have 1 to {MAX_MAP_ENTRIES} entries, got {len(value)}"
            )
        out: dict[str, str | None] = {}
        for key, target in value.items():
            problem = _text_problem(key, "a mapping key", MAX_TEXT, literal=True)
            if problem:
                raise ProgramError(problem)
            if target is not None:
                problem = _text_problem(target, f"mapping[{shown(key)}]", MAX_TEXT, literal=True)
                if problem:
                    raise ProgramError(problem + " (or null for missing)")
            out[key] = target
        return out

    def tokens(self, value: Any) -> frozenset[str]:
        if not isinstance(value, list):
            raise ProgramError(f"tokens must be an array of strings, got {kind_of(value)}")
        if not 1 <= len(value) <= MAX_TOKENS:
            raise ProgramError(f"tokens must list 1 to {MAX_TOKENS} strings, got {len(value)}")
        for i, token in enumerate(value):
            problem = _text_problem(token, f"tokens[{i}]", MAX_TEXT, literal=True)
            if problem:
                raise ProgramError(problem)
        return frozenset(value)

    def keys(self, value: Any) -> tuple[str, ...]:
        if not isinstance(value, list):
            raise ProgramError(f"keys must be an array of column names, got {kind_of(value)}")
        if not 1 <= len(value) <= MAX_DEDUPE_KEYS:
            raise ProgramError(f"keys must list 1 to {MAX_DEDUPE_KEYS} columns, got {len(value)}")
        out = []
        for i, key in enumerate(value):
            problem = _text_problem(key, f"keys[{i}]", MAX_NAME, literal=False)
            if problem:
                raise ProgramError(problem)
            if key not in self.schema.dedupe_keys:
                raise ProgramError(
                    f"keys[{i}]: {shown(key)} is not a supported dedupe key; "
                    f"supported: {', '.join(self.schema.dedupe_keys) or 'none'}"
                )
            out.append(key)
        if len(set(out)) != len(out):
            raise ProgramError("keys lists a column twice")
        return tuple(out)

    def operation(self, raw: Any) -> Operation:
        if not isinstance(raw, dict):
            raise ProgramError(
                f'must be an object like {{"op": "strip", "columns": [...]}}, got {kind_of(raw)}'
            )
        if "op" not in raw:
            raise ProgramError('has no "op" field')
        name = raw["op"]
        problem = _text_problem(name, '"op"', MAX_NAME, literal=False)
        if problem:
            raise ProgramError(problem)
        if name not in FIELDS:
            raise ProgramError(f"unknown operation {shown(name)}; allowed: {', '.join(OPS)}")
        allowed = FIELDS[name]
        for key in raw:
            if key not in allowed:
                what = shown(key) if isinstance(key, str) else kind_of(key)
                raise ProgramError(f"unexpected field {what}; {name} takes {', '.join(allowed)}")
        for key in allowed:
            if key not in raw:
                raise ProgramError(f"missing field {key!r}; {name} takes {', '.join(allowed)}")
        if name == "map":
            return Operation(
                name, (self.column(raw["column"], "column"),), self.mapping(raw["mapping"])
            )
        if name == "replace_missing":
            return Operation(name, self.columns(raw["columns"]), tokens=self.tokens(raw["tokens"]))
        if name == "dedupe":
            return Operation(name, keys=self.keys(raw["keys"]))
        return Operation(name, self.columns(raw["columns"]))


def validate_program(raw: Any, schema: Schema) -> list[Operation]:
    """The operations of a valid program, or ProgramError saying which operation and why."""
    if not isinstance(raw, list):
        raise ProgramError(f"the program must be an array of operations, got {kind_of(raw)}")
    if len(raw) > MAX_OPERATIONS:
        raise ProgramError(
            f"the program has {len(raw)} operations; at most {MAX_OPERATIONS} are allowed"
        )
    checker = _Checker(schema)
    out = []
    for i, item in enumerate(raw):
        label = f"operations[{i}]"
        name = item.get("op") if isinstance(item, dict) else None
        if isinstance(name, str) and name.isascii() and name.isidentifier() and len(name) <= 20:
            label += f" ({name})"
        try:
            out.append(checker.operation(item))
        except ProgramError as exc:
            raise ProgramError(f"{label}: {exc}") from None
    return out


def parse_program_text(text: str) -> Any:
    """Parse a program's JSON text strictly: a bare array or {"operations": [...]}.

    Duplicate keys, NaN, Infinity and nesting too deep for the parser are errors, not
    surprises; the returned value still has to pass `validate_program`.
    """
    if len(text) > MAX_PROGRAM_BYTES:
        raise ProgramError(
            f"the program is {len(text)} characters of JSON; at most {MAX_PROGRAM_BYTES}"
        )
    try:
        value = loads_strict(text)
    except ValueError as exc:
        raise ProgramError(f"the program is not valid JSON: {exc}") from None
    if isinstance(value, dict):
        extra = sorted(k for k in value if k != "operations")
        if extra or "operations" not in value:
            raise ProgramError(
                'a program object must have exactly one field, "operations"'
                + (f"; unexpected {shown(extra[0])}" if extra else "")
            )
        value = value["operations"]
    return value

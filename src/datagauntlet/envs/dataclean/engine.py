"""Run a validated program on a table. Column-oriented and memoised, so it stays fast at scale.

A cell is a string or None (missing). Every operation is a pure function of the cell, except
dedupe, which drops whole rows. A cell an operation does not understand is left unchanged:
the operations repair what they recognise and never guess.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation
from operator import ne

from datagauntlet.envs.dataclean.program import Operation

Cell = str | None
CellFn = Callable[[str], Cell]


@dataclass
class Table:
    """Columns in order and one list of cells per column, all the same length."""

    columns: tuple[str, ...]
    data: dict[str, list[Cell]]

    @classmethod
    def from_rows(cls, columns: Sequence[str], rows: Sequence[Sequence[Cell]]) -> Table:
        cols = tuple(columns)
        return cls(cols, {c: [r[i] for r in rows] for i, c in enumerate(cols)})

    @classmethod
    def from_records(cls, columns: Sequence[str], records: Sequence[dict[str, Cell]]) -> Table:
        cols = tuple(columns)
        return cls(cols, {c: [r.get(c) for r in records] for c in cols})

    def __len__(self) -> int:
        return len(self.data[self.columns[0]]) if self.columns else 0

    def copy(self) -> Table:
        return Table(self.columns, {c: list(v) for c, v in self.data.items()})

    def rows(self, start: int = 0, stop: int | None = None) -> list[list[Cell]]:
        cols = [self.data[c][start:stop] for c in self.columns]
        return [list(r) for r in zip(*cols, strict=True)]

    def records(self, start: int = 0, stop: int | None = None) -> list[dict[str, Cell]]:
        return [dict(zip(self.columns, r, strict=True)) for r in self.rows(start, stop)]


# --- cell functions --------------------------------------------------------------------------
_DIGITS = re.compile(r"\D+")
_DATE = re.compile(r"(\d{1,2})([/.-])(\d{1,2})\2(\d{4})")
_ISO = re.compile(r"\d{4}-\d{2}-\d{2}")
_PLAIN_NUMBER = re.compile(r"\+?(\d+(\.\d*)?|\.\d+)")
_CANONICAL_MONEY = re.compile(r"-?\d+\.\d\d")
_PHONE_CHARS = frozenset("0123456789 +-().\t")
_CURRENCY = re.compile(r"^(USD|EUR|GBP|CAD|US\$|[$€£])\s*|\s*(USD|EUR|GBP|CAD|[$€£])$")
_THOUSANDS = re.compile(r"^\+?\d{1,3}(,\d{3})+(\.\d*)?$")


def phone_us(value: str) -> Cell:
    if not _PHONE_CHARS.issuperset(value):
        return value  # letters or other symbols: not a bare phone number
    digits = _DIGITS.sub("", value)
    if len(digits) == 11 and digits[0] == "1":
        digits = digits[1:]
    if len(digits) != 10:
        return value
    return f"{digits[:3]}-{digits[3:6]}-{digits[6:]}"


def _date(value: str, month_first: bool) -> Cell:
    if len(value) == 10 and value[4] == "-":
        return value  # already ISO (or not a date in either convention)
    text = value.strip()
    m = _DATE.fullmatch(text)
    if m is None:
        return value
    a, b, year = int(m.group(1)), int(m.group(3)), int(m.group(4))
    month, day = (a, b) if month_first else (b, a)
    try:
        return dt.date(year, month, day).isoformat()
    except ValueError:
        return value  # not a real date in this convention: leave it for a human


def date_us(value: str) -> Cell:
    return _date(value, month_first=True)


def date_eu(value: str) -> Cell:
    return _date(value, month_first=False)


def _number_text(value: str) -> tuple[bool, str] | None:
    """(negative, digits) of a money-like or count-like text, or None if it is not one."""
    text = value.strip()
    negative = False
    if text.startswith("(") and text.endswith(")"):
        negative, text = True, text[1:-1].strip()
    if text.startswith("-"):
        negative, text = not negative, text[1:].strip()
    text = _CURRENCY.sub("", text).strip()
    if text.startswith("-") and not negative:
        negative, text = True, text[1:].strip()
    if _THOUSANDS.match(text):
        text = text.replace(",", "")
    if not _PLAIN_NUMBER.fullmatch(text):
        return None
    return negative, text


def decimal2(value: str) -> Cell:
    if _CANONICAL_MONEY.fullmatch(value) and value != "-0.00":
        return value
    parsed = _number_text(value)
    if parsed is None:
        return value
    negative, text = parsed
    try:
        amount = Decimal(text).quantize(Decimal("0.01"), rounding=ROUND_HALF_UP)
    except InvalidOperation:
        return value
    if negative:
        amount = -amount
    if amount == 0:
        amount = abs(amount)  # no negative zero
    return f"{amount:.2f}"


def integer(value: str) -> Cell:
    text = value.strip()
    if any(ch in text for ch in "$€£()") or any(c.isalpha() for c in text):
        return value  # money or words are not counts
    parsed = _number_text(text)
    if parsed is None:
        return value
    negative, digits = parsed
    try:
        number = Decimal(digits)
    except InvalidOperation:
        return value
    if number != number.to_integral_value():
        return value  # a real fraction: not a whole number, leave it
    whole = int(number)
    return str(-whole if negative and whole else whole)


# Case and whitespace: plain str methods, mapped in C when the column has no missing cells.
STR_METHODS: dict[str, Callable[[str], str]] = {
    "strip": str.strip,
    "lower": str.lower,
    "upper": str.upper,
}
CELL_FUNCTIONS: dict[str, CellFn] = {
    **STR_METHODS,
    "phone_us": phone_us,
    "date_us": date_us,
    "date_eu": date_eu,
    "decimal2": decimal2,
    "integer": integer,
}


def _apply_method(values: list[Cell], method: Callable[[str], str]) -> list[Cell]:
    try:
        return list(map(method, values))  # type: ignore[arg-type]
    except TypeError:  # some cells are missing
        return [None if v is None else method(v) for v in values]


def _apply_cells(values: list[Cell], fn: CellFn) -> list[Cell]:
    # Each distinct value is computed once: real columns repeat a lot (dates, codes, statuses).
    distinct = dict.fromkeys(values)
    distinct.pop(None, None)
    table: dict[Cell, Cell] = dict(zip(distinct, map(fn, distinct), strict=True))  # type: ignore[arg-type]
    table[None] = None
    return list(map(table.__getitem__, values))


def _changed(old: list[Cell], new: list[Cell]) -> int:
    return sum(map(ne, old, new))


@dataclass(frozen=True)
class OpReport:
    index: int
    op: str
    cells_changed: int
    rows_removed: int = 0

    def as_dict(self) -> dict[str, int | str]:
        out: dict[str, int | str] = {"index": self.index, "op": self.op}
        out["cells_changed"] = self.cells_changed
        if self.op == "dedupe":
            out["rows_removed"] = self.rows_removed
        return out


def _dedupe(table: Table, keys: tuple[str, ...]) -> int:
    seen: set[object] = set()
    keep: list[int] = []
    if len(keys) == 1:
        key_values: list[object] = list(table.data[keys[0]])
    else:
        key_values = list(zip(*(table.data[k] for k in keys), strict=True))
    for i, key in enumerate(key_values):
        # A row without a key is never anybody's duplicate.
        if key is None or (isinstance(key, tuple) and None in key):
            keep.append(i)
        elif key not in seen:
            seen.add(key)
            keep.append(i)
    removed = len(table) - len(keep)
    if removed:
        for c in table.columns:
            col = table.data[c]
            table.data[c] = [col[i] for i in keep]
    return removed


def run_program(table: Table, program: Sequence[Operation]) -> tuple[Table, list[OpReport]]:
    """Apply the operations in order to a copy of `table`; report what each one changed."""
    out = table.copy()
    reports = []
    for i, op in enumerate(program):
        if op.op == "dedupe":
            reports.append(OpReport(i, op.op, 0, _dedupe(out, op.keys)))
            continue
        changed = 0
        for column in op.columns:
            old = out.data[column]
            if op.op == "map":
                mapping = op.mapping or {}
                new = [mapping.get(v, v) if v is not None else None for v in old]
            elif op.op == "replace_missing":
                tokens = op.tokens
                new = [None if v in tokens else v for v in old]
            elif op.op in STR_METHODS:
                new = _apply_method(old, STR_METHODS[op.op])
            else:
                new = _apply_cells(old, CELL_FUNCTIONS[op.op])
            changed += _changed(old, new)
            out.data[column] = new
        reports.append(OpReport(i, op.op, changed))
    return out, reports

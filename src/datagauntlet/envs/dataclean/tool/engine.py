"""Run a validated program on a table. Column-oriented and memoised, so it stays fast at scale.

A cell is a string or None (missing). Every operation is a pure function of the cell, except
dedupe, which drops whole rows. A cell an operation does not understand is left unchanged:
the operations repair what they recognise and never guess.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal
from operator import ne

from datagauntlet.envs.dataclean.tool.program import Operation

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
# Each is a pure str -> str function that returns its input unchanged when it does not
# recognise it; the common already-clean shapes are checked first, since they are most cells.
_PHONE_PUNCTUATION = str.maketrans("", "", " +-().\t")
_CANONICAL_PHONE = re.compile(r"\d{3}-\d{3}-\d{4}")
_DATE = re.compile(r"(\d{1,2})([/.-])(\d{1,2})\2(\d{4})")
_DAYS_IN_MONTH = (0, 31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)
_CANONICAL_MONEY = re.compile(r"-?\d+\.\d\d")
_CANONICAL_INT = re.compile(r"-?[1-9]\d*|0")
# Possessive quantifiers (*+, ++) never backtrack, so a hostile cell costs linear time.
_CODE = r"(?:USD|EUR|GBP|CAD|US\$|[$€£])"
_MONEY = re.compile(
    rf"(?P<open>\()?\s*+(?P<neg>-)?\s*+{_CODE}?\s*+(?P<neg2>-)?\s*+\+?"
    r"(?P<int>\d{1,3}(?:,\d{3})++|\d*+)(?:\.(?P<frac>\d*+))?"
    rf"\s*+{_CODE}?\s*+(?P<close>\))?"
)
_COUNT = re.compile(r"(?P<sign>[-+])?(?P<int>\d{1,3}(?:,\d{3})++|\d++)(?:\.(?P<frac>0*+))?")
MAX_CELL = 64  # longer cells are not amounts, counts, dates or phone numbers: left alone
MAX_DIGITS = 18  # longer numbers are not amounts or counts this engine should rewrite


def phone_us(value: str) -> Cell:
    if len(value) > MAX_CELL or _CANONICAL_PHONE.fullmatch(value):
        return value
    digits = value.translate(_PHONE_PUNCTUATION)
    if not (digits.isascii() and digits.isdigit()):
        return value  # letters or other symbols: not a bare phone number
    if len(digits) == 11 and digits[0] == "1":
        digits = digits[1:]
    if len(digits) != 10:
        return value
    return f"{digits[:3]}-{digits[3:6]}-{digits[6:]}"


def _date(value: str, month_first: bool) -> Cell:
    m = _DATE.fullmatch(value.strip()) if len(value) <= MAX_CELL else None
    if m is None:
        return value  # ISO already, or not a date in either convention
    a, b, year = int(m.group(1)), int(m.group(3)), int(m.group(4))
    month, day = (a, b) if month_first else (b, a)
    if not (1 <= month <= 12 and 1 <= day <= _DAYS_IN_MONTH[month]) or year < 1:
        return value  # not a real date in this convention: leave it for a human
    if month == 2 and day == 29 and not (year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)):
        return value
    return f"{year:04d}-{month:02d}-{day:02d}"


def date_us(value: str) -> Cell:
    return _date(value, month_first=True)


def date_eu(value: str) -> Cell:
    return _date(value, month_first=False)


def decimal2(value: str) -> Cell:
    if len(value) > MAX_CELL or (_CANONICAL_MONEY.fullmatch(value) and value != "-0.00"):
        return value
    m = _MONEY.fullmatch(value.strip())
    if m is None or (m["open"] is None) != (m["close"] is None):
        return value
    int_part, frac = m["int"].replace(",", ""), m["frac"] or ""
    signs = (m["open"] is not None) + (m["neg"] is not None) + (m["neg2"] is not None)
    if not (int_part or frac) or signs > 1 or len(int_part) > MAX_DIGITS:
        return value
    if len(frac) <= 2:
        text = f"{int(int_part or '0')}.{(frac + '00')[:2]}"
    else:
        rounded = Decimal(f"{int_part or '0'}.{frac}").quantize(Decimal("0.01"), ROUND_HALF_UP)
        text = f"{rounded:.2f}"
    return text if signs == 0 or text == "0.00" else "-" + text


def integer(value: str) -> Cell:
    if len(value) > MAX_CELL or _CANONICAL_INT.fullmatch(value):
        return value
    m = _COUNT.fullmatch(value.strip())
    if m is None:
        return value  # money, words or a real fraction: not a whole number
    digits = m["int"].replace(",", "")
    if len(digits) > MAX_DIGITS:
        return value
    whole = int(digits)
    return str(-whole if m["sign"] == "-" and whole else whole)


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
    n = len(table)
    if len(keys) == 1:
        key_values: list[object] = list(table.data[keys[0]])
    else:
        key_values = list(zip(*(table.data[k] for k in keys), strict=True))
    # Walking backwards, each key ends up holding its first row.
    first = dict(zip(reversed(key_values), range(n - 1, -1, -1), strict=True))
    keep = set(first.values())
    # A row without a key is never anybody's duplicate.
    keep.update(
        i for i, k in enumerate(key_values) if k is None or (type(k) is tuple and None in k)
    )
    removed = n - len(keep)
    if removed:
        rows = sorted(keep)
        for c in table.columns:
            col = table.data[c]
            table.data[c] = [col[i] for i in rows]
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

"""Whole columns at once: the generator's per-cell draws, batched, with the same bytes out.

A table of 100,000 rows is 1.6 million cells, so the per-cell work is the cost. Each column
hashes all its rows in one loop (the (seed, label, column) prefix fed once, each row's index
bytes made once for every column), and splits each hash with plain `%` and `//` when no draw
of that column can ever need a further hash (`refills_possible`). Any column that could, or
whose kind or parameters this file does not specialise, goes cell by cell through the
generator's reference definitions (`clean_cell`, `corrupt_cell`). `tests/dataclean/
test_dataclean_columns.py` holds every fast path equal to the reference.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from datagauntlet.core.seeding import HashPrefix, feed_bytes, hash64_ints_fed
from datagauntlet.envs.dataclean.tool.engine import Cell
from datagauntlet.envs.dataclean.world import families as fam
from datagauntlet.envs.dataclean.world.cells import (
    CORRUPTION_RATE,
    MAX_DAY,
    MISSING_WRITTEN_RATE,
    PAD_RATE,
    TASK_ALIAS_RATE,
    WHITESPACE,
    CellMaker,
    _fold,
    refills_possible,
)
from datagauntlet.envs.dataclean.world.families import Column


def _threshold(p: float) -> int:
    return round(p * 1000)  # what CellRng.chance compares below(1000) against


def _money(cents: int) -> str:
    """f"{Decimal(cents) / 100:.2f}" for a non-zero whole number of cents, without Decimal."""
    sign, cents = ("-", -cents) if cents < 0 else ("", cents)
    return f"{sign}{cents // 100}.{cents % 100:02d}"


def _refills_along(radices: list[int], room: int) -> list[int]:
    """The draws (positions) on this one path that CellRng makes from a further hash."""
    out = []
    for k, n in enumerate(radices):
        if room < n << 24:
            out.append(k)
            room = 1 << 64
        room //= n
    return out


_MORE = feed_bytes("more", 1)


def _mores(hashes: list[int]) -> list[int]:
    """Each cell's first further hash, hash64(h, "more", 1), as CellRng would take it."""
    return hash64_ints_fed(hashes, _MORE)


@dataclass(frozen=True)
class Lookup:
    """A value that depends on h % len(values) only (one pick, or draws whose radices multiply
    to that length): looked up, with no call per cell."""

    values: Sequence[str]


# (cell hash, its rest after any missing draw, row) -> value; or a lookup by the rest
ValueFn = Callable[[int, int, int], str] | Lookup


def _table(fn: Callable[[int], str], size: int) -> Lookup:
    return Lookup([fn(h) for h in range(size)])


def _value_fn(
    gen: CellMaker,
    col: Column,
    feeds: Sequence[bytes],
    hashes: Callable[[], list[int]],
    done: dict[str, list[Cell]],
    room: int,
) -> tuple[ValueFn, list[int] | None] | None:
    """The fast clean value of `col` (its draws starting with `room` left) and the largest radix
    at each draw it splits plainly (None: it never reads the hash). None sends the column
    through the reference."""
    kind = col.kind
    if kind == fam.KEY:
        token = gen.keyed.token
        return (lambda f, h, i: "r" + token("record-id", i, 12)), None
    if kind == fam.REF:
        return _ref(gen, feeds)
    if kind == fam.NOTES:
        notes = fam.NOTES_TEXT
        return Lookup(notes), [len(notes)]
    if kind == fam.NAME:
        if col.name == "product":
            products = fam.PRODUCTS
            return Lookup(products), [len(products)]
        first, last = fam.FIRST_NAMES, fam.LAST_NAMES
        nf, nl = len(first), len(last)
        return _table(lambda h: f"{first[h % nf]} {last[h // nf % nl]}", nf * nl), [nf, nl]
    if kind == fam.EMAIL:
        return _email(done.get("name")), [100, len(fam.EMAIL_DOMAINS)]
    if kind == fam.PHONE:
        return _phone(room, hashes)
    if kind == fam.CATEGORY:
        present = gen.present[col.name]
        return Lookup(present), [len(present)]
    if kind == fam.DATE:
        return _table(_iso, 8 * 12 * MAX_DAY), [8, 12, MAX_DAY]
    if kind == fam.PRINTED:
        return _table(_printed(gen.printed_month_first), 8 * 12 * MAX_DAY), [8, 12, MAX_DAY]
    if kind == fam.AMOUNT:
        return _amount(col, room, hashes)
    if kind == fam.QUANTITY:
        return _quantity(col)
    if kind == fam.CODE:
        if col.name == "currency":
            currencies = fam.CURRENCIES
            return Lookup(currencies), [len(currencies)]
        token = gen.keyed.token
        return (lambda f, h, i: "SKU-" + token("sku", i, 6).upper()), None
    if kind == fam.DIGITS:
        if col.width < 1:
            return None
        width, top = col.width, 10 ** (col.width - 1)
        if top <= 100_000:
            return _table(lambda h: f"{h:0{width}d}", top), [top]
        return (lambda f, h, i: f"{h % top:0{width}d}"), [top]
    if kind == fam.REFERENCE:
        return (lambda f, h, i: f"0{h % 10**9:09d}"), [10**9]
    if kind == fam.COUNTRY:
        countries = fam.COUNTRIES
        return Lookup(countries), [len(countries)]
    return None


def _ref(gen: CellMaker, feeds: Sequence[bytes]) -> tuple[ValueFn, list[int] | None]:
    customers: dict[int, str] = {}
    customer = gen.customer
    if gen.family.id != "orders":
        ids = gen.customers(feeds)
        return (lambda f, h, i: ids[i]), None
    pool = gen.pool

    def ref(f: int, h: int, i: int) -> str:
        who = h % pool
        out = customers.get(who)
        if out is None:
            out = customers[who] = customer(who)
        return out

    return ref, [pool]


def _phone(room: int, hashes: Callable[[], list[int]]) -> tuple[ValueFn, list[int]] | None:
    refills = _refills_along([789, 800, 10000], room)
    if refills not in ([], [2]):
        return None
    lines = _mores(hashes()) if refills else None

    def phone(f: int, h: int, i: int) -> str:
        h, area = divmod(h, 789)
        h, exchange = divmod(h, 800)
        line = (h if lines is None else lines[i]) % 10000
        return f"{201 + area}-{200 + exchange}-{line:04d}"

    return phone, []


def _email(names: list[Cell] | None) -> ValueFn:
    domains = fam.EMAIL_DOMAINS
    folded: dict[Cell, str] = {}  # a few hundred distinct names: fold each once

    def email(f: int, h: int, i: int) -> str:
        name = names[i] if names is not None else None
        stem = folded.get(name)
        if stem is None:
            first, _, last = str(name or "guest user").partition(" ")
            stem = folded[name] = f"{_fold(first)}.{_fold(last)}"
        return f"{stem}{h % 100}@{domains[h // 100 % len(domains)]}"

    return email


def _iso(h: int) -> str:
    h, year = divmod(h, 8)
    h, month = divmod(h, 12)
    return f"{2019 + year}-{1 + month:02d}-{1 + h % MAX_DAY:02d}"


def _printed(month_first: bool) -> Callable[[int], str]:
    def printed(h: int) -> str:  # date_forms(_date(rng), month_first)[3]
        h, year = divmod(h, 8)
        h, month = divmod(h, 12)
        m, d = 1 + month, 1 + h % MAX_DAY
        a, b = (m, d) if month_first else (d, m)
        return f"{a:02d}.{b:02d}.{2019 + year}"

    return printed


def _amount(
    col: Column, room: int, hashes: Callable[[], list[int]]
) -> tuple[ValueFn, list[int] | None] | None:
    top = 2_500_000 if col.name != "unit_cost" else 90_000
    refunds = col.name != "unit_cost"
    zero, negative = _threshold(0.08), _threshold(0.06)
    refills = _refills_along([1000, top, 1000], room)
    if refills not in ([], [2]):
        return None
    signs = _mores(hashes()) if refunds and refills else None

    def amount(f: int, h: int, i: int) -> str:
        h, z = divmod(h, 1000)
        if z < zero:
            return "0.00"
        h, cents = divmod(h, top)
        if refunds and (h if signs is None else signs[i]) % 1000 < negative:
            return _money(-1 - cents)
        return _money(1 + cents)

    return amount, []


def _quantity(col: Column) -> tuple[ValueFn, list[int] | None]:
    if col.zero_rate:
        zero = _threshold(col.zero_rate)
        return _table(lambda h: "0" if h % 1000 < zero else str(1 + h // 1000 % 9), 9000), [1000, 9]
    if col.name == "quantity":
        return (lambda f, h, i: str(1 + h % 60)), [60]
    zero, backorder = _threshold(0.1), _threshold(0.09)

    def quantity(f: int, h: int, i: int) -> str:
        h, z = divmod(h, 1000)
        if z < zero:
            return "0"
        h, b = divmod(h, 1000)
        if b < backorder:
            return str(-1 - h % 20)
        return str(1 + h % 2500)

    return quantity, [1000, 1000, 2500]


def clean_column(
    gen: CellMaker, col: Column, feeds: Sequence[bytes], done: dict[str, list[Cell]]
) -> list[Cell]:
    """Every clean cell of `col`; `done` holds the columns before it (email reads the name)."""
    n = len(feeds)
    room = (1 << 64) // 1000 if col.missing_rate else 1 << 64
    made: list[list[int]] = []

    def cell_hashes() -> list[int]:  # made at most once, only for a column that reads them
        if not made:
            made.append(HashPrefix(gen.seed, "clean", col.name).at_feeds(feeds))
        return made[0]

    fast = _value_fn(gen, col, feeds, cell_hashes, done, room)
    missing = _threshold(col.missing_rate) if col.missing_rate else 0
    uses_hash = bool(col.missing_rate) or fast is None or fast[1] is not None or bool(made)
    hashes = cell_hashes() if uses_hash else [0] * n
    if fast is None or refills_possible(fast[1] or [], room):
        names = done.get("name")
        cell = gen.clean_cell
        return [
            cell(col, h, i, names[i] if names is not None else None) for i, h in enumerate(hashes)
        ]
    value = fast[0]
    if isinstance(value, Lookup):
        values, size = value.values, len(value.values)
        if not col.missing_rate:
            return [values[h % size] for h in hashes]
        return [None if h % 1000 < missing else values[h // 1000 % size] for h in hashes]
    if not col.missing_rate:
        return [value(h, h, i) for i, h in enumerate(hashes)]
    return [None if h % 1000 < missing else value(h, h // 1000, i) for i, h in enumerate(hashes)]


def corrupt_column(
    gen: CellMaker,
    col: Column,
    feeds: Sequence[bytes],
    clean: list[Cell],
    aliases: dict[str, str],
) -> list[Cell]:
    """The arriving form of every cell of `col`: `corrupt_cell`'s draws with plain `%` and `//`
    (no corrupt path of a built-in column can need a further hash), else `corrupt_cell`."""
    if col.name in fam.PROTECTED_COLUMNS:
        return list(clean)
    hashes = HashPrefix(gen.seed, "corrupt", col.name).at_feeds(feeds)
    widest = max(len(fam.MISSING_TOKENS), 7, len(aliases), 2 + len(col.standing_aliases))
    spaces = len(WHITESPACE)
    if col.kind not in CORRUPTION_RATE or refills_possible([1000, widest, 1000, 3, spaces, spaces]):
        cell = gen.corrupt_cell
        return [cell(col, h, c, aliases) for h, c in zip(hashes, clean, strict=True)]
    return _Corrupter(gen, col, aliases).column(hashes, clean)


def _pad(h: int, value: str) -> str:
    h, where = divmod(h, 3)
    left = right = ""
    if where != 1:
        h, k = divmod(h, len(WHITESPACE))
        left = WHITESPACE[k]
    if where != 0:
        right = WHITESPACE[h % len(WHITESPACE)]
    return f"{left}{value}{right}"


class _Corrupter:
    """`corrupt_cell` for one column, each draw a `divmod` of the cell's hash."""

    def __init__(self, gen: CellMaker, col: Column, aliases: dict[str, str]) -> None:
        self.gen, self.col = gen, col
        self.written = _threshold(MISSING_WRITTEN_RATE)
        self.corrupted = _threshold(CORRUPTION_RATE[col.kind])
        self.padded = _threshold(PAD_RATE)
        self.alias_kept = _threshold(TASK_ALIAS_RATE)
        self.keep = col.kind in (fam.NAME, *fam.KEEP_KINDS)
        self.own: dict[str, list[str]] = {}
        if col.kind == fam.CATEGORY:
            for alias, target in aliases.items():
                self.own.setdefault(target, []).append(alias)
        self.aliases = aliases
        # Forms of a value, cached where a column has few distinct values.
        self.forms: dict[str, list[str]] | None = (
            None if col.kind in (fam.PHONE, fam.EMAIL, fam.AMOUNT) else {}
        )

    def column(self, hashes: list[int], clean: list[Cell]) -> list[Cell]:
        written, corrupted, own = self.written, self.corrupted, self.own
        missing, corrupt = self._missing, self._corrupted
        if own:  # a category column: a cell with a task alias draws it first
            aliased = self._aliased
            return [
                (None if h % 1000 >= written else missing(h // 1000))
                if c is None
                else aliased(h // 1000, h % 1000, c)
                if c in own
                else (c if h % 1000 >= corrupted else corrupt(h // 1000, c))
                for h, c in zip(hashes, clean, strict=True)
            ]
        return [
            (None if h % 1000 >= written else missing(h // 1000))
            if c is None
            else (c if h % 1000 >= corrupted else corrupt(h // 1000, c))
            for h, c in zip(hashes, clean, strict=True)
        ]

    def _missing(self, h: int) -> str:
        h, k = divmod(h, len(fam.MISSING_TOKENS))
        token = fam.MISSING_TOKENS[k]
        if not token:
            return token
        h, p = divmod(h, 1000)
        return _pad(h, token) if p < self.padded else token

    def _aliased(self, h: int, first: int, clean: str) -> Cell:
        if first >= self.alias_kept:  # never, at today's rate: the reference draws on
            return self.gen.corrupt_cell(self.col, h * 1000 + first, clean, self.aliases)
        own = self.own[clean]
        h, k = divmod(h, len(own))
        h, p = divmod(h, 1000)
        return _pad(h, own[k]) if p < self.padded else own[k]

    def _corrupted(self, h: int, clean: str) -> str:
        if self.keep:
            return _pad(h, clean)
        cache = self.forms
        forms = None if cache is None else cache.get(clean)
        if forms is None:
            forms = [f for f in self.gen._forms(self.col, clean) if f != clean]
            if cache is not None:
                cache[clean] = forms
        if not forms:
            return _pad(h, clean)
        h, k = divmod(h, len(forms))
        h, p = divmod(h, 1000)
        return _pad(h, forms[k]) if p < self.padded else forms[k]

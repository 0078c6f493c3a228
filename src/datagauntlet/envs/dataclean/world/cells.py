"""One cell of a task, clean and as it arrives: the per-cell reference every column follows.

Every draw is keyed by (task seed, label, column, row) through the core's keyed hash. A cell
takes one 64-bit hash and splits it into the few small draws it needs (mixed radix), so a
100,000-row table costs one hash per cell and no draw ever shifts another. `columns.py` draws
whole columns with the same hashes and splits, and falls back to these for any it cannot.
"""

from __future__ import annotations

import unicodedata
from decimal import Decimal

from datagauntlet.core.seeding import HashPrefix, Keyed, hash64
from datagauntlet.envs.dataclean.config import DatacleanConfig
from datagauntlet.envs.dataclean.tool.engine import Cell
from datagauntlet.envs.dataclean.world import families as fam
from datagauntlet.envs.dataclean.world.families import Column, Family

# Chance that a clean cell of each kind arrives corrupted.
CORRUPTION_RATE = {
    fam.NAME: 0.1,
    fam.EMAIL: 0.25,
    fam.PHONE: 0.3,
    fam.CATEGORY: 0.5,
    fam.DATE: 0.95,
    fam.AMOUNT: 0.3,
    fam.QUANTITY: 0.25,
    fam.CODE: 0.25,
    fam.DIGITS: 0.65,
    fam.REFERENCE: 0.65,
    fam.PRINTED: 0.65,
    fam.COUNTRY: 0.3,
}
# Every cell of a task alias's category is written with the alias, and each table shows only
# some categories: no count of plain values says which category an alias stands for.
TASK_ALIAS_RATE = 1.0
PRESENT_CATEGORIES = 3
MAX_DAY = 12  # every day fits a month too: only the task's stated order reads a date
MISSING_WRITTEN_RATE = 0.8  # chance a genuinely missing value is written as a marker
PAD_RATE = 0.25  # chance a corrupted cell also carries stray whitespace
WHITESPACE = (" ", "  ", "\t", "\u00a0", "\u3000")


class CellRng:
    """Small independent draws carved out of one 64-bit keyed hash (mixed radix)."""

    __slots__ = ("_first", "_h", "_refills", "_room")

    def __init__(self, h: int) -> None:
        self._first = self._h = h
        self._room = 1 << 64
        self._refills = 0

    def below(self, n: int) -> int:
        # Keep the product of radices far below 2**64, so every draw stays close to uniform;
        # a cell that needs more takes a further hash.
        if self._room < n << 24:
            self._refills += 1
            self._h = hash64(self._first, "more", self._refills)
            self._room = 1 << 64
        value = self._h % n
        self._h //= n
        self._room //= n
        return value

    def chance(self, p: float) -> bool:
        return self.below(1000) < round(p * 1000)

    def pick(self, options: tuple[str, ...] | list[str]) -> str:
        return options[self.below(len(options))]


def refills_possible(radices: list[int], room: int = 1 << 64) -> bool:
    """Whether draws of these radices (the largest at each step of any path) could take a
    further hash. A column whose draws never do can split its hash with plain % and //."""
    for n in radices:
        if room < n << 24:
            return True
        room //= n
    return False


def _fold(text: str) -> str:
    special = {"ł": "l", "Ł": "L", "ø": "o", "Ø": "O", "ı": "i", "ß": "ss", "đ": "d", "Đ": "D"}
    text = "".join(special.get(ch, ch) for ch in text)
    plain = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    return "".join(ch for ch in plain.lower() if ch.isalnum())


def _date(rng: CellRng) -> str:
    """A date whose day is at most 12, so it reads as a date in either order."""
    year = 2019 + rng.below(8)
    return f"{year}-{1 + rng.below(12):02d}-{1 + rng.below(MAX_DAY):02d}"


def date_forms(iso: str, month_first: bool) -> list[str]:
    """How an export writes a date; the same shapes for either order, so no shape tells."""
    y, m, d = (int(p) for p in iso.split("-"))
    a, b = (m, d) if month_first else (d, m)
    return [f"{a:02d}/{b:02d}/{y}", f"{a}/{b}/{y}", f"{a:02d}-{b:02d}-{y}", f"{a:02d}.{b:02d}.{y}"]


def _money(cents: int) -> str:
    return f"{Decimal(cents) / 100:.2f}"


class CellMaker:
    """A task's drawn settings and the reference for each of its cells."""

    def __init__(self, seed: int, config: DatacleanConfig, extra: tuple[Family, ...] = ()) -> None:
        self.seed = seed
        self.keyed = Keyed(seed)
        self.config = config
        pool = {**fam.FAMILIES, **{f.id: f for f in extra}}
        family_id = config.family
        if family_id == "all":
            family_id = self.keyed.choice("family", 0, tuple(pool))
        self.family = pool[family_id]
        if config.rows is None:
            self.n = self.keyed.randint("rows", 0, 10, 18)
            self.n_dups = self.keyed.randint("duplicates", 0, 0, 2)
        else:
            self.n = config.rows
            self.n_dups = self.keyed.randint("duplicates", 0, 0, max(2, config.rows // 100))
        self.date_order = "US" if self.keyed.chance("date-order", 0, 0.5) else "EU"
        self.printed_month_first = self.keyed.chance("printed-order", 0, 0.5)
        self.present = {
            c.name: self.keyed.sample(f"present-{c.name}", c.categories, PRESENT_CATEGORIES)
            for c in self.family.category_columns
        }
        self.pool = max(3, self.n // 3)
        names = self.family.names
        self._clean = {c: HashPrefix(seed, "clean", c) for c in names}
        self._corrupt = {c: HashPrefix(seed, "corrupt", c) for c in names}

    # --- the clean table -------------------------------------------------------------------
    # The per-cell definitions below are the reference; `columns.py` draws whole columns with
    # the same hashes and splits, and falls back to these for any column it cannot.
    def clean_row(self, i: int) -> dict[str, Cell]:
        row: dict[str, Cell] = {}
        for col in self.family.columns:
            row[col.name] = self.clean_cell(col, self._clean[col.name].at(i), i, row.get("name"))
        return row

    def clean_cell(self, col: Column, h: int, i: int, name: Cell) -> Cell:
        """Cell `i` of a clean column from its keyed hash; `name` is the row's clean name."""
        rng = CellRng(h)
        if col.missing_rate and rng.chance(col.missing_rate):
            return None
        return self._clean_value(col, rng, i, name)

    def customer(self, who: int) -> str:
        return f"C-{100000 + hash64(self.seed, 'customer', who) % 900000}"

    def customers(self, feeds: list[bytes]) -> list[str]:
        """`[self.customer(i) for i in range(n)]` for `feeds = index_feeds(n)`."""
        hashes = HashPrefix(self.seed, "customer").at_feeds(feeds)
        return [f"C-{100000 + h % 900000}" for h in hashes]

    def _clean_value(self, col: Column, rng: CellRng, i: int, name: Cell) -> str:
        kind = col.kind
        if kind == fam.KEY:
            return "r" + self.keyed.token("record-id", i, 12)
        if kind == fam.REF:
            return self.customer(rng.below(self.pool) if self.family.id == "orders" else i)
        if kind == fam.NOTES:
            return rng.pick(fam.NOTES_TEXT)
        if kind == fam.NAME:
            if col.name == "product":
                return rng.pick(fam.PRODUCTS)
            return f"{rng.pick(fam.FIRST_NAMES)} {rng.pick(fam.LAST_NAMES)}"
        if kind == fam.EMAIL:
            first, _, last = str(name or "guest user").partition(" ")
            return f"{_fold(first)}.{_fold(last)}{rng.below(100)}@{rng.pick(fam.EMAIL_DOMAINS)}"
        if kind == fam.PHONE:
            area, exchange, line = 201 + rng.below(789), 200 + rng.below(800), rng.below(10000)
            return f"{area}-{exchange}-{line:04d}"
        if kind == fam.CATEGORY:
            return rng.pick(self.present[col.name])
        if kind == fam.DATE:
            return _date(rng)
        if kind == fam.AMOUNT:
            return self._amount(col, rng)
        if kind == fam.QUANTITY:
            return self._quantity(col, rng)
        if kind == fam.CODE:
            if col.name == "currency":
                return rng.pick(fam.CURRENCIES)
            return "SKU-" + self.keyed.token("sku", i, 6).upper()
        if kind == fam.DIGITS:  # always a leading zero: integer would strip it
            return f"{rng.below(10 ** (col.width - 1)):0{col.width}d}"
        if kind == fam.REFERENCE:  # ten digits, a leading zero: phone_us and integer both bite
            return f"0{rng.below(10**9):09d}"
        if kind == fam.PRINTED:
            return date_forms(_date(rng), self.printed_month_first)[3]
        if kind == fam.COUNTRY:
            return rng.pick(fam.COUNTRIES)
        raise ValueError(f"unknown column kind {kind!r}")

    def _amount(self, col: Column, rng: CellRng) -> str:
        # Zeros and negatives are real and drawn on their own, never from another column (a
        # status would otherwise say which category a task alias stands for).
        if rng.chance(0.08):
            return "0.00"
        cents = 1 + rng.below(2_500_000 if col.name != "unit_cost" else 90_000)
        if col.name != "unit_cost" and rng.chance(0.06):
            cents = -cents  # refunds and credits
        return _money(cents)

    def _quantity(self, col: Column, rng: CellRng) -> str:
        if col.zero_rate:
            return "0" if rng.chance(col.zero_rate) else str(1 + rng.below(9))
        if col.name == "quantity":
            return str(1 + rng.below(60))
        if rng.chance(0.1):
            return "0"
        if rng.chance(0.09):
            return str(-1 - rng.below(20))  # backorders: real negatives
        return str(1 + rng.below(2500))

    # --- corruption ------------------------------------------------------------------------
    def corrupt(self, col: Column, i: int, clean: Cell, aliases: dict[str, str]) -> Cell:
        if col.name in fam.PROTECTED_COLUMNS:
            return clean
        return self.corrupt_cell(col, self._corrupt[col.name].at(i), clean, aliases)

    def corrupt_cell(self, col: Column, h: int, clean: Cell, aliases: dict[str, str]) -> Cell:
        """The arriving form of one clean cell of an editable column, from its keyed hash."""
        rng = CellRng(h)
        if clean is None:
            if not rng.chance(MISSING_WRITTEN_RATE):
                return None
            token = rng.pick(fam.MISSING_TOKENS)
            return self._pad(rng, token) if token and rng.chance(PAD_RATE) else token
        if col.kind == fam.CATEGORY:
            own = [a for a, t in aliases.items() if t == clean]
            if own and rng.chance(TASK_ALIAS_RATE):
                value = own[rng.below(len(own))]
                return self._pad(rng, value) if rng.chance(PAD_RATE) else value
        if not rng.chance(CORRUPTION_RATE[col.kind]):
            return clean
        if col.kind in (fam.NAME, *fam.KEEP_KINDS):
            return self._pad(rng, clean)
        forms = [f for f in self._forms(col, clean) if f != clean]
        value = rng.pick(forms) if forms else clean
        if value == clean or rng.chance(PAD_RATE):
            value = self._pad(rng, value)
        return value

    def _pad(self, rng: CellRng, value: str) -> str:
        where = rng.below(3)
        left = rng.pick(WHITESPACE) if where != 1 else ""
        right = rng.pick(WHITESPACE) if where != 0 else ""
        return f"{left}{value}{right}"

    def _forms(self, col: Column, clean: str) -> list[str]:
        kind = col.kind
        if kind == fam.EMAIL:
            local, _, domain = clean.partition("@")
            title = ".".join(p.capitalize() for p in local.split("."))
            return [clean.upper(), f"{title}@{domain.capitalize()}", f"{title}@{domain}"]
        if kind == fam.PHONE:
            a, b, c = clean.split("-")
            return [
                f"({a}) {b}-{c}",
                f"{a}.{b}.{c}",
                f"+1 {a} {b} {c}",
                f"{a}{b}{c}",
                f"1-{a}-{b}-{c}",
                f"{a} {b} {c}",
                f"+1 ({a}) {b}-{c}",
            ]
        if kind == fam.CATEGORY:
            return [clean.upper(), clean.capitalize()] + [
                alias for alias, target in col.standing_aliases.items() if target == clean
            ]
        if kind == fam.DATE:
            return date_forms(clean, self.date_order == "US")
        if kind == fam.AMOUNT:
            negative = clean.startswith("-")
            plain = clean.lstrip("-")
            grouped = f"{Decimal(plain):,.2f}"
            short = plain.rstrip("0").rstrip(".") or "0"
            sign = "-" if negative else ""
            forms = [f"{sign}${grouped}", f"{sign}{short}", f"USD {sign}{plain}"]
            forms.append(f"{sign}{grouped}" if grouped != plain else f"{sign}{plain} USD")
            if negative:
                forms.append(f"(${grouped})")
            return forms
        if kind == fam.QUANTITY:
            number = int(clean)
            forms = [f"{number}.0", f"{number}.00"]
            forms.append(f"{number:,}" if abs(number) >= 1000 else f"+{number}")
            return [f for f in forms if not f.startswith("+-")]
        if kind in (fam.CODE, fam.COUNTRY):
            return [clean.lower(), clean.capitalize()]
        return []

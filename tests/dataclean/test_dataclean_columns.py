"""The column-at-a-time generator and the batched hashing equal their per-cell definitions.

`columns.py` may only be a faster way to compute what `clean_cell` and `corrupt_cell` define.
These tests build layouts with every kind and the parameters that change a column's draws
(missing rates, widths, zero rates, long alias lists that force a further hash), and compare
every cell with the reference, so a fast path that drifts fails here before a golden digest.
"""

from __future__ import annotations

import heapq

import pytest

from datagauntlet.core import seeding
from datagauntlet.core.seeding import HashPrefix, Keyed, hash64
from datagauntlet.envs.dataclean.config import DatacleanConfig
from datagauntlet.envs.dataclean.tool.engine import Table
from datagauntlet.envs.dataclean.world import families as fam
from datagauntlet.envs.dataclean.world.cells import CellRng, refills_possible
from datagauntlet.envs.dataclean.world.columns import clean_column, corrupt_column
from datagauntlet.envs.dataclean.world.generator import _Generator

ROWS = 400
MANY = {f"Alias {k}": "bb" for k in range(16_000)}  # so many forms a corrupt draw refills


def layout(family_id: str, missing: float) -> fam.Family:
    cols = [fam.Column("record_id", fam.KEY, missing_rate=missing / 2)]
    cols.append(fam.Column("customer_id", fam.REF, missing_rate=missing))
    cols.append(fam.Column("name", fam.NAME, missing_rate=missing))
    cols.append(fam.Column("product", fam.NAME, missing_rate=missing))
    cols.append(fam.Column("email", fam.EMAIL, missing_rate=missing))
    cols.append(fam.Column("phone", fam.PHONE, missing_rate=missing))
    cats = ("a", "bb", "ccc", "dddd")
    cols.append(fam.Column("seg", fam.CATEGORY, missing, cats, {"Bee": "bb", "A!": "a"}))
    cols.append(fam.Column("wide", fam.CATEGORY, missing, cats, MANY))
    cols.append(fam.Column("day", fam.DATE, missing_rate=missing))
    cols.append(fam.Column("printed", fam.PRINTED, missing_rate=missing))
    for name in ("amount", "unit_cost"):
        cols.append(fam.Column(name, fam.AMOUNT, missing_rate=missing))
    cols.append(fam.Column("quantity", fam.QUANTITY, missing_rate=missing))
    cols.append(fam.Column("stock", fam.QUANTITY, missing_rate=missing))
    cols.append(fam.Column("zeros", fam.QUANTITY, missing_rate=missing, zero_rate=0.4))
    cols.append(fam.Column("currency", fam.CODE, missing_rate=missing))
    cols.append(fam.Column("sku", fam.CODE, missing_rate=missing))
    for width in (1, 2, 5, 7, 12, 16):  # 16: a draw too wide for one hash
        cols.append(fam.Column(f"digits{width}", fam.DIGITS, missing_rate=missing, width=width))
    cols.append(fam.Column("ref", fam.REFERENCE, missing_rate=missing))
    cols.append(fam.Column("country", fam.COUNTRY, missing_rate=missing))
    cols.append(fam.Column("notes", fam.NOTES, missing_rate=missing))
    return fam.Family(family_id, "test export", tuple(cols))


def generator(family_id: str, missing: float, seed: int = 77) -> _Generator:
    family = layout(family_id, missing)
    return _Generator(seed, DatacleanConfig(family=family_id, rows=ROWS), (family,))  # type: ignore[arg-type]


CASES = [("orders", 0.0), ("orders", 0.3), ("plain", 0.0), ("plain", 0.15), ("plain", 0.9)]


@pytest.mark.parametrize(("family_id", "missing"), CASES)
def test_every_clean_and_corrupt_column_equals_the_per_cell_reference(
    family_id: str, missing: float
) -> None:
    gen = generator(family_id, missing)
    feeds = seeding.index_feeds(gen.n)
    reference = [gen.clean_row(i) for i in range(gen.n)]
    done: dict[str, list[object]] = {}
    for col in gen.family.columns:
        done[col.name] = clean_column(gen, col, feeds, done)  # type: ignore[arg-type]
        assert done[col.name] == [row[col.name] for row in reference], col.name
    truth = Table(gen.family.names, {c: list(v) for c, v in done.items()})  # type: ignore[misc]
    taken: set[str] = set()
    aliases = {c.name: gen.task_aliases(truth, c, taken) for c in gen.family.category_columns}
    for col in gen.family.columns:
        own = aliases.get(col.name, {})
        fast = corrupt_column(gen, col, feeds, done[col.name], own)  # type: ignore[arg-type]
        slow = [gen.corrupt(col, i, c, own) for i, c in enumerate(done[col.name])]  # type: ignore[arg-type]
        assert fast == slow, col.name


def test_the_layouts_reach_both_the_fast_paths_and_the_fallbacks() -> None:
    """Phone and amount refill on a fast path; a 16-digit code and a category with 16,000 forms
    cannot, and go cell by cell (so both branches above are exercised)."""
    assert refills_possible([1000, 789, 800, 10000])
    assert not refills_possible([789, 800, 10000])
    assert refills_possible([10**15])
    assert refills_possible([1000, 2 + len(MANY), 1000, 3, 5, 5])
    rng = CellRng(12345)
    for n in (1000, 789, 800):
        rng.below(n)
    rng.below(10000)
    assert rng._refills == 1


def test_batched_hashes_equal_hash64() -> None:
    feeds = seeding.index_feeds(1200)
    want = [hash64(5, "clean", "x", i) for i in range(1200)]
    assert HashPrefix(5, "clean", "x").at_feeds(feeds) == want
    fed = seeding.feed_bytes("more", 1)
    assert seeding.hash64_fed(seeding.feed_bytes(7, "more", 1)) == hash64(7, "more", 1)
    firsts = [0, 1, 2**64 - 1, 12345678901234567]
    assert seeding.hash64_ints_fed(firsts, fed) == [hash64(f, "more", 1) for f in firsts]


@pytest.mark.parametrize("n", [0, 1, 2, 3, 50, 1000])
def test_shuffled_and_sample_equal_sorting_by_keyed_hash(n: int) -> None:
    keyed = Keyed(99)
    items = [f"item{i}" for i in range(n)]
    by_hash = sorted((hash64(99, "order", i), i) for i in range(n))
    assert keyed.shuffled("order", items) == [items[i] for _, i in by_hash]
    for k in sorted({0, min(1, n), n // 3, n}):
        assert keyed.sample("order", items, k) == [items[i] for _, i in by_hash][:k]
        assert heapq.nsmallest(k, range(n)) == sorted(range(n))[:k]


@pytest.mark.parametrize("rows", [1, 2, 5, 300, 2000])
def test_row_order_equals_sorting_rows_and_copies_together(rows: int) -> None:
    gen = _Generator(31, DatacleanConfig(family="crm", rows=rows))
    gen.n_dups = max(gen.n_dups, rows // 2)  # many copies: ties and neighbours get tested
    shuffled = gen.keyed.shuffled("order", list(range(gen.n)))
    position = {row: p for p, row in enumerate(shuffled)}
    keyed = [(float(p), 0, r) for p, r in enumerate(shuffled)]
    sources = gen.keyed.sample("duplicate-of", list(range(gen.n)), min(gen.n_dups, gen.n))
    for k, src in enumerate(sources):
        p = position[src]
        keyed.append((p + 0.5 + gen.keyed.unit("duplicate-at", k) * (gen.n - p - 0.5), 1 + k, src))
    assert gen._order() == [r for _, _, r in sorted(keyed)]

"""The case families of generated splits: each builds the batches of one case on a `Draft`.

A family is a name, a builder and how many variants it has. `FAMILIES` are the original's
eight, `EXTENDED_FAMILIES` add three the original lists as not measured; a user's
`family_module` may add more (`Family` objects in its `FAMILIES`). A builder returns the
batches as (table, rows) and whether their listing order is forced (else it is shuffled), and
records in `draft.planted` the rowids it made bad: the contract check must find exactly those.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from datagauntlet.envs.bad_batch_gate.world.contract import MAX_AMOUNT, MAX_BAD_ROWS, WINDOW_END
from datagauntlet.envs.bad_batch_gate.world.draft import ROW_KINDS, WAREHOUSE_KINDS, Draft, Row

Batches = list[tuple[str, list[Row]]]
Built = tuple[Batches, bool]


@dataclass(frozen=True)
class Family:
    name: str
    build: Callable[[Draft, int], Built]
    variants: int = 4


def _linked_pair(draft: Draft) -> Batches:
    """New customers and an orders batch that refers to 1-3 of them, one row each."""
    custs = draft.customers_batch()
    linked = [c["customer_id"] for c in custs[: draft.links(custs)]]
    return [("customers", custs), ("orders", draft.orders_batch(linked))]


def _with_new_customers(draft: Draft, returned: bool) -> Built:
    pair = _linked_pair(draft)
    if returned:
        orders = pair[1][1]
        orders[draft.pick_rows(orders, 1, "returned")[0]]["status"] = "returned"
    if draft.keyed.chance("orders-first", 0, 0.5):
        pair.reverse()
    return pair, True


def clean_control(draft: Draft, variant: int) -> Built:
    if variant in (1, 3):
        return _with_new_customers(draft, returned=False)
    return [("orders", draft.orders_batch()), ("orders", draft.orders_batch())], False


def legit_edge(draft: Draft, variant: int) -> Built:
    if variant in (2, 3):
        return _with_new_customers(draft, returned=variant == 3)
    rows = draft.orders_batch()
    if variant == 0:
        i = draft.pick_rows(rows, 1, "refund")[0]
        rows[i]["status"] = "refunded"
        rows[i]["amount"] = f"-{rows[i]['amount']}"
    else:
        i, j = draft.pick_rows(rows, 2, "edges")
        # at the cap exactly, for a customer without history (the unit rule exempts them)
        rows[i]["customer_id"] = draft.customers[draft.rows.randint(0, 1)]["customer_id"]
        draft.reserved_rows = {i + 1}
        rows[i]["amount"] = f"{MAX_AMOUNT:.2f}"
        rows[j]["order_date"] = WINDOW_END
    return [("orders", rows), ("orders", draft.orders_batch())], False


def dimension_fanout(draft: Draft, variant: int) -> Built:
    """A customers batch re-sending 1-3 warehouse customers, and clean orders that refer to
    exactly those, one row each: the same shape of reference as a clean pair."""
    custs = draft.customers_batch()
    k = draft.links(custs)
    spots = draft.pick_rows(custs, k, "re-add")
    again = draft.keyed.sample("re-added", draft.customers, k)
    for i, row in zip(spots, again, strict=True):
        custs[i] = dict(row)
    draft.planted[0] = {i + 1 for i in spots}
    ids = [c["customer_id"] for c in again]
    orders = draft.orders_batch(ids, avoid=frozenset(ids))
    return [("customers", custs), ("orders", orders)], False


def _bad_orders(
    plant: Callable[[Draft, list[Row], int], list[int]], companion_bad: bool = False
) -> Callable[[Draft, int], Built]:
    """A family whose first batch is an orders batch with planted rows, next to a clean one
    (`companion_bad`: next to one with a single row only the warehouse shows is bad, to be
    held back; the extended families use it, so checking staging alone is never enough)."""

    def build(draft: Draft, variant: int) -> Built:
        bad = draft.orders_batch()
        picks = plant(draft, bad, variant)
        draft.planted[0] = {i + 1 for i in picks}
        companion = draft.orders_batch()
        if companion_bad:
            i = draft.pick_rows(companion, 1, "companion")[0]
            draft.plant(companion, i, draft.keyed.choice("companion-kind", 0, WAREHOUSE_KINDS))
            draft.planted[1] = {i + 1}
        return [("orders", bad), ("orders", companion)], False

    build.__name__ = plant.__name__
    return build


def _resent(draft: Draft, bad: list[Row], variant: int) -> list[int]:
    if variant in (0, 1):
        picks = draft.pick_rows(bad, 3, "resent")
        for i in picks:
            draft.plant(bad, i, "resent")
        return picks
    i, j = draft.pick_rows(bad, 2, "dup")
    bad[j] = dict(bad[i])
    return [i, j]


def _bounds(draft: Draft, bad: list[Row], variant: int) -> list[int]:
    picks = draft.pick_rows(bad, 1, "bounds")
    draft.plant(bad, picks[0], "over-cap" if variant in (0, 2) else "negative")
    return picks


def _blank(draft: Draft, bad: list[Row], variant: int) -> list[int]:
    picks = draft.pick_rows(bad, 1, "blank")
    bad[picks[0]]["amount"] = "" if variant in (0, 1) else "   "
    return picks


def _orphan(draft: Draft, bad: list[Row], variant: int) -> list[int]:
    picks = draft.pick_rows(bad, 1, "orphan")
    draft.plant(bad, picks[0], "orphan")
    return picks


def _drift(draft: Draft, bad: list[Row], variant: int) -> list[int]:
    kind = ("status", "currency", "date", "status")[variant]
    picks = draft.pick_rows(bad, 2 if variant == 1 else 1, "drift")
    for i in picks:
        draft.plant(bad, i, kind)
    if variant == 3:
        bad[picks[0]]["status"] = "shipped "
    if variant == 0:
        bad[picks[0]]["status"] = "Delivered"
    return picks


def _kinds(draft: Draft, n: int) -> list[str]:
    """n different row defects, one of which only a warehouse query shows: a staging-only
    check never sees all of an extended batch's bad rows."""
    first = draft.keyed.choice("warehouse-kind", 0, WAREHOUSE_KINDS)
    rest = [k for k in ROW_KINDS if k not in WAREHOUSE_KINDS]
    return draft.keyed.shuffled("kind-order", [first, *draft.keyed.sample("kinds", rest, n - 1)])


def _partial(draft: Draft, bad: list[Row], variant: int) -> list[int]:
    kinds = _kinds(draft, 2)
    picks = draft.pick_rows(bad, 2, "partial")
    for i, kind in zip(picks, kinds, strict=True):
        draft.plant(bad, i, kind)
    return picks


def _multi(draft: Draft, bad: list[Row], variant: int) -> list[int]:
    n_kinds = 2 + variant % 2
    kinds = _kinds(draft, n_kinds)
    picks = draft.pick_rows(bad, MAX_BAD_ROWS + 1 + variant // 2, "multi")
    for n, i in enumerate(picks):
        draft.plant(bad, i, kinds[n % n_kinds])
    return picks


def _unit(draft: Draft, bad: list[Row], variant: int) -> list[int]:
    picks = draft.with_history(bad, 1 if variant in (0, 1) else MAX_BAD_ROWS + 1, "unit")
    for i in picks:
        draft.plant(bad, i, "unit")
    draft.reserved_rows = {i + 1 for i in picks}
    return picks


FAMILIES = (
    Family("clean-control", clean_control),
    Family("resent-rows", _bad_orders(_resent)),
    Family("amount-bounds", _bad_orders(_bounds)),
    Family("blank-amount", _bad_orders(_blank)),
    Family("orphan-customer", _bad_orders(_orphan)),
    Family("label-drift", _bad_orders(_drift)),
    Family("dimension-fanout", dimension_fanout),
    Family("legit-edge", legit_edge),
)
EXTENDED_FAMILIES = (
    *FAMILIES,
    Family("partial-load", _bad_orders(_partial, companion_bad=True)),
    Family("multi-defect", _bad_orders(_multi, companion_bad=True)),
    Family("unit-error", _bad_orders(_unit, companion_bad=True)),
)
BY_NAME = {f.name: f for f in EXTENDED_FAMILIES}

"""Our own cases: the original's eight families (plus three in "extended"), generated from a
task seed with keyed hashes, so each split is its own stream and nothing about a batch's
place, name, size, source or ids says whether it is the bad one.

Defects are planted by construction, then the truth is re-derived row by row by `validate`
(the contract as Python) and the two must agree; a disagreement is a generator bug and raises.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from functools import lru_cache

from datagauntlet.core.seeding import Keyed
from datagauntlet.envs.bad_batch_gate.cases import Batch, Case, Citation, Truth
from datagauntlet.envs.bad_batch_gate.contract import (
    COUNTRIES,
    CURRENCY,
    MAX_AMOUNT,
    MAX_BAD_ROWS,
    STATUSES,
    UNIT_RATIO,
    WINDOW_END,
    WINDOW_START,
    contract,
)

FAMILIES = (
    "clean-control",
    "resent-rows",
    "amount-bounds",
    "blank-amount",
    "orphan-customer",
    "label-drift",
    "dimension-fanout",
    "legit-edge",
)
EXTENDED_FAMILIES = (*FAMILIES, "partial-load", "multi-defect", "unit-error")
SPLIT_SIZES = {"train": 320, "eval": 32, "test": 320}
EXTENDED_SPLIT_SIZES = {"train": 330, "eval": 44, "test": 330}
VARIANTS = 4
WH_CUSTOMERS = 20
WH_ORDERS = 30
SOURCES = ("shop-api export", "pos export", "shop-api export (retry)")
ROW_KINDS = ("blank", "negative", "over-cap", "currency", "status", "date", "orphan", "resent")
PROMPT = (
    "Month-end close for September, running on 2026-10-01. {n} batches are waiting in "
    "staging. Load what the data contract allows, quarantine what it does not, then submit "
    "your report."
)
BLANK_GROUP = frozenset({("amount", "missing_value"), ("amount", "out_of_range")})


def split_sizes(extended: bool) -> dict[str, int]:
    return EXTENDED_SPLIT_SIZES if extended else SPLIT_SIZES


@lru_cache(maxsize=8)
def _slots(split: str, extended: bool) -> tuple[tuple[str, int], ...]:
    families = EXTENDED_FAMILIES if extended else FAMILIES
    size = split_sizes(extended)[split]
    slots = [(f, v) for v in range(VARIANTS) for f in families]
    slots = (slots * (size // len(slots) + 1))[:size]
    return tuple(Keyed(f"bbg-slots:{split}:{extended}").shuffled("order", slots))


def slot(split: str, index: int, extended: bool) -> tuple[str, int]:
    """(family, variant) of a task: every family and variant equally often, in keyed order."""
    slots = _slots(split, extended)
    return slots[index % len(slots)]


@dataclass
class Draft:
    """A case under construction."""

    keyed: Keyed
    extended: bool
    customers: list[dict[str, str]] = field(default_factory=list)
    orders: list[dict[str, str]] = field(default_factory=list)
    pool: list[str] = field(default_factory=list)  # unused customer ids, shared by every use
    used_order_ids: set[str] = field(default_factory=set)
    planted: dict[int, set[int]] = field(default_factory=dict)  # batch no -> planted rowids
    reserved_rows: set[int] = field(default_factory=set)  # rowids of batch 0 (see _reserve)

    def __post_init__(self) -> None:
        self.rows = self.keyed.stream("rows")
        ids: list[str] = []
        draw = self.keyed.stream("customer-ids")
        while len(ids) < 60:  # one shared range for every use of a customer id
            cid = f"C{draw.randint(100, 899)}"
            if cid not in ids:
                ids.append(cid)
        self.pool = ids
        for _ in range(WH_CUSTOMERS):
            self.customers.append(self.new_customer())
        # The first two customers have no order history (the unit rule exempts them).
        self.tops: dict[str, float] = {}
        for _ in range(WH_ORDERS):
            cust = self.rows.choice(self.customers[2:])["customer_id"]
            self.orders.append(self.order(cust, in_warehouse=True))
            amount = float(self.orders[-1]["amount"])
            self.tops[cust] = max(self.tops.get(cust, 0.0), amount)

    def new_customer(self) -> dict[str, str]:
        cid = self.pool.pop()
        s = self.rows
        return {
            "customer_id": cid,
            "email": f"{cid.lower()}@example.com",
            "country": s.choice(COUNTRIES),
            "signup_date": f"2026-{s.randint(1, 9):02d}-{s.randint(1, 28):02d}",
        }

    def order_id(self) -> str:
        while True:
            oid = f"O{self.rows.randint(10_000, 99_999)}"
            if oid not in self.used_order_ids:
                self.used_order_ids.add(oid)
                return oid

    def history_max(self, customer_id: str) -> float | None:
        return self.tops.get(customer_id)

    def amount(self, customer_id: str, in_warehouse: bool) -> str:
        """A clean amount: mostly $12-1,900, sometimes larger, sometimes whole dollars, so
        neither size nor '.00' marks a x100 error. It never breaks the unit rule in any load
        order: with history, at most ratio x the history; without, inside a band no wider
        than the ratio."""
        s = self.rows
        low, top_cents = 1_200, 190_000
        history = None if in_warehouse else self.history_max(customer_id)
        if not in_warehouse and history is None:
            low = 20_000
        elif history is not None:
            if s.chance(0.1):
                top_cents = 1_900_000
            top_cents = max(low, min(top_cents, int(UNIT_RATIO * history * 100)))
        cents = s.randint(low, top_cents)
        if s.chance(0.15):
            cents -= cents % 100
        return f"{cents / 100:.2f}"

    def order(self, customer_id: str, in_warehouse: bool = False) -> dict[str, str]:
        s = self.rows
        return {
            "order_id": self.order_id(),
            "customer_id": customer_id,
            "amount": self.amount(customer_id, in_warehouse),
            "currency": CURRENCY,
            "status": s.choice(STATUSES[:4]),
            "order_date": f"2026-09-{s.randint(1, 30):02d}",
        }

    def orders_batch(self, new_customers: list[str] | None = None) -> list[dict[str, str]]:
        s = self.rows
        rows = [
            self.order(s.choice(self.customers)["customer_id"]) for _ in range(s.randint(12, 20))
        ]
        spots = s.sample(range(len(rows)), len(new_customers or []))
        for i, cid in zip(spots, new_customers or [], strict=True):
            rows[i] = self.order(cid)
        return rows

    def customers_batch(self) -> list[dict[str, str]]:
        return [self.new_customer() for _ in range(self.rows.randint(3, 6))]

    def pick_rows(self, rows: list[dict[str, str]], k: int, label: str) -> list[int]:
        """k distinct row positions (0-based)."""
        return sorted(self.keyed.sample(label, range(len(rows)), k))

    # --- planting row defects ----------------------------------------------------------------
    def plant(self, rows: list[dict[str, str]], i: int, kind: str) -> None:
        s = self.rows
        row = rows[i]
        if kind == "blank":
            row["amount"] = s.choice(("", "   "))
        elif kind == "negative":
            row["amount"] = f"-{row['amount']}"
            row["status"] = s.choice(("placed", "shipped"))
        elif kind == "over-cap":  # a cents/dollars mix-up that lands above the cap
            row["amount"] = f"{s.randint(50_100, 190_000):.2f}"
        elif kind == "currency":
            row["currency"] = s.choice(("EUR", "GBP"))
        elif kind == "status":
            row["status"] = s.choice(("Delivered", "shipped ", "SHIPPED", "cancelled"))
        elif kind == "date":
            row["order_date"] = s.choice(("2026-08-", "2026-10-")) + f"{s.randint(1, 28):02d}"
        elif kind == "orphan":
            row["customer_id"] = self.pool.pop()
        elif kind == "resent":
            taken = {r["order_id"] for r in rows}
            fresh = [o for o in self.orders if o["order_id"] not in taken]
            rows[i] = dict(s.choice(fresh))
        elif kind == "unit":  # cents read as dollars: whole dollars, under the cap
            top = self.history_max(row["customer_id"]) or 0.0
            row["amount"] = f"{s.randint(int(UNIT_RATIO * top) + 1, MAX_AMOUNT):.2f}"
        else:  # pragma: no cover - a typo in a family table
            raise ValueError(kind)


def _with_history(draft: Draft, rows: list[dict[str, str]], k: int, label: str) -> list[int]:
    """k rows moved onto customers with order history (the unit rule needs one)."""
    picks = draft.pick_rows(rows, k, label)
    with_history = [
        c["customer_id"] for c in draft.customers[2:] if draft.history_max(c["customer_id"])
    ]
    for i in picks:
        if draft.history_max(rows[i]["customer_id"]) is None:
            rows[i] = draft.order(draft.rows.choice(with_history))
    return picks


def _build(draft: Draft, family: str, variant: int) -> tuple[list[tuple[str, list]], bool]:
    """The batches of one case as (table, rows), and whether the listing order is forced."""
    s = draft.rows
    if family in ("clean-control", "legit-edge") and (
        (family == "clean-control" and variant in (1, 3))
        or (family == "legit-edge" and variant in (2, 3))
    ):
        custs = draft.customers_batch()
        new_ids = [c["customer_id"] for c in custs]
        k = min(3, len(new_ids))
        orders = draft.orders_batch(new_ids[:k])
        if family == "legit-edge" and variant == 3:
            orders[draft.pick_rows(orders, 1, "returned")[0]]["status"] = "returned"
        pair = [("customers", custs), ("orders", orders)]
        if draft.keyed.chance("orders-first", 0, 0.5):
            pair.reverse()
        return pair, True
    if family == "clean-control":
        return [("orders", draft.orders_batch()), ("orders", draft.orders_batch())], False
    if family == "legit-edge":
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
    if family == "dimension-fanout":
        custs = draft.customers_batch()
        i = draft.pick_rows(custs, 1, "re-add")[0]
        again = s.choice(draft.customers)
        custs[i] = dict(again)
        draft.planted[0] = {i + 1}
        orders = draft.orders_batch()
        orders[draft.pick_rows(orders, 1, "fan-row")[0]] = draft.order(again["customer_id"])
        return [("customers", custs), ("orders", orders)], False

    bad = draft.orders_batch()
    if family == "resent-rows":
        if variant in (0, 1):
            picks = draft.pick_rows(bad, 3, "resent")
            for i in picks:
                draft.plant(bad, i, "resent")
        else:
            i, j = draft.pick_rows(bad, 2, "dup")
            bad[j] = dict(bad[i])
            picks = [i, j]
    elif family == "amount-bounds":
        picks = draft.pick_rows(bad, 1, "bounds")
        draft.plant(bad, picks[0], "over-cap" if variant in (0, 2) else "negative")
    elif family == "blank-amount":
        picks = draft.pick_rows(bad, 1, "blank")
        bad[picks[0]]["amount"] = "" if variant in (0, 1) else "   "
    elif family == "orphan-customer":
        picks = draft.pick_rows(bad, 1, "orphan")
        draft.plant(bad, picks[0], "orphan")
    elif family == "label-drift":
        kind = ("status", "currency", "date", "status")[variant]
        picks = draft.pick_rows(bad, 2 if variant == 1 else 1, "drift")
        for i in picks:
            draft.plant(bad, i, kind)
        if variant == 3:
            bad[picks[0]]["status"] = "shipped "
        if variant == 0:
            bad[picks[0]]["status"] = "Delivered"
    elif family == "partial-load":
        kinds = draft.keyed.sample("kinds", ROW_KINDS, 2)
        picks = draft.pick_rows(bad, 2, "partial")
        for i, kind in zip(picks, kinds, strict=True):
            draft.plant(bad, i, kind)
    elif family == "multi-defect":
        n_kinds = 2 + variant % 2
        kinds = draft.keyed.sample("kinds", ROW_KINDS, n_kinds)
        picks = draft.pick_rows(bad, MAX_BAD_ROWS + 1 + variant // 2, "multi")
        for n, i in enumerate(picks):
            draft.plant(bad, i, kinds[n % n_kinds])
    elif family == "unit-error":
        picks = _with_history(draft, bad, 1 if variant in (0, 1) else MAX_BAD_ROWS + 1, "unit")
        for i in picks:
            draft.plant(bad, i, "unit")
        draft.reserved_rows = {i + 1 for i in picks}
    else:
        raise ValueError(f"unknown family {family!r}")
    draft.planted[0] = {i + 1 for i in picks}
    return [("orders", bad), ("orders", draft.orders_batch())], False


def validate(
    table: str,
    rows: list[dict[str, str]],
    wh_customers: set[str],
    wh_orders: list[dict[str, str]],
    extended: bool,
) -> dict[int, set[frozenset[Citation]]]:
    """The contract as Python: rowid -> the defects of that row (each as its acceptable
    citations). `wh_customers` includes customers loadable earlier in the session."""
    out: dict[int, set[frozenset[Citation]]] = {}

    def flag(rowid: int, *citations: Citation) -> None:
        out.setdefault(rowid, set()).add(frozenset(citations))

    if table == "customers":
        counts = Counter(r["customer_id"] for r in rows)
        for n, r in enumerate(rows, start=1):
            if counts[r["customer_id"]] > 1 or r["customer_id"] in wh_customers:
                flag(n, ("customer_id", "duplicate_key"))
            if not r["email"].strip():
                flag(n, ("email", "missing_value"))
            if r["country"] not in COUNTRIES:
                flag(n, ("country", "invalid_value"))
            if r["signup_date"] > WINDOW_END:
                flag(n, ("signup_date", "out_of_window"))
        return out
    counts = Counter(r["order_id"] for r in rows)
    wh_ids = {o["order_id"] for o in wh_orders}
    tops: dict[str, float] = {}
    for o in wh_orders:
        tops[o["customer_id"]] = max(tops.get(o["customer_id"], -1e18), float(o["amount"]))
    for n, r in enumerate(rows, start=1):
        if counts[r["order_id"]] > 1 or r["order_id"] in wh_ids:
            flag(n, ("order_id", "duplicate_key"))
        text = r["amount"].strip()
        if not text:
            flag(n, *sorted(BLANK_GROUP))
        else:
            a = float(text)
            ok = -MAX_AMOUNT <= a < 0 if r["status"] == "refunded" else 0 < a <= MAX_AMOUNT
            top = tops.get(r["customer_id"])
            if not ok or (extended and top is not None and a > UNIT_RATIO * top):
                flag(n, ("amount", "out_of_range"))
        if r["currency"] != CURRENCY:
            flag(n, ("currency", "wrong_currency"))
        if r["status"] not in STATUSES:
            flag(n, ("status", "invalid_value"))
        if not WINDOW_START <= r["order_date"] <= WINDOW_END:
            flag(n, ("order_date", "out_of_window"))
        if r["customer_id"] not in wh_customers:
            flag(n, ("customer_id", "orphan_reference"))
    return out


def _truth(bad: dict[int, set[frozenset[Citation]]], extended: bool) -> Truth:
    if not bad:
        return Truth(False)
    groups: list[frozenset[Citation]] = []
    for row_groups in bad.values():
        for g in sorted(row_groups, key=sorted):
            if g not in groups:
                groups.append(g)
    rows = tuple(sorted(bad))
    action = "quarantine"
    if extended and len(rows) <= MAX_BAD_ROWS:
        action = "hold"
    return Truth(True, tuple(sorted(groups, key=sorted)), rows, action)


def _reserve(draft: Draft, built: list[tuple[str, list]]) -> None:
    """Customers of x100 rows and of the at-the-cap row get no other good rows in the case, so
    no load order can change the history their rows are judged against."""
    reserved = {built[0][1][r - 1]["customer_id"] for r in draft.reserved_rows}
    if not reserved:
        return
    others = [c["customer_id"] for c in draft.customers[2:] if c["customer_id"] not in reserved]
    others = [c for c in others if draft.history_max(c) is not None]
    for n, (table, rows) in enumerate(built):
        if table != "orders":
            continue
        keep = draft.planted.get(n, set()) | (draft.reserved_rows if n == 0 else set())
        for i, row in enumerate(rows):
            if i + 1 not in keep and row["customer_id"] in reserved:
                rows[i] = draft.order(draft.rows.choice(others))


@lru_cache(maxsize=1024)
def generate(split: str, index: int, seed: int, extended: bool) -> Case:
    """The case of one task (cached: a case is immutable and costs about a millisecond)."""
    family, variant = slot(split, index, extended)
    keyed = Keyed(seed)
    draft = Draft(keyed, extended)
    built, _forced = _build(draft, family, variant)
    _reserve(draft, built)
    order = list(range(len(built)))
    if not _forced:
        order = keyed.shuffled("listing", order)
    # Customers that end up loadable this session count as known for the orphan rule.
    known = {c["customer_id"] for c in draft.customers}
    first_pass = {}
    for n, (table, rows) in enumerate(built):
        if table == "customers":
            first_pass[n] = validate(table, rows, known, draft.orders, extended)
    for n, (table, rows) in enumerate(built):
        if table == "customers":
            truth = _truth(first_pass[n], extended)
            if truth.action != "quarantine":
                known |= {
                    r["customer_id"] for i, r in enumerate(rows, start=1) if i not in truth.bad_rows
                }
    nn = keyed.randint("batch-no", 0, 10, 99)
    batches = []
    for pos, n in enumerate(order, start=1):
        table, rows = built[n]
        if table == "customers":
            truth = _truth(first_pass[n], extended)
        else:
            truth = _truth(validate(table, rows, known, draft.orders, extended), extended)
        planted = draft.planted.get(n, set())
        if set(truth.bad_rows) != planted:
            raise AssertionError(
                f"generator bug: {family}/{variant} seed {seed}: planted rows {sorted(planted)}, "
                f"contract finds {list(truth.bad_rows)}"
            )
        source = "crm sync" if table == "customers" else keyed.choice("source", n, SOURCES)
        batch_id = f"B-0930-{nn}-{pos}"
        batches.append(Batch(batch_id, table, tuple(rows), source, truth))
    return Case(
        case_id=f"{split}-{index:05d}",
        family=family,
        variant=variant,
        seed=seed,
        prompt=PROMPT.format(n=len(batches)),
        contract=contract(extended),
        customers=tuple(draft.customers),
        orders=tuple(draft.orders),
        batches=tuple(batches),
        extended=extended,
    )

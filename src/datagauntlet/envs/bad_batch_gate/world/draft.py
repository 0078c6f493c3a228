"""A generated case under construction: the warehouse, a pool of unused customer ids, and the
row-level defects a family can plant. Every draw comes from the case seed's keyed streams."""

from __future__ import annotations

from dataclasses import dataclass, field

from datagauntlet.core.seeding import Keyed
from datagauntlet.envs.bad_batch_gate.world.contract import (
    COUNTRIES,
    CURRENCY,
    MAX_AMOUNT,
    STATUSES,
    UNIT_RATIO,
)

WH_CUSTOMERS = 20
WH_ORDERS = 30
ID_POOL = 60
# Row defects partial-load and multi-defect draw from; the last three need the warehouse to see.
ROW_KINDS = ("blank", "negative", "over-cap", "currency", "status", "date", "orphan", "resent")
WAREHOUSE_KINDS = ("orphan", "resent")

Row = dict[str, str]


@dataclass
class Draft:
    keyed: Keyed
    extended: bool
    customers: list[Row] = field(default_factory=list)
    orders: list[Row] = field(default_factory=list)
    pool: list[str] = field(default_factory=list)  # unused customer ids, shared by every use
    used_order_ids: set[str] = field(default_factory=set)
    planted: dict[int, set[int]] = field(default_factory=dict)  # batch no -> planted rowids
    reserved_rows: set[int] = field(default_factory=set)  # rowids of batch 0 (see reserve)

    def __post_init__(self) -> None:
        self.rows = self.keyed.stream("rows")
        ids: list[str] = []
        draw = self.keyed.stream("customer-ids")
        while len(ids) < ID_POOL:  # one shared range for every use of a customer id
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

    def new_customer(self) -> Row:
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

    def order(self, customer_id: str, in_warehouse: bool = False) -> Row:
        s = self.rows
        return {
            "order_id": self.order_id(),
            "customer_id": customer_id,
            "amount": self.amount(customer_id, in_warehouse),
            "currency": CURRENCY,
            "status": s.choice(STATUSES[:4]),
            "order_date": f"2026-09-{s.randint(1, 30):02d}",
        }

    def orders_batch(self, linked: list[str] | None = None, avoid: frozenset[str] = frozenset()):
        """12-20 clean orders; `linked` customers get one row each, and no other row names a
        customer in `avoid` (so references between batches are exactly the linked ones)."""
        s = self.rows
        choices = [c for c in self.customers if c["customer_id"] not in avoid]
        rows = [self.order(s.choice(choices)["customer_id"]) for _ in range(s.randint(12, 20))]
        spots = s.sample(range(len(rows)), len(linked or []))
        for i, cid in zip(spots, linked or [], strict=True):
            rows[i] = self.order(cid)
        return rows

    def customers_batch(self) -> list[Row]:
        return [self.new_customer() for _ in range(self.rows.randint(3, 6))]

    def links(self, customers: list[Row]) -> int:
        """How many customers of a customers batch its orders batch refers to: 1-3 at random,
        for clean pairs and fan-out pairs alike, so the count says nothing."""
        return self.keyed.randint("links", 0, 1, min(3, len(customers)))

    def pick_rows(self, rows: list[Row], k: int, label: str) -> list[int]:
        """k distinct row positions (0-based)."""
        return sorted(self.keyed.sample(label, range(len(rows)), k))

    def plant(self, rows: list[Row], i: int, kind: str) -> None:
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
        else:
            raise ValueError(f"unknown row defect {kind!r}")

    def with_history(self, rows: list[Row], k: int, label: str) -> list[int]:
        """k rows moved onto customers with order history (the unit rule needs one)."""
        picks = self.pick_rows(rows, k, label)
        with_history = [
            c["customer_id"] for c in self.customers[2:] if self.history_max(c["customer_id"])
        ]
        for i in picks:
            if self.history_max(rows[i]["customer_id"]) is None:
                rows[i] = self.order(self.rows.choice(with_history))
        return picks

    def reserve(self, built: list[tuple[str, list[Row]]]) -> None:
        """Customers of x100 rows and of the at-the-cap row get no other good rows in the case,
        so no load order can change the history their rows are judged against."""
        reserved = {built[0][1][r - 1]["customer_id"] for r in self.reserved_rows}
        if not reserved:
            return
        others = [c["customer_id"] for c in self.customers[2:] if c["customer_id"] not in reserved]
        others = [c for c in others if self.history_max(c) is not None]
        for n, (table, rows) in enumerate(built):
            if table != "orders":
                continue
            keep = self.planted.get(n, set()) | (self.reserved_rows if n == 0 else set())
            for i, row in enumerate(rows):
                if i + 1 not in keep and row["customer_id"] in reserved:
                    rows[i] = self.order(self.rows.choice(others))

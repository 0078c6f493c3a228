"""The contract as Python: which rows of a batch break which rules, and the batch's truth.

The generator plants defects, then re-derives the truth here; the two must agree."""

from __future__ import annotations

from collections import Counter

from datagauntlet.envs.bad_batch_gate.world.cases import Citation, Truth
from datagauntlet.envs.bad_batch_gate.world.contract import (
    COUNTRIES,
    CURRENCY,
    MAX_AMOUNT,
    MAX_BAD_ROWS,
    STATUSES,
    UNIT_RATIO,
    WINDOW_END,
    WINDOW_START,
)

BLANK_GROUP = frozenset({("amount", "missing_value"), ("amount", "out_of_range")})
Defects = dict[int, set[frozenset[Citation]]]


def _customers(rows: list[dict[str, str]], wh_customers: set[str]) -> Defects:
    out: Defects = {}
    counts = Counter(r["customer_id"] for r in rows)
    for n, r in enumerate(rows, start=1):
        found = out.setdefault(n, set())
        if counts[r["customer_id"]] > 1 or r["customer_id"] in wh_customers:
            found.add(frozenset({("customer_id", "duplicate_key")}))
        if not r["email"].strip():
            found.add(frozenset({("email", "missing_value")}))
        if r["country"] not in COUNTRIES:
            found.add(frozenset({("country", "invalid_value")}))
        if r["signup_date"] > WINDOW_END:
            found.add(frozenset({("signup_date", "out_of_window")}))
    return {n: d for n, d in out.items() if d}


def _amount_ok(text: str, status: str, top: float | None, extended: bool) -> bool:
    a = float(text)
    ok = -MAX_AMOUNT <= a < 0 if status == "refunded" else 0 < a <= MAX_AMOUNT
    return ok and not (extended and top is not None and a > UNIT_RATIO * top)


def validate(
    table: str,
    rows: list[dict[str, str]],
    wh_customers: set[str],
    wh_orders: list[dict[str, str]],
    extended: bool,
) -> Defects:
    """rowid -> the defects of that row (each as its acceptable citations).
    `wh_customers` includes customers loadable earlier in the session."""
    if table == "customers":
        return _customers(rows, wh_customers)
    out: Defects = {}
    counts = Counter(r["order_id"] for r in rows)
    wh_ids = {o["order_id"] for o in wh_orders}
    tops: dict[str, float] = {}
    for o in wh_orders:
        tops[o["customer_id"]] = max(tops.get(o["customer_id"], -1e18), float(o["amount"]))
    for n, r in enumerate(rows, start=1):
        found = out.setdefault(n, set())
        if counts[r["order_id"]] > 1 or r["order_id"] in wh_ids:
            found.add(frozenset({("order_id", "duplicate_key")}))
        text = r["amount"].strip()
        if not text:
            found.add(BLANK_GROUP)
        elif not _amount_ok(text, r["status"], tops.get(r["customer_id"]), extended):
            found.add(frozenset({("amount", "out_of_range")}))
        if r["currency"] != CURRENCY:
            found.add(frozenset({("currency", "wrong_currency")}))
        if r["status"] not in STATUSES:
            found.add(frozenset({("status", "invalid_value")}))
        if not WINDOW_START <= r["order_date"] <= WINDOW_END:
            found.add(frozenset({("order_date", "out_of_window")}))
        if r["customer_id"] not in wh_customers:
            found.add(frozenset({("customer_id", "orphan_reference")}))
    return {n: d for n, d in out.items() if d}


def truth_of(bad: Defects, extended: bool) -> Truth:
    if not bad:
        return Truth(False)
    groups: list[frozenset[Citation]] = []
    for row_groups in bad.values():
        for g in sorted(row_groups, key=sorted):
            if g not in groups:
                groups.append(g)
    rows = tuple(sorted(bad))
    action = "hold" if extended and len(rows) <= MAX_BAD_ROWS else "quarantine"
    return Truth(True, tuple(sorted(groups, key=sorted)), rows, action)

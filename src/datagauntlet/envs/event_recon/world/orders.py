"""The clean world's traffic: orders with their distractors, amendments and refunds, and how
each event reached the platform (latency, retries, complete backfill batches).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta

from datagauntlet.core.seeding import Keyed, Stream
from datagauntlet.envs.event_recon.world.draft import Delivery, Effect, Extra, Order

ORDERS_PER_PARTNER = {1: (4, 7), 2: (4, 7), 3: (5, 8), 4: (5, 9)}
RETRY_RATE = {1: 0.06, 2: 0.07, 3: 0.08, 4: 0.12}


@dataclass
class Window:
    """A world's keyed draws and its three-month window, with the event-id stream."""

    k: Keyed
    tier: int
    density: int
    spread: int
    currency: str
    start: datetime
    end: datetime
    ids: Stream = field(init=False)

    def __post_init__(self) -> None:
        self.ids = self.k.stream("ids")

    def instant(self, label: str, i: int | str, lo: float, hi: float) -> datetime:
        span = int((self.end - self.start).total_seconds())
        return self.start + timedelta(
            seconds=self.k.randint(label, i, int(span * lo), int(span * hi))
        )

    def event_id(self) -> str:
        return "evt_" + self.ids.token(16)

    def new_order(self, code: str, at: datetime, gross: int, customer: str, idx: str) -> Order:
        tax = gross * self.k.randint("tax-rate", idx, 0, 25) // 100
        return Order(
            order_id="ord_" + self.ids.token(10),
            code=code,
            customer=customer,
            currency=self.currency,
            at=at,
            gross=gross,
            tax=tax,
            event_id=self.event_id(),
        )


def partner_orders(
    w: Window, partner_ids: list[str], partner_codes: dict[str, list[str]]
) -> list[Order]:
    """Each partner's ordinary orders, some legitimately under the program's bar."""
    k, orders = w.k, []
    olo, ohi = ORDERS_PER_PARTNER[w.tier]
    for i, pid in enumerate(partner_ids):
        for j in range(k.randint("n-orders", i, olo, ohi)):
            idx = f"{i}/{j}"
            code = k.choice("order-code", idx, partner_codes[pid])
            at = w.instant("order-at", idx, 0.02, 0.96)
            if k.chance("under-bar", idx, 0.12 * w.density):  # legitimately under the bar
                gross = k.randint("gross-low", idx, 400, 1400)
            else:
                gross = k.randint("gross", idx, 1500, 32000)
            order = w.new_order(code, at, gross, "cus_" + k.token("customer", idx, 8), idx)
            orders.append(order)
    return orders


def sameday_orders(
    w: Window, partner_ids: list[str], partner_codes: dict[str, list[str]]
) -> list[Order]:
    """Several distinct same-day orders from one buyer."""
    k, sameday = w.k, []
    for n in range(w.spread):
        pid = k.choice("sameday-partner", n, partner_ids)
        day = w.instant("sameday-at", n, 0.05, 0.9)
        base = day.replace(hour=2, minute=0, second=0)  # all of them on one UTC day
        customer = "cus_" + k.token("sameday-customer", n, 8)
        gross = k.randint("sameday-gross", n, 2000, 12000)
        for m in range(k.randint("sameday-count", n, 2, 3)):
            at = base + timedelta(minutes=k.randint("sameday-gap", f"{n}/{m}", 5, 120) * (m + 1))
            sameday.append(w.new_order(partner_codes[pid][0], at, gross, customer, f"sd{n}/{m}"))
    return sameday


def edge_and_orphan_orders(
    w: Window,
    partner_ids: list[str],
    partner_codes: dict[str, list[str]],
    month_edges: tuple[datetime, datetime],
) -> list[Order]:
    """Orders at a month boundary (zone distractors) and orders on a code no row has."""
    k, orders = w.k, []
    for n in range(2 * w.spread):
        pid = k.choice("edge-partner", n, partner_ids)
        edge = month_edges[n % 2]
        at = edge + timedelta(minutes=k.randint("edge-offset", n, -600, 600))
        code = k.choice("edge-code", n, partner_codes[pid])
        gross = k.randint("edge-gross", n, 3000, 20000)
        orders.append(
            w.new_order(code, at, gross, "cus_" + k.token("edge-customer", n, 8), f"e{n}")
        )
    # The platform dead-letters an order on a code on no referral row, correctly.
    for n in range(1 + w.spread // 2):
        at = w.instant("orphan-at", n, 0.05, 0.9)
        code = "ZZ" + k.token("orphan-code", n, 6).upper()
        orders.append(
            w.new_order(
                code,
                at,
                k.randint("orphan-gross", n, 2000, 9000),
                "cus_" + k.token("orphan-customer", n, 8),
                f"o{n}",
            )
        )
    return orders


def amend(w: Window, n: int, order: Order) -> int:
    """Amendments (always carrying both money fields); returns the last seq used."""
    k, seq, at = w.k, 1, order.at
    if k.chance("amend", n, 0.18):
        for m in range(k.randint("amend-count", n, 1, 2)):
            seq += 1
            factor = k.randint("amend-factor", f"{n}/{m}", 70, 130)
            gross = max(100, order.gross * factor // 100)
            at += timedelta(minutes=k.randint("amend-at", f"{n}/{m}", 30, 3000))
            order.effects.append(
                Effect(
                    w.event_id(),
                    "order.updated",
                    seq,
                    at,
                    gross,
                    gross * k.randint("amend-tax", f"{n}/{m}", 0, 25) // 100,
                )
            )
    return seq


def refund(w: Window, n: int, order: Order, seq: int, instalments: bool) -> None:
    """A full refund with its amount stated, or one or more partial ones (instalments)."""
    k = w.k
    final_gross = order.effects[-1].gross if order.effects else order.gross
    final_tax = order.effects[-1].tax if order.effects else order.tax
    assert final_gross is not None and final_tax is not None
    roll = k.unit("refund", n)
    parts = 0
    if roll < 0.06:
        parts = -1  # full refund, amount stated
    elif roll < 0.16:
        parts = 1
    elif roll < 0.16 + 0.05 * w.density:
        parts = k.randint("instalments", n, 2, 3)
    if instalments:  # every task has at least one refund in instalments
        parts = 2
    last = order.effects[-1].at if order.effects else order.at
    if parts == -1:
        at = min(
            last + timedelta(days=k.randint("refund-days", n, 1, 25)), w.end - timedelta(hours=6)
        )
        seq += 1
        order.effects.append(
            Effect(w.event_id(), "order.refunded", seq, at, final_gross, final_tax)
        )
    at = last
    for m in range(max(parts, 0)):
        share = k.randint("refund-share", f"{n}/{m}", 10, 30)
        at = min(
            at + timedelta(days=k.randint("refund-days", f"{n}/{m}", 1, 12)),
            w.end - timedelta(hours=6 - m),
        )
        seq += 1
        order.effects.append(
            Effect(
                w.event_id(),
                "order.refunded",
                seq,
                at,
                final_gross * share // 100,
                final_tax * share // 100,
            )
        )


def deliver(
    w: Window, orders: list[Order], forced_retry: int
) -> tuple[dict[str, Delivery], list[Extra]]:
    """Delivery shortly after each event, plus retries that repeat an event_id."""
    k = w.k
    wire: dict[str, Delivery] = {}
    extras: list[Extra] = []
    retry_rate = RETRY_RATE[w.tier]
    for n, order in enumerate(orders):
        for m, (eid, at) in enumerate(
            [(order.event_id, order.at), *((e.event_id, e.at) for e in order.effects)]
        ):
            idx = f"{n}/{m}"
            received = at + timedelta(seconds=k.randint("latency", idx, 2, 900))
            wire[eid] = Delivery(received)
            if (n == forced_retry and m == 0) or k.chance("retry", idx, retry_rate):
                delay = timedelta(seconds=k.randint("retry-delay", idx, 30, 7200))
                extras.append(Extra(eid, eid, 2, received + delay))
    return wire, extras


def backfill(
    w: Window,
    orders: list[Order],
    first_month_end: datetime,
    wire: dict[str, Delivery],
    extras: list[Extra],
) -> set[str]:
    """Complete backfill batches: older orders delivered late, in order, all of each (their
    retries dropped). Returns the batched order ids."""
    k = w.k
    early = [o for o in orders if o.at < first_month_end - timedelta(days=2)]
    batched: set[str] = set()
    for b in range(1 if w.tier < 4 else 2):
        batch = "bf_" + k.token("batch", b, 8)
        chosen = k.sample(
            f"batch-orders-{b}", early, min(len(early), k.randint("batch-size", b, 3, 5))
        )
        batched |= {o.order_id for o in chosen}
        t = w.instant("batch-at", b, 0.7, 0.9)
        for order in sorted(chosen, key=lambda o: o.at):
            for eid in order.events():
                t += timedelta(seconds=k.randint("batch-gap", eid, 1, 20))
                wire[eid] = Delivery(t, backfill=True, batch=batch)
        dropped = {e for o in chosen for e in o.events()}
        extras[:] = [x for x in extras if x.source_event not in dropped]
    return batched

"""Two held-out wire families: a live amendment that overtook its order, and a backfill batch
that replayed an event already delivered live."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta
from typing import Any

from datagauntlet.core.seeding import Keyed
from datagauntlet.envs.event_recon.world.draft import Delivery, Draft, Effect, Extra
from datagauntlet.envs.event_recon.world.families import (
    Injection,
    earning,
    new_event_id,
    partner_orders,
    pick,
    plain,
)


class AmendmentOvertookOrder:
    """A live amendment reached the platform before the `order.created` it amends (a race on
    the brand's side, no backfill involved). R4 holds it until the order arrives; the builder
    dead-letters it (B3), so the order keeps its first gross. Unlike `partial_backfill` it is
    an amendment, delivered live."""

    name = "amendment_overtook_order"
    where = "wire"
    rule = "R4"
    latent_bug = "B3"
    contract_reasoning = True  # ordering: the contract says what an early effect waits for
    bookkeeping_only = False  # the held amendment changes the commission: a rate is needed
    summary = (
        "a live amendment delivered before its own order was dropped instead of being held "
        "for the order (R4)"
    )
    misreadings: tuple[dict[str, object], ...] = ({"hold_orphans": False},)
    refines = ("partial_backfill",)  # an early effect too, but live and an amendment

    def plan(
        self, draft: Draft, partner_id: str, severity: int, k: Keyed, claimed: set[str]
    ) -> Injection | None:
        pool = plain(earning(draft, partner_orders(draft, partner_id, claimed)))
        pool = [o for o in pool if o.at < draft.end - timedelta(days=2)]
        chosen = pick(k, "overtake", pool, min(severity, 2))
        if not chosen:
            return None
        specs = []
        for i, o in enumerate(chosen):
            up = k.chance("overtake-up", i, 0.5)
            share = (
                k.randint("overtake-up-f", i, 112, 160)
                if up
                else k.randint("overtake-f", i, 50, 88)
            )
            gross = max(1, o.gross * share // 100)
            specs.append(
                {
                    "order": o.order_id,
                    "id": new_event_id(k, "overtake-id", i),
                    "gross": gross,
                    "tax": gross * o.tax // max(o.gross, 1),
                    "minutes": k.randint("overtake-min", i, 5, 180),
                    "lag": k.randint("overtake-lag", i, 120, 6 * 3600),
                }
            )
        return Injection(self.name, partner_id, tuple(o.order_id for o in chosen), {"specs": specs})

    def apply(self, draft: Draft, inj: Injection) -> None:
        for spec in inj.params["specs"]:
            o = draft.order(spec["order"])
            at = o.at + timedelta(minutes=spec["minutes"])
            o.effects.append(Effect(spec["id"], "order.updated", 2, at, spec["gross"], spec["tax"]))
            sent = at + timedelta(seconds=20)
            draft.wire[spec["id"]] = Delivery(sent)
            old = draft.wire[o.event_id]
            late = sent + timedelta(seconds=spec["lag"])
            draft.wire[o.event_id] = Delivery(late, old.backfill, old.batch, old.money_style)
            shift = late - old.received_at
            draft.extras = [  # the order's retries are late with it
                replace(x, received_at=x.received_at + shift) if x.source_event == o.event_id else x
                for x in draft.extras
            ]

    def seen_on(self, world: Any, order_id: str) -> bool:
        """The order's first delivery is an amendment, and none of its deliveries is backfill."""
        events = world.events.get(order_id, [])
        return (
            bool(events)
            and events[0].type == "order.updated"
            and not any(e.backfill for e in events)
        )


class BackfillReplay:
    """A backfill batch re-sent an event the platform had already received live (the order's
    creation, or one of its refunds) under a new `event_id`. R2 keys effects by (order, `seq`),
    so the replay changes nothing; the builder dedups on `event_id` alone (B1) and books it
    again: an order booked twice, or a refund reversed twice. Unlike `duplicate_delivery` the
    copy arrives flagged `backfill`, in a batch."""

    name = "backfill_replay"
    where = "wire"
    rule = "R2"
    latent_bug = "B1"
    contract_reasoning = True  # idempotency
    bookkeeping_only = True  # dropping the replayed copy's rows repairs it
    summary = (
        "a backfill batch replayed an event already delivered live, under a new `event_id`, "
        "and it was counted again (R2)"
    )
    misreadings: tuple[dict[str, object], ...] = ({"dedup_by_seq": False},)
    refines = ("duplicate_delivery",)  # a re-emission too, but replayed in a backfill

    def plan(
        self, draft: Draft, partner_id: str, severity: int, k: Keyed, claimed: set[str]
    ) -> Injection | None:
        chosen = pick(
            k,
            "replay",
            earning(draft, partner_orders(draft, partner_id, claimed)),
            min(severity, 2),
        )
        if not chosen:
            return None
        specs = []
        for i, o in enumerate(chosen):
            refunds = [e for e in o.effects if e.kind == "order.refunded" and e.gross]
            refund = refunds and k.chance("replay-refund", i, 0.5)
            source = refunds[-1].event_id if refund else o.event_id
            specs.append(
                {
                    "source": source,
                    "id": new_event_id(k, "replay-id", i),
                    "hours": k.randint("replay-hours", i, 6, 96),
                }
            )
        batch = "bf_" + k.token("replay-batch", 0, 8)
        return Injection(
            self.name,
            partner_id,
            tuple(o.order_id for o in chosen),
            {"specs": specs, "batch": batch},
        )

    def apply(self, draft: Draft, inj: Injection) -> None:
        for spec in inj.params["specs"]:
            at = draft.wire[spec["source"]].received_at + timedelta(hours=spec["hours"])
            draft.extras.append(Extra(spec["source"], spec["id"], 1, at, inj.params["batch"]))

    def seen_on(self, world: Any, order_id: str) -> bool:
        """A (order, `seq`) delivered again under a new `event_id`, the copy in a backfill."""
        first: dict[int, str] = {}
        for ev in world.events.get(order_id, []):
            if first.setdefault(ev.seq(), ev.event_id) != ev.event_id and ev.backfill:
                return True
        return False

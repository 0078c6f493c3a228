"""The wire families that break delivery: a re-emission under a new id (R2), amendments
out of seq order (R3) and a backfill batch whose refunds arrive before their orders (R4)."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from datagauntlet.core.seeding import Keyed
from datagauntlet.envs.event_recon.grading import accounting as acc
from datagauntlet.envs.event_recon.world.draft import Delivery, Draft, Effect, Extra, Order
from datagauntlet.envs.event_recon.world.family_kit import (
    FamilyBase,
    Injection,
    earning,
    new_event_id,
    partner_orders,
    pick,
    plain,
    program_of,
)


class DuplicateDelivery(FamilyBase):
    """The brand re-emits an event under a new event_id; R2 makes it a no-op, B1 books it.

    Two modes. `repeat`: an order's creation or first refund re-emitted (dropping the
    re-emission's rows repairs it). `restart`: the creation re-emitted between two
    amendments, so the platform restarts the order and books the later amendment against
    the restarted state (dropping the re-emission leaves the later delta wrong: the
    contract is needed). Tiers 1-2 draw `restart` only, where invariant 7 admits no
    contract-free partner.
    """

    def __init__(self) -> None:
        super().__init__("duplicate_delivery", "wire", "R2", "B1", True)

    def plan(
        self, draft: Draft, partner_id: str, severity: int, k: Keyed, claimed: set[str]
    ) -> Injection | None:
        pool = earning(draft, partner_orders(draft, partner_id, claimed))
        restart = draft.tier <= 2 or k.chance("dup-mode", 0, 0.5)
        if restart:
            return self._plan_restart(draft, partner_id, plain(pool), k)
        chosen = pick(k, "dup", pool, min(severity, 2))
        if not chosen:
            return None
        sources = []
        for i, o in enumerate(chosen):
            refunds = [e for e in o.effects if e.kind == "order.refunded"]
            src = refunds[0].event_id if refunds and k.chance("dup-refund", i, 0.5) else o.event_id
            delay = k.randint("dup-delay", i, 600, 3 * 86400)
            sources.append((src, new_event_id(k, "dup-id", i), delay))
        return Injection(
            self.name,
            partner_id,
            tuple(o.order_id for o in chosen),
            {"mode": "repeat", "emissions": sources},
        )

    def _plan_restart(
        self, draft: Draft, partner_id: str, pool: list[Order], k: Keyed
    ) -> Injection | None:
        pool = [o for o in pool if o.at < draft.end - timedelta(days=3)]
        chosen = pick(k, "dup-restart", pool, 1)
        if not chosen:
            return None
        o = chosen[0]
        program, _ = program_of(draft, o)
        g2 = o.gross * k.randint("dup-f2", 0, 115, 160) // 100
        g3 = max(program.min_order_minor, o.gross * k.randint("dup-f3", 0, 70, 95) // 100)
        spec = {
            "order": o.order_id,
            "ids": (new_event_id(k, "dup-a2", 0), new_event_id(k, "dup-a3", 0)),
            "re_id": new_event_id(k, "dup-id", 0),
            "gross": (g2, g3),
            "tax": (g2 * o.tax // max(o.gross, 1), g3 * o.tax // max(o.gross, 1)),
            "minutes": (k.randint("dup-m2", 0, 60, 900), k.randint("dup-m3", 0, 600, 2400)),
        }
        return Injection(self.name, partner_id, (o.order_id,), {"mode": "restart", "spec": spec})

    def apply(self, draft: Draft, inj: Injection) -> None:
        if inj.params.get("mode") == "restart":
            spec = inj.params["spec"]
            o = draft.order(spec["order"])
            id2, at2, id3, at3 = _two_updates(o, spec)
            draft.wire[id2] = Delivery(at2 + timedelta(seconds=20))
            draft.wire[id3] = Delivery(at3 + timedelta(seconds=20))
            middle = at2 + (at3 - at2) / 2
            draft.extras.append(Extra(o.event_id, spec["re_id"], 1, middle))
            return
        for src, new_id, delay in inj.params["emissions"]:
            at = draft.wire[src].received_at + timedelta(seconds=delay)
            draft.extras.append(Extra(src, new_id, 1, at))


class OutOfOrderDelivery(FamilyBase):
    """Two amendments arrive in reverse seq order; R3 keeps the highest seq, B2 the last one.

    Two modes. `stale`: the late amendment overwrites the later one (dropping its rows
    repairs it). `under_bar`: the late amendment is under the bar and a refund follows it,
    so the platform books no reversal for an order it believes does not qualify (dropping
    the stale rows leaves the reversal missing: the contract is needed). Tiers 1-2 draw
    `under_bar` only.
    """

    def __init__(self) -> None:
        super().__init__("out_of_order_delivery", "wire", "R3", "B2", True)

    def plan(
        self, draft: Draft, partner_id: str, severity: int, k: Keyed, claimed: set[str]
    ) -> Injection | None:
        pool = plain(earning(draft, partner_orders(draft, partner_id, claimed)))
        under_bar = draft.tier <= 2 or k.chance("ooo-mode", 0, 0.5)
        if under_bar:
            pool = [o for o in pool if o.at < draft.end - timedelta(days=4)]
        chosen = pick(k, "ooo", pool, 1 if under_bar else 1 + (severity >= 3))
        if not chosen:
            return None
        specs = []
        for i, o in enumerate(chosen):
            program, _ = program_of(draft, o)
            bar = program.min_order_minor
            f2 = k.randint("ooo-f2", i, 105, 140)
            f3 = k.randint("ooo-f3", i, 75, 97)
            g2, g3 = o.gross * f2 // 100, max(bar, o.gross * f3 // 100)
            if under_bar:
                g2 = max(100, bar - k.randint("ooo-under", i, 1, 600))
            spec = {
                "order": o.order_id,
                "ids": (new_event_id(k, "ooo-id2", i), new_event_id(k, "ooo-id3", i)),
                "gross": (g2, g3),
                "tax": (g2 * o.tax // max(o.gross, 1), g3 * o.tax // max(o.gross, 1)),
                "minutes": (k.randint("ooo-m2", i, 40, 600), k.randint("ooo-m3", i, 40, 600)),
                "lag": k.randint("ooo-lag", i, 900, 6 * 3600),
            }
            if under_bar:
                spec["refund"] = {
                    "id": new_event_id(k, "ooo-refund", i),
                    "share": k.randint("ooo-share", i, 15, 60),
                    "hours": k.randint("ooo-hours", i, 8, 48),
                }
            specs.append(spec)
        mode = "under_bar" if under_bar else "stale"
        return Injection(
            self.name,
            partner_id,
            tuple(o.order_id for o in chosen),
            {"mode": mode, "specs": specs},
        )

    def apply(self, draft: Draft, inj: Injection) -> None:
        for spec in inj.params["specs"]:
            o = draft.order(spec["order"])
            id2, _, id3, at3 = _two_updates(o, spec)
            draft.wire[id3] = Delivery(at3 + timedelta(seconds=30))
            late = at3 + timedelta(seconds=30 + spec["lag"])
            draft.wire[id2] = Delivery(late)
            refund = spec.get("refund")
            if refund:  # after the late amendment, on the latest (seq 3) amounts
                g3, t3 = spec["gross"][1], spec["tax"][1]
                at = late + timedelta(hours=refund["hours"])
                o.effects.append(
                    Effect(
                        refund["id"],
                        "order.refunded",
                        4,
                        at,
                        g3 * refund["share"] // 100,
                        t3 * refund["share"] // 100,
                    )
                )
                draft.wire[refund["id"]] = Delivery(at + timedelta(seconds=25))


class PartialBackfill(FamilyBase):
    """A backfill batch whose refunds arrived before the orders they refund: R4 holds them,
    B3 dead-letters them."""

    def __init__(self) -> None:
        super().__init__("partial_backfill", "wire", "R4", "B3", True)

    def plan(
        self, draft: Draft, partner_id: str, severity: int, k: Keyed, claimed: set[str]
    ) -> Injection | None:
        span = int((draft.end - draft.start).total_seconds())
        at = draft.start + timedelta(
            seconds=k.randint("pbf-at", 0, int(span * 0.75), int(span * 0.9))
        )
        pool = plain(earning(draft, partner_orders(draft, partner_id, claimed)))
        pool = [o for o in pool if o.at < at - timedelta(days=2)]  # refunded before the batch
        chosen = pick(k, "pbf", pool, min(severity, 2))
        if not chosen:
            return None
        specs = [
            {
                "order": o.order_id,
                "id": new_event_id(k, "pbf-id", i),
                "share": k.randint("pbf-share", i, 20, 100),
                # the refunded tax is not the gross's share (a part taxed at another rate)
                "tax_share": k.randint("pbf-tax-share", i, 0, 100),
                "days": k.randint("pbf-days", i, 1, 15),
            }
            for i, o in enumerate(chosen)
        ]
        return Injection(
            self.name,
            partner_id,
            tuple(o.order_id for o in chosen),
            {
                "specs": specs,
                "batch": "bf_" + k.token("pbf-batch", 0, 8),
                "at": acc.iso(at),
                "gap": k.randint("pbf-gap", 0, 900, 2 * 86400),
            },
        )

    def apply(self, draft: Draft, inj: Injection) -> None:
        from datagauntlet.envs.event_recon.world.builder import parse_time

        first = parse_time(inj.params["at"])
        second = first + timedelta(seconds=inj.params["gap"])
        for i, spec in enumerate(inj.params["specs"]):
            o = draft.order(spec["order"])
            at = min(o.at + timedelta(days=spec["days"]), first - timedelta(hours=1))
            o.effects.append(
                Effect(
                    spec["id"],
                    "order.refunded",
                    2,
                    at,
                    o.gross * spec["share"] // 100,
                    min(o.tax * spec["tax_share"] // 100, o.gross * spec["share"] // 100),
                )
            )
            batch = inj.params["batch"]
            draft.wire[spec["id"]] = Delivery(first + timedelta(seconds=10 * i), True, batch)
            draft.wire[o.event_id] = Delivery(second + timedelta(seconds=10 * i), True, batch)


def _two_updates(o: Order, spec: dict[str, Any]) -> tuple[str, datetime, str, datetime]:
    """Amend `o` twice as `spec` says (sequences 2 and 3): their event ids and times."""
    at2 = o.at + timedelta(minutes=spec["minutes"][0])
    at3 = at2 + timedelta(minutes=spec["minutes"][1])
    id2, id3 = spec["ids"]
    o.effects += [
        Effect(id2, "order.updated", 2, at2, spec["gross"][0], spec["tax"][0]),
        Effect(id3, "order.updated", 3, at3, spec["gross"][1], spec["tax"][1]),
    ]
    return id2, at2, id3, at3

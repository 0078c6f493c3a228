"""The derivation faults: per-order overrides in `draft.faults` the builder reads (the
basis, the zone, the rate in force, the bar)."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta
from typing import Any

from datagauntlet.core.seeding import Keyed
from datagauntlet.envs.event_recon.grading import accounting as acc
from datagauntlet.envs.event_recon.world.base_world import add_months, month_start
from datagauntlet.envs.event_recon.world.draft import Delivery, Draft, Order
from datagauntlet.envs.event_recon.world.family_kit import (
    FamilyBase,
    Injection,
    earning,
    partner_orders,
    pick,
    plain,
    program_of,
    single_row,
)
from datagauntlet.envs.event_recon.world.zones import zone


class _Fault(FamilyBase):
    fault: dict[str, Any]

    def candidates(self, draft: Draft, orders: list[Order]) -> list[Order]:
        return orders

    def plan(
        self, draft: Draft, partner_id: str, severity: int, k: Keyed, claimed: set[str]
    ) -> Injection | None:
        pool = self.candidates(draft, earning(draft, partner_orders(draft, partner_id, claimed)))
        chosen = pick(k, self.name, pool, severity)
        if not chosen:
            return None
        return Injection(
            self.name, partner_id, tuple(o.order_id for o in chosen), self.params(draft, chosen, k)
        )

    def params(self, draft: Draft, chosen: list[Order], k: Keyed) -> dict[str, Any]:
        return {}

    def apply(self, draft: Draft, inj: Injection) -> None:
        for oid in inj.orders:
            draft.faults[oid] = {**draft.faults.get(oid, {}), **self.fault_for(inj, oid)}

    def fault_for(self, inj: Injection, order_id: str) -> dict[str, Any]:
        return dict(self.fault)


class GrossNetDivergence(_Fault):
    """Commission computed on the other basis (R8)."""

    def __init__(self) -> None:
        super().__init__("gross_net_divergence", "derivation", "R8", "", False)
        self.fault = {"basis": "flip"}

    def candidates(self, draft: Draft, orders: list[Order]) -> list[Order]:
        return [
            o
            for o in orders
            if o.tax > 0 and all(e.tax != 0 for e in o.effects if e.kind == "order.updated")
        ]


class TimezoneBoundary(_Fault):
    """An order at a month boundary bucketed by the UTC month, not the program zone's (R9)."""

    def __init__(self) -> None:
        super().__init__("timezone_boundary", "derivation", "R9", "", False, True)
        self.fault = {"zone": "UTC"}

    def candidates(self, draft: Draft, orders: list[Order]) -> list[Order]:
        return plain(single_row(draft, orders))

    def params(self, draft: Draft, chosen: list[Order], k: Keyed) -> dict[str, Any]:
        year, month = int(draft.months[0][:4]), int(draft.months[0][5:])
        moves = {}
        for i, o in enumerate(chosen):
            program, _ = program_of(draft, o)
            edge = month_start(*add_months(year, month, 1 + k.randint("tz-edge", i, 0, 1)))
            offset = zone(program.payout_zone).utcoffset(edge.replace(tzinfo=None)) or timedelta()
            minutes = int(offset.total_seconds() // 60)
            step = k.randint("tz-step", i, 1, max(1, abs(minutes) - 1))
            moves[o.order_id] = acc.iso(
                edge - timedelta(minutes=step) if minutes > 0 else edge + timedelta(minutes=step)
            )
        return {"at": moves}

    def apply(self, draft: Draft, inj: Injection) -> None:
        from datagauntlet.envs.event_recon.world.builder import parse_time

        for oid in inj.orders:
            o = draft.order(oid)
            o.at = parse_time(inj.params["at"][oid])
            old = draft.wire[o.event_id].received_at
            draft.wire[o.event_id] = Delivery(o.at + timedelta(seconds=40))
            shift = draft.wire[o.event_id].received_at - old
            draft.extras = [  # its retries move with it
                replace(x, received_at=x.received_at + shift) if x.source_event == o.event_id else x
                for x in draft.extras
            ]
        super().apply(draft, inj)


class RetroactiveProgramChange(_Fault):
    """A mid-window rate change applied to orders placed before it (R7: the rate in force)."""

    def __init__(self) -> None:
        super().__init__("retroactive_program_change", "derivation", "R7", "", False)
        self.fault = {"rate": "latest"}

    def candidates(self, draft: Draft, orders: list[Order]) -> list[Order]:
        out = []
        for o in orders:
            program, _ = program_of(draft, o)
            stamp = acc.iso(o.at)
            if any(
                v.program_id == program.program_id and v.effective_from > stamp
                for v in draft.schedule
            ):
                out.append(o)
        return out


class QualificationBarMismatch(_Fault):
    """The shipped ledger applied a different bar than the program's (R10)."""

    def __init__(self) -> None:
        super().__init__("qualification_bar_mismatch", "derivation", "R10", "", False)

    def plan(
        self, draft: Draft, partner_id: str, severity: int, k: Keyed, claimed: set[str]
    ) -> Injection | None:
        orders = partner_orders(draft, partner_id, claimed)
        over = [o for o in plain(earning(draft, orders))]
        under = []
        for o in plain(orders):
            program, _ = program_of(draft, o)
            if o.gross < program.min_order_minor and o.currency == program.currency:
                under.append(o)
        # Dropping an under-bar order's rows needs no contract: the rarer mode.
        mode = "lowered" if under and k.chance("bar-mode", 0, 0.25) else "raised"
        chosen = pick(k, "bar", under if mode == "lowered" else over, min(severity, 2))
        if not chosen:
            return None
        bars = {}
        for i, o in enumerate(chosen):
            if mode == "raised":
                bars[o.order_id] = o.gross + k.randint("bar-up", i, 1, 800)
            else:
                bars[o.order_id] = max(1, o.gross - k.randint("bar-down", i, 0, 300))
        return Injection(
            self.name, partner_id, tuple(o.order_id for o in chosen), {"bars": bars, "mode": mode}
        )

    def fault_for(self, inj: Injection, order_id: str) -> dict[str, Any]:
        return {"bar": inj.params["bars"][order_id]}

"""The wire families that break a payload: an absent money field (W1), money typed against
the envelope version (W2) and a foreign currency or a third decimal (R12 / W2)."""

from __future__ import annotations

from datetime import timedelta

from datagauntlet.core.seeding import Keyed
from datagauntlet.envs.event_recon.grading import accounting as acc
from datagauntlet.envs.event_recon.world.draft import Delivery, Draft, Effect
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
from datagauntlet.envs.event_recon.world.names import CURRENCIES


class MissingFieldCoercion(FamilyBase):
    """An amendment without the gross field, or a refund without an amount (W1 / R13).
    B4 reads absent as zero."""

    def __init__(self) -> None:
        super().__init__("missing_field_coercion", "wire", "W1", "B4", True)

    def plan(
        self, draft: Draft, partner_id: str, severity: int, k: Keyed, claimed: set[str]
    ) -> Injection | None:
        pool = plain(earning(draft, partner_orders(draft, partner_id, claimed)))
        if draft.tier <= 2:
            # An amendment without a gross on a gross program is repaired by dropping it, and
            # a bare refund by reversing what was booked: tiers 1-2 draw the net-basis
            # amendment only, the mode that needs the contract.
            pool = [o for o in pool if program_of(draft, o)[0].basis == "net"]
        chosen = pick(k, "mfc", pool, min(severity, 2))
        if not chosen:
            return None
        specs = []
        for i, o in enumerate(chosen):
            # A bare refund is nearly always finishable by reversing what was booked, so it
            # is the rarer mode (invariant 7 would reject most plans drawing it).
            refund = draft.tier >= 3 and k.chance("mfc-mode", i, 0.25)
            mode = "refund" if refund else "amendment"
            specs.append(
                {
                    "order": o.order_id,
                    "mode": mode,
                    "id": new_event_id(k, "mfc-id", i),
                    "tax": o.tax * k.randint("mfc-tax", i, 60, 140) // 100 + 1,
                    "minutes": k.randint("mfc-min", i, 60, 20 * 1440),
                }
            )
        return Injection(self.name, partner_id, tuple(o.order_id for o in chosen), {"specs": specs})

    def apply(self, draft: Draft, inj: Injection) -> None:
        for spec in inj.params["specs"]:
            o = draft.order(spec["order"])
            at = min(o.at + timedelta(minutes=spec["minutes"]), draft.end - timedelta(hours=3))
            if spec["mode"] == "amendment":
                o.effects.append(
                    Effect(spec["id"], "order.updated", 2, at, None, min(spec["tax"], o.gross))
                )
            else:
                o.effects.append(Effect(spec["id"], "order.refunded", 2, at, None, None))
            draft.wire[spec["id"]] = Delivery(at + timedelta(seconds=45))


class SchemaDrift(FamilyBase):
    """Money typed against the envelope version: W2 reads by JSON type, B5 by version."""

    def __init__(self) -> None:
        super().__init__("schema_drift", "wire", "W2", "B5", True)

    def plan(
        self, draft: Draft, partner_id: str, severity: int, k: Keyed, claimed: set[str]
    ) -> Injection | None:
        chosen = pick(
            k, "drift", earning(draft, partner_orders(draft, partner_id, claimed)), min(severity, 3)
        )
        if not chosen:
            return None
        return Injection(self.name, partner_id, tuple(o.order_id for o in chosen), {})

    def apply(self, draft: Draft, inj: Injection) -> None:
        for oid in inj.orders:
            o = draft.order(oid)
            d = draft.wire[o.event_id]
            d.money_style = "string" if d.received_at < draft.cutover else "integer"


class CurrencyOrRoundingDrift(FamilyBase):
    """Currency mode: an order billed in a currency the program does not pay in (R12, B6).
    Rounding mode: a money string with a third decimal (W2 half-even, B5 truncates)."""

    def __init__(self) -> None:
        super().__init__("currency_or_rounding_drift", "wire", "R12", "B6", False)

    def plan(
        self, draft: Draft, partner_id: str, severity: int, k: Keyed, claimed: set[str]
    ) -> Injection | None:
        pool = plain(earning(draft, partner_orders(draft, partner_id, claimed)))
        # Dropping a foreign-currency order needs no contract: tiers 1-2 draw rounding only.
        mode = "rounding" if draft.tier <= 2 else k.choice("cur-mode", 0, ("currency", "rounding"))
        if mode == "rounding":
            pool = [o for o in pool if draft.wire[o.event_id].received_at >= draft.cutover]
        chosen = pick(k, "cur", pool, min(severity, 2))
        if not chosen:
            return None
        specs = []
        for i, o in enumerate(chosen):
            program, row = program_of(draft, o)
            other = [c for c in CURRENCIES if c != program.currency]
            gross = o.gross
            if mode == "rounding":  # nudge the order so one minor unit moves its commission
                rate = acc.rate_for(
                    draft.schedule,
                    program.program_id,
                    draft.partners[draft.survivor(row.partner_id)].tier,
                    o.at,
                )
                for g in range(o.gross, o.gross + 400):
                    if g - 1 < program.min_order_minor:
                        continue
                    a = acc.commission(acc.basis_amount(program.basis, g, o.tax), rate)
                    b = acc.commission(acc.basis_amount(program.basis, g - 1, o.tax), rate)
                    if a != b:
                        gross = g
                        break
            specs.append(
                {
                    "order": o.order_id,
                    "currency": k.choice("cur-other", i, other),
                    "gross": gross,
                    "digit": k.randint("cur-digit", i, 6, 9),
                }
            )
        return Injection(
            self.name, partner_id, tuple(o.order_id for o in chosen), {"mode": mode, "specs": specs}
        )

    def activates(self, inj: Injection) -> str:
        return "B6" if inj.params["mode"] == "currency" else "B5"

    def breaks(self, inj: Injection) -> str:
        return "R12" if inj.params["mode"] == "currency" else "W2"

    def apply(self, draft: Draft, inj: Injection) -> None:
        for spec in inj.params["specs"]:
            o = draft.order(spec["order"])
            if inj.params["mode"] == "currency":
                o.currency = spec["currency"]
            else:
                o.gross = spec["gross"]
                draft.wire[o.event_id].money_style = f"sub_minor:{spec['digit']}"

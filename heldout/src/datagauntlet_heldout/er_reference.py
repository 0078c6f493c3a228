"""A held-out reference-data family: a code moved to another program, and the platform's code
cache never picked the move up."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta
from typing import Any

from datagauntlet.core.seeding import Keyed
from datagauntlet.envs.event_recon.grading.accounting import iso
from datagauntlet.envs.event_recon.world.draft import Draft
from datagauntlet.envs.event_recon.world.families import Injection, earning


class StaleCodeRow:
    """A referral code lawfully moved to another program mid-window (a second
    `referral_codes` row), and the builder kept attributing its later orders through the
    code's first row, which its cache still held (B7). R5 attributes an order through the row
    in force at the order, so those orders earn under the new program: its rate, basis, bar
    and zone. The orders before the move are right, which is what sets it apart from a code
    whose cached tier is wrong everywhere (`tier_misconfiguration`)."""

    name = "stale_code_row"
    where = "reference"
    rule = "R5"
    latent_bug = "B7"
    contract_reasoning = False
    bookkeeping_only = False
    summary = (
        "orders after a code moved to another program were still attributed through the "
        "code's earlier row (R5)"
    )
    misreadings: tuple[dict[str, object], ...] = ({"code_row": "first"},)
    refines: tuple[str, ...] = ()

    def plan(
        self, draft: Draft, partner_id: str, severity: int, k: Keyed, claimed: set[str]
    ) -> Injection | None:
        touched = claimed | draft.reserved
        mine = sorted({c.code for c in draft.codes if c.partner_id == partner_id})
        for code in k.shuffled("stale-codes", mine):
            rows = draft.code_rows(code)
            orders = sorted((o for o in draft.orders if o.code == code), key=lambda o: o.at)
            if len(rows) != 1 or len(orders) < 2 or any(o.order_id in touched for o in orders):
                continue
            old = draft.programs[rows[0].program_id]
            others = sorted(
                p for p, prog in draft.programs.items() if p != old.program_id
                and prog.currency == old.currency
            )  # fmt: skip
            after = orders[-min(severity, len(orders) - 1) :]
            lo, hi = orders[len(orders) - len(after) - 1].at, after[0].at
            if not others or not earning(draft, after) or hi - lo < timedelta(minutes=2):
                continue
            span = int((hi - lo).total_seconds())
            moved = lo + timedelta(seconds=k.randint("stale-at", 0, 1, span - 1))
            params = {
                "code": code,
                "program": k.choice("stale-program", 0, others),
                "valid_from": iso(moved),
                "after": [o.order_id for o in after],
            }
            return Injection(self.name, partner_id, tuple(o.order_id for o in orders), params)
        return None

    def apply(self, draft: Draft, inj: Injection) -> None:
        row = draft.code_rows(inj.params["code"])[0]
        moved = replace(row, program_id=inj.params["program"], valid_from=inj.params["valid_from"])
        draft.codes.append(moved)
        for oid in inj.params["after"]:
            draft.faults[oid] = {**draft.faults.get(oid, {}), "row": "first"}

    def seen_on(self, world: Any, order_id: str) -> bool:
        """The order's code has moved, and the row in force at the order is not its first."""
        created = next(
            (e for e in world.events.get(order_id, []) if e.type == "order.created"), None
        )
        if created is None:
            return False
        t = world.terms
        code, at = created.payload.get(t.field("code")), created.payload.get(t.field("time"))
        rows = world.codes.get(code) if isinstance(code, str) else None
        if not rows or len(rows) < 2 or not isinstance(at, str):
            return False
        in_force = [r for r in rows if r["valid_from"] <= at]
        return bool(in_force) and in_force[-1] is not rows[0]

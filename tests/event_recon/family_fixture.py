"""A user's own family module for event-recon (`family_module="family_fixture"`): one extra
family and a split of its own seeds. Nothing of it exists in the package."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from datagauntlet.core.seeding import Keyed
from datagauntlet.envs.event_recon.world.draft import Draft, Extra
from datagauntlet.envs.event_recon.world.families import Injection, earning, partner_orders

ENV = "event-recon"


class BackfillReemission:
    """A backfill batch re-sends a refund already delivered live, under a new event_id: R2
    says it has no effect; the builder's dedup on event_id alone (B1) books the reversal
    twice. The re-sent copy is flagged `backfill` (a live re-emission is not), which is what
    tells it from `duplicate_delivery`."""

    name = "backfill_reemission"
    where = "wire"
    rule = "R2"
    latent_bug = "B1"
    contract_reasoning = True
    bookkeeping_only = True  # dropping the re-sent copy repairs it
    summary = "a backfill batch re-sent a live refund under a new `event_id`; it counted (R2)"
    # its reference step: the misreading that books it, and its mark on the order
    misreadings: tuple[dict[str, object], ...] = ({"dedup_by_seq": False},)
    refines = ("duplicate_delivery",)

    def seen_on(self, world: Any, order_id: str) -> bool:
        first: dict[int, str] = {}
        for ev in world.events.get(order_id, []):
            again = first.setdefault(ev.seq(), ev.event_id) != ev.event_id
            if again and ev.backfill and ev.type == "order.refunded":
                return True
        return False

    def plan(
        self, draft: Draft, partner_id: str, severity: int, k: Keyed, claimed: set[str]
    ) -> Injection | None:
        orders = [
            o
            for o in earning(draft, partner_orders(draft, partner_id, claimed))
            if any(e.kind == "order.refunded" and e.gross for e in o.effects)
        ]
        if not orders:
            return None
        order = k.choice("refund-reemit", 0, orders)
        refund = next(e for e in order.effects if e.kind == "order.refunded" and e.gross)
        new_id = "evt_" + k.token("refund-reemit-id", 0, 16)
        batch = "bf_" + k.token("refund-reemit-batch", 0, 8)
        params = {"source": refund.event_id, "id": new_id, "batch": batch}
        return Injection(self.name, partner_id, (order.order_id,), params)

    def apply(self, draft: Draft, inj: Injection) -> None:
        source = inj.params["source"]
        at = draft.wire[source].received_at + timedelta(hours=5)
        draft.extras.append(Extra(source, inj.params["id"], 1, at, inj.params["batch"]))


FAMILIES = [BackfillReemission()]
SPLITS = {"holdout": [1000 + 7 * i for i in range(8)]}

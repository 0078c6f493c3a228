"""What every defect family is built from: the injection it plans, the protocol it
follows, and the helpers that pick a partner's orders and draw new event ids."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

from datagauntlet.core.seeding import Keyed
from datagauntlet.envs.event_recon.grading import accounting as acc
from datagauntlet.envs.event_recon.grading.truth import order_lines
from datagauntlet.envs.event_recon.world.draft import Draft, Order
from datagauntlet.envs.event_recon.world.records import Program, ReferralCode


@dataclass(frozen=True)
class Injection:
    family: str
    partner_id: str
    orders: tuple[str, ...]  # orders this injection edits (claimed from the plan)
    params: dict[str, Any] = field(default_factory=dict)


class Family(Protocol):
    name: str
    where: str  # "wire", "reference" or "derivation"
    rule: str  # the contract rule it breaks
    latent_bug: str  # the builder bug it activates ("" for a derivation fault)
    contract_reasoning: bool  # detection needs idempotency, ordering or wire typing

    def plan(
        self, draft: Draft, partner_id: str, severity: int, k: Keyed, claimed: set[str]
    ) -> Injection | None: ...

    def apply(self, draft: Draft, inj: Injection) -> None: ...


# --- helpers -------------------------------------------------------------------------


def partner_orders(draft: Draft, partner_id: str, claimed: set[str]) -> list[Order]:
    """Unclaimed orders attributed directly to the partner, outside any backfill batch."""
    # Only an order on one of the partner's codes can be: the rest skip the row lookup.
    codes = {c.code for c in draft.codes if c.partner_id == partner_id}
    out = []
    for o in draft.orders:
        if o.code not in codes or o.order_id in claimed or o.order_id in draft.reserved:
            continue
        row = draft.code_row_at(o.code, acc.iso(o.at))
        if row is None or row.partner_id != partner_id:
            continue
        if any(draft.wire[e].backfill for e in o.events()):
            continue
        out.append(o)
    return out


def earning(draft: Draft, orders: list[Order]) -> list[Order]:
    return [o for o in orders if any(order_lines(draft, o).values())]


def plain(orders: list[Order]) -> list[Order]:
    return [o for o in orders if not o.effects]


def single_row(draft: Draft, orders: list[Order]) -> list[Order]:
    return [o for o in orders if len(draft.code_rows(o.code)) == 1]


def pick(k: Keyed, label: str, orders: list[Order], n: int) -> list[Order] | None:
    if not orders:
        return None
    return k.sample(label, orders, min(n, len(orders)))


def program_of(draft: Draft, order: Order) -> tuple[Program, ReferralCode]:
    row = draft.code_row_at(order.code, acc.iso(order.at))
    assert row is not None
    return draft.programs[row.program_id], row


def new_event_id(k: Keyed, label: str, i: int | str) -> str:
    return "evt_" + k.token(label, i, 16)


@dataclass
class FamilyBase:
    name: str = ""
    where: str = ""
    rule: str = ""
    latent_bug: str = ""
    contract_reasoning: bool = False
    # "Every mode can be finished by bookkeeping alone": a hint for drawing plans only
    # (invariant 7 itself judges repairability on the built task, never by this flag).
    bookkeeping_only: bool = False

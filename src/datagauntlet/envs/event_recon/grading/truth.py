"""The correct ledger of a draft, computed forward from its logical orders (R1-R14, W1)."""

from __future__ import annotations

from collections import defaultdict

from datagauntlet.envs.event_recon.grading import accounting as acc
from datagauntlet.envs.event_recon.world.draft import Draft, Order
from datagauntlet.envs.event_recon.world.records import Projection

# {order_id: {(partner_id, period): minor}}
OrderLines = dict[str, dict[tuple[str, str], int]]


def order_lines(draft: Draft, order: Order) -> dict[tuple[str, str], int]:
    row = draft.code_row_at(order.code, acc.iso(order.at))
    if row is None:  # R5: a code on no referral row earns nothing
        return {}
    program = draft.programs[row.program_id]
    if order.currency != program.currency:  # R12
        return {}
    partner = draft.survivor(row.partner_id)  # R6
    gross, tax = order.gross, order.tax
    effects = sorted(order.effects, key=lambda e: e.seq)  # R3: by seq, not delivery
    for effect in effects:
        if effect.kind == "order.updated":
            gross = effect.gross if effect.gross is not None else gross  # W1: absent = unchanged
            tax = effect.tax if effect.tax is not None else tax
    if not acc.qualifies(gross, program):  # R10
        return {}
    rate = acc.rate_for(draft.schedule, program.program_id, draft.partners[partner].tier, order.at)
    lines: dict[tuple[str, str], int] = defaultdict(int)
    basis = acc.basis_amount(program.basis, gross, tax)
    lines[(partner, acc.period_of(order.at, program.payout_zone))] += acc.commission(basis, rate)
    left_gross, left_tax = gross, tax
    for effect in effects:
        if effect.kind != "order.refunded":
            continue
        r_gross = effect.gross if effect.gross is not None else left_gross  # R13: all that is left
        r_tax = effect.tax if effect.tax is not None else left_tax
        left_gross -= r_gross
        left_tax -= r_tax
        refund_basis = acc.basis_amount(program.basis, r_gross, r_tax)
        period = acc.period_of(effect.at, program.payout_zone)
        lines[(partner, period)] -= acc.commission(refund_basis, rate)
    return dict(lines)


def all_order_lines(draft: Draft) -> OrderLines:
    return {o.order_id: order_lines(draft, o) for o in draft.orders}


def project(draft: Draft, lines: OrderLines | None = None, manual: bool = True) -> Projection:
    lines = all_order_lines(draft) if lines is None else lines
    totals: dict[str, dict[str, int]] = {p: defaultdict(int) for p in draft.partners}
    for per_order in lines.values():
        for (partner, period), amount in per_order.items():
            totals[partner][period] += amount
    for entry in draft.manual if manual else ():  # R14: authorised adjustments stand
        totals[entry.partner_id][entry.period] += entry.amount_minor
    return {p: {k: v for k, v in sorted(t.items()) if v} for p, t in sorted(totals.items())}

"""The brand's statement: right about volume, wrong about money under its own policy.

Its policy (published in INTEGRATION.md): per partner the code was issued to (the brand knows
nothing of the platform's merges) and UTC calendar month of the order, the distinct orders it
knows and their latest gross; commission at the program's `standard` tier rate in force at the
order, on gross, with no qualification bar, no currency check and no refunds netted.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Collection

from datagauntlet.envs.event_recon.grading import accounting as acc
from datagauntlet.envs.event_recon.world.draft import Draft, Order
from datagauntlet.envs.event_recon.world.records import Projection, StatementRow


def _latest_gross(order: Order) -> int:
    gross = order.gross
    for effect in sorted(order.effects, key=lambda e: e.seq):
        if effect.kind == "order.updated" and effect.gross is not None:
            gross = effect.gross
    return gross


def statement_rows(draft: Draft, partners: Collection[str] | None = None) -> list[StatementRow]:
    """The statement's rows; with `partners`, only theirs."""
    cells: dict[tuple[str, str], list[int]] = defaultdict(lambda: [0, 0, 0])
    for order in draft.orders:
        row = draft.code_row_at(order.code, acc.iso(order.at))
        if row is None or (partners is not None and row.partner_id not in partners):
            continue
        partner = row.partner_id  # the brand knows the code's holder, not the platform's merges
        gross = _latest_gross(order)
        rate = acc.rate_for(draft.schedule, row.program_id, "standard", order.at)
        cell = cells[(partner, acc.month_of(order.at))]
        cell[0] += 1
        cell[1] += gross
        cell[2] += acc.commission(gross, rate)
    return [
        StatementRow(p, draft.partners[p].name, period, n, gross, paid)
        for (p, period), (n, gross, paid) in sorted(cells.items())
    ]


def statement_projection(draft: Draft, partners: Collection[str] | None = None) -> Projection:
    """The statement as a projection; with `partners`, only theirs (a plan's check compares
    only its broken partners, so it skips pricing the rest)."""
    out: dict[str, dict[str, int]] = defaultdict(dict)
    for r in statement_rows(draft, partners):
        if r.commission_minor:
            out[r.partner_id][r.period] = r.commission_minor
    return dict(out)

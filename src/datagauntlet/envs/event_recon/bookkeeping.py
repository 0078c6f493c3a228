"""The repairs that need no contract: what a policy that never reads INTEGRATION.md and
computes no commission can still do to the shipped ledger.

- drop the rows of an event that re-emits an earlier (order, seq);
- drop the rows of an amendment delivered after a later-seq one (superseded);
- drop the rows of an amendment with no gross field;
- drop the rows of an order billed in a currency its program does not pay in;
- re-key rows of a merged partner to the partner it was merged into;
- re-bucket every event row by its program's own zone.

Invariant 7 bounds how many of a task's broken partners these repairs finish.
"""

from __future__ import annotations

from collections import defaultdict

from datagauntlet.envs.event_recon import accounting as acc
from datagauntlet.envs.event_recon.builder import parse_time
from datagauntlet.envs.event_recon.draft import Draft
from datagauntlet.envs.event_recon.records import Envelope, LedgerEntry, Projection


def bookkeeping_projection(
    draft: Draft, envelopes: list[Envelope], entries: list[LedgerEntry]
) -> Projection:
    s = draft.schema
    seen_ids: set[str] = set()
    first_by_key: dict[tuple[str, int], str] = {}
    top_seq: dict[str, int] = {}
    drop: set[str] = set()
    foreign: set[str] = set()
    created_at: dict[str, str] = {}
    event_time: dict[str, str] = {}
    for env in envelopes:
        if env.event_id in seen_ids:
            continue
        seen_ids.add(env.event_id)
        p = env.payload
        order = str(p.get(s.order_field))
        seq = int(p.get("seq", 0))
        event_time[env.event_id] = p.get(s.time_field, "")
        key = (order, seq)
        if key in first_by_key:
            drop.add(env.event_id)
        else:
            first_by_key[key] = env.event_id
        if env.event_type == "order.created":
            created_at.setdefault(order, p.get(s.time_field, ""))
            row = draft.code_row_at(p.get(s.code_field, ""), p.get(s.time_field, ""))
            if row is not None and p.get("currency") != draft.programs[row.program_id].currency:
                foreign.add(order)
        if env.event_type == "order.updated":
            if s.gross_field not in p:
                drop.add(env.event_id)
            if seq < top_seq.get(order, 0):
                drop.add(env.event_id)
            top_seq[order] = max(top_seq.get(order, 0), seq)
    totals: dict[str, dict[str, int]] = {p: defaultdict(int) for p in draft.partners}
    for e in entries:
        if e.event_id in drop or (e.order_ref in foreign):
            continue
        partner = draft.survivor(e.partner_id) if e.partner_id in draft.partners else e.partner_id
        period = e.period
        if e.event_id is not None:
            stamp = (
                event_time.get(e.event_id)
                if e.kind == "reversal"
                else created_at.get(str(e.order_ref))
            )
            if stamp:
                period = acc.period_of(parse_time(stamp), draft.programs[e.program_id].payout_zone)
        totals.setdefault(partner, defaultdict(int))[period] += e.amount_minor
    return {p: {k: v for k, v in sorted(t.items()) if v} for p, t in sorted(totals.items())}

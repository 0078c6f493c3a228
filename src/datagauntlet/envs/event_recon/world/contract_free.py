"""The repairs that need no contract: what a policy that never reads INTEGRATION.md and
computes no commission can still do to the shipped ledger.

The five of the original attack:

- drop the rows of an event that re-emits an earlier (order, seq);
- drop the rows of an amendment delivered after a later-seq one (superseded), or with no
  gross field;
- drop the rows of an order billed in a currency its program does not pay in;
- re-key rows of a merged partner to the partner it was merged into;
- re-bucket every event row by its program's own zone.

And the widenings found since (`repairs.py` runs the same ones):

- `under_bar`: drop the rows of an order whose latest gross is under the database's bar;
- `refund_all`: a refund with no amount reverses everything the order booked;
- `refund_full` / `refund_share`: a refund the builder dropped (delivered before its order)
  reverses the booked accrual scaled by refunded / latest gross, rounded half up;
- `tier_scale`: an order whose code caches a tier other than its holder's has its booked rows
  scaled by the ratio of the two tiers' rates in the database's schedule, rounded half up
  (`scaling.tier_ratios`, which `workspace_only_scaled` runs).

Invariant 7 bounds how many of a task's broken partners all of these together finish, so the
list must hold every repair a shipped workspace-only policy makes
(tests/event_recon/test_er_invariant7.py plays each one against it).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from datagauntlet.envs.event_recon.grading import accounting as acc
from datagauntlet.envs.event_recon.world.builder import parse_time
from datagauntlet.envs.event_recon.world.draft import Draft
from datagauntlet.envs.event_recon.world.records import Envelope, LedgerEntry, Projection

WIDENINGS = ("under_bar", "refund_all", "refund_full", "refund_share", "tier_scale")


def _minor(value: Any) -> int | None:
    try:
        return acc.money_from_wire(value)
    except (ValueError, ArithmeticError):
        return None


def _rate(draft: Draft, program_id: str, tier: str, at: str) -> int | None:
    versions = [
        v
        for v in draft.schedule
        if v.program_id == program_id and v.tier == tier and v.effective_from <= at
    ]
    return max(versions, key=lambda v: v.effective_from).rate_bps if versions else None


def tier_ratios(draft: Draft, envelopes: list[Envelope]) -> dict[str, tuple[int, int]]:
    """Orders whose code caches a tier other than its holder's: (holder's rate, cached rate)."""
    s = draft.schema
    out: dict[str, tuple[int, int]] = {}
    for env in envelopes:
        if env.event_type != "order.created":
            continue
        p = env.payload
        at = str(p.get(s.time_field, ""))
        row = draft.code_row_at(str(p.get(s.code_field, "")), at)
        if row is None or row.partner_id not in draft.partners:
            continue
        holder = draft.partners[draft.survivor(row.partner_id)]
        if holder.tier == row.tier:
            continue
        right = _rate(draft, row.program_id, holder.tier, at)
        cached = _rate(draft, row.program_id, row.tier, at)
        if right and cached:
            out[str(p.get(s.order_field))] = (right, cached)
    return out


@dataclass
class StreamFacts:
    """What one pass over the deliveries tells the repairs, first delivery of each id only."""

    drop: set[str] = field(default_factory=set)  # events whose rows go
    drop_orders: set[str] = field(default_factory=set)  # orders whose rows go
    created_at: dict[str, str] = field(default_factory=dict)
    event_time: dict[str, str] = field(default_factory=dict)
    latest: dict[str, tuple[int, Any]] = field(default_factory=dict)  # order -> (seq, gross)
    program_of: dict[str, str] = field(default_factory=dict)
    bare_refunds: list[tuple[str, str]] = field(default_factory=list)  # (order, event)
    early_refunds: list[tuple[str, str, Any]] = field(default_factory=list)  # (order, ev, gross)


def read_stream(draft: Draft, envelopes: list[Envelope]) -> StreamFacts:
    """Re-emitted and superseded events, orders in a foreign currency, each order's latest
    gross, and the refunds with no amount or delivered before their order."""
    s = draft.schema
    facts = StreamFacts()
    seen_ids: set[str] = set()
    first_by_key: dict[tuple[str, int], str] = {}
    top_seq: dict[str, int] = {}
    for env in envelopes:
        if env.event_id in seen_ids:
            continue
        seen_ids.add(env.event_id)
        p = env.payload
        order = str(p.get(s.order_field))
        seq = int(p.get("seq", 0))
        facts.event_time[env.event_id] = p.get(s.time_field, "")
        key = (order, seq)
        if key in first_by_key:
            facts.drop.add(env.event_id)
        else:
            first_by_key[key] = env.event_id
        if env.event_type == "order.created":
            _read_created(draft, facts, order, p)
        elif env.event_type == "order.updated":
            if s.gross_field not in p:
                facts.drop.add(env.event_id)
            elif seq >= facts.latest.get(order, (0, None))[0]:
                facts.latest[order] = (seq, p[s.gross_field])
            if seq < top_seq.get(order, 0):
                facts.drop.add(env.event_id)
            top_seq[order] = max(top_seq.get(order, 0), seq)
        elif s.gross_field not in p:
            facts.bare_refunds.append((order, env.event_id))
        elif order not in facts.created_at:
            facts.early_refunds.append((order, env.event_id, p[s.gross_field]))
    return facts


def _read_created(draft: Draft, facts: StreamFacts, order: str, p: dict[str, Any]) -> None:
    s = draft.schema
    if order not in facts.created_at:
        facts.created_at[order] = p.get(s.time_field, "")
        if facts.latest.get(order, (0, None))[0] <= 1:
            facts.latest[order] = (1, p.get(s.gross_field))
    row = draft.code_row_at(p.get(s.code_field, ""), p.get(s.time_field, ""))
    if row is not None:
        facts.program_of.setdefault(order, row.program_id)
        if p.get("currency") != draft.programs[row.program_id].currency:
            facts.drop_orders.add(order)


def _drop_under_bar(draft: Draft, facts: StreamFacts) -> None:
    for order, (_, gross) in facts.latest.items():
        minor = _minor(gross)
        program = draft.programs.get(facts.program_of.get(order, ""))
        if program is not None and minor is not None and minor < program.min_order_minor:
            facts.drop_orders.add(order)


def _refund_inserts(
    facts: StreamFacts, kept: list[LedgerEntry], widen: tuple[str, ...]
) -> tuple[list[tuple[str, str, int]], dict[str, LedgerEntry]]:
    """The reversals the refund widenings book, as (order, refund event, amount), and each
    order's kept accrual they are modelled on."""
    booked: dict[str, int] = defaultdict(int)
    accrual: dict[str, LedgerEntry] = {}
    for e in kept:
        if e.order_ref is not None:
            booked[e.order_ref] += e.amount_minor
            if e.kind == "accrual":
                accrual[e.order_ref] = e
    inserts: list[tuple[str, str, int]] = []
    if "refund_all" in widen:
        inserts += [(o, e, -booked[o]) for o, e in facts.bare_refunds if booked.get(o)]
    for o, e, gross in facts.early_refunds:
        total, part = _minor(facts.latest.get(o, (0, None))[1]), _minor(gross)
        if o not in accrual or not total or part is None:
            continue
        if "refund_full" in widen and part == total:
            inserts.append((o, e, -booked[o]))
        elif "refund_share" in widen:
            amount = accrual[o].amount_minor
            inserts.append((o, e, -((amount * part * 2 + total) // (2 * total))))
    return inserts, accrual


def bookkeeping_projection(
    draft: Draft,
    envelopes: list[Envelope],
    entries: list[LedgerEntry],
    widen: tuple[str, ...] = WIDENINGS,
) -> Projection:
    """The balance projection of `entries` after every repair in `widen` and the five."""
    facts = read_stream(draft, envelopes)
    if "under_bar" in widen:
        _drop_under_bar(draft, facts)
    kept = [
        e for e in entries if e.event_id not in facts.drop and e.order_ref not in facts.drop_orders
    ]
    inserts, accrual = _refund_inserts(facts, kept, widen)
    ratios = tier_ratios(draft, envelopes) if "tier_scale" in widen else {}
    totals: dict[str, dict[str, int]] = {p: defaultdict(int) for p in draft.partners}

    def add(partner_id: str, period: str, amount: int) -> None:
        if partner_id in draft.partners:
            partner_id = draft.survivor(partner_id)
        totals.setdefault(partner_id, defaultdict(int))[period] += amount

    for e in kept:
        period = e.period
        if e.event_id is not None:
            stamp = (
                facts.event_time.get(e.event_id)
                if e.kind == "reversal"
                else facts.created_at.get(str(e.order_ref))
            )
            if stamp:
                period = acc.period_of(parse_time(stamp), draft.programs[e.program_id].payout_zone)
        amount = e.amount_minor
        if e.order_ref in ratios:
            right, cached = ratios[e.order_ref]
            amount = (2 * amount * right + cached) // (2 * cached)
        add(e.partner_id, period, amount)
    for order, event, amount in inserts:
        template = accrual[order]
        stamp = facts.event_time.get(event, "")
        zone_name = draft.programs[template.program_id].payout_zone
        add(
            template.partner_id,
            acc.period_of(parse_time(stamp), zone_name) if stamp else template.period,
            amount,
        )
    return {p: {k: v for k, v in sorted(t.items()) if v} for p, t in sorted(totals.items())}

"""The platform's ledger builder: what produced the shipped `ledger_entries`.

It implements the contract with seven latent bugs, each inert in a clean world:

- B1 dedup on `event_id` only (a re-emitted effect with a new id is booked again);
- B2 delivery-order processing (amendments overwrite in arrival order, not by seq);
- B3 dead-lettering orphaned effects (an effect before its order is dropped, not held);
- B4 coercing an absent value to zero (W1 says absent means unchanged, or all that is left);
- B5 taking a type violation literally (money is read by envelope version, not by JSON type);
- B6 ignoring a currency mismatch (a foreign-currency order accrues anyway);
- B7 trusting its code cache (partner and tier come from `referral_codes`, merges ignored).

Derivation faults (the four derivation families) are per-order overrides in `draft.faults`;
`row: "first"` is the B7 cache gone stale on a code that moved (the code's first row used).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from decimal import ROUND_DOWN, Decimal
from functools import lru_cache

from datagauntlet.core.seeding import Keyed
from datagauntlet.envs.event_recon.grading import accounting as acc
from datagauntlet.envs.event_recon.world.draft import Draft
from datagauntlet.envs.event_recon.world.records import Envelope, IngestRow, LedgerEntry, Program

_STAMP = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", re.ASCII)


@lru_cache(maxsize=65536)
def parse_time(text: str) -> datetime:
    # Each world's stamps are new to the cache: the one shape `iso` writes, checked by a
    # pattern, is read by `fromisoformat` (a quarter of int() on its fields, a tenth of
    # strptime); anything else goes to strptime, whose leniency it keeps.
    if _STAMP.fullmatch(text) is not None:
        return datetime.fromisoformat(text)  # "Z" reads as UTC
    return datetime.strptime(text, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)


LATENT_BUGS = {
    "B1": "dedup on event_id only",
    "B2": "delivery-order processing",
    "B3": "dead-lettering orphaned effects",
    "B4": "coercing an absent value to zero",
    "B5": "taking a type violation literally",
    "B6": "ignoring a currency mismatch",
    "B7": "trusting its code cache",
}


def builder_money(value: object, version: int) -> int:
    if value is None:
        return 0  # B4
    if version == 1:
        return int(float(value))  # type: ignore[arg-type]  # B5: "129.90" becomes 129 minor
    return int((Decimal(str(value)) * 100).to_integral_value(rounding=ROUND_DOWN))  # B5


@dataclass
class _Order:
    partner: str
    program: Program
    tier: str
    currency: str
    at: datetime
    gross: int
    tax: int
    booked: int
    period: str
    fault: dict[str, object]
    top_seq: int = 1
    refunded: tuple[int, int] = (0, 0)


def _qualifies(o: _Order) -> bool:
    program = o.program
    if "bar" in o.fault:
        program = replace(program, min_order_minor=int(o.fault["bar"]))  # type: ignore[call-overload]
    return acc.qualifies(o.gross, program)


def _rate(draft: Draft, o: _Order) -> int:
    if o.fault.get("rate") == "latest":  # retroactive: the newest version for every order
        versions = [
            v for v in draft.schedule if v.program_id == o.program.program_id and v.tier == o.tier
        ]
        return max(versions, key=lambda v: v.effective_from).rate_bps
    return acc.rate_for(draft.schedule, o.program.program_id, o.tier, o.at)


def _basis(o: _Order, gross: int, tax: int) -> int:
    basis = o.program.basis
    if o.fault.get("basis") == "flip":
        basis = "net" if basis == "gross" else "gross"
    return acc.basis_amount(basis, gross, tax)


def _period(o: _Order, at: datetime) -> str:
    return acc.period_of(at, str(o.fault.get("zone", o.program.payout_zone)))


# What the platform did with each delivery, in order: (delivery, order id, status).
IngestLog = list[tuple[Envelope, str | None, str]]


class _Replay:
    """One replay of the deliveries: the platform's state, its ledger and its ingest log."""

    def __init__(self, draft: Draft, fixed: frozenset[str]) -> None:
        self.draft = draft
        self.s = draft.schema
        self.fixed = fixed
        self.keyed = Keyed(f"event-recon/{draft.seed}/entries")
        self.entries: list[LedgerEntry] = []
        self.log: IngestLog = []
        self.seen: set[str] = set()
        self.seen_keys: set[tuple[str, int]] = set()
        self.state: dict[str, _Order] = {}
        self.held: dict[str, list[Envelope]] = {}

    def money(self, value: object, version: int, previous: int) -> int:
        if value is None and "B4" in self.fixed:
            return previous
        if value is not None and "B5" in self.fixed:
            return acc.money_from_wire(value)
        return builder_money(value, version)

    def accrues(self, o: _Order) -> bool:
        return _qualifies(o) and not ("B6" in self.fixed and o.currency != o.program.currency)

    def commission(self, o: _Order) -> int:
        if not self.accrues(o):
            return 0
        return acc.commission(_basis(o, o.gross, o.tax), _rate(self.draft, o))

    def book(
        self, o: _Order, order_id: str, event_id: str, kind: str, period: str, amount: int
    ) -> None:
        if amount == 0:
            return
        self.entries.append(
            LedgerEntry(
                entry_id="le_" + self.keyed.token("entry", f"{event_id}/{len(self.entries)}", 10),
                partner_id=o.partner,
                program_id=o.program.program_id,
                order_ref=order_id,
                event_id=event_id,
                kind=kind,
                period=period,
                amount_minor=amount,
                currency=o.program.currency,
            )
        )

    def effect(self, env: Envelope, o: _Order, order_id: str) -> None:
        """An amendment or a refund of an order already open."""
        s, p = self.s, env.payload
        seq = int(p.get("seq", 0))
        if env.event_type == "order.updated":
            if "B2" in self.fixed and seq < o.top_seq:
                return
            o.top_seq = max(o.top_seq, seq)
            o.gross = self.money(p.get(s.gross_field), env.version, o.gross)  # B2, B4
            o.tax = self.money(p.get(s.tax_field), env.version, o.tax)
            now = self.commission(o)
            self.book(o, order_id, env.event_id, "adjustment", o.period, now - o.booked)
            o.booked = now
            return
        left_gross, left_tax = o.gross - o.refunded[0], o.tax - o.refunded[1]
        r_gross = self.money(p.get(s.gross_field), env.version, left_gross)
        r_tax = self.money(p.get(s.tax_field), env.version, left_tax)
        o.refunded = (o.refunded[0] + r_gross, o.refunded[1] + r_tax)
        if not self.accrues(o):
            return
        amount = -acc.commission(_basis(o, r_gross, r_tax), _rate(self.draft, o))
        at = parse_time(p[s.time_field])
        self.book(o, order_id, env.event_id, "reversal", _period(o, at), amount)

    def open_order(self, env: Envelope, order_id: str) -> str:
        """An `order.created`: accrue it and replay what was held for it; returns the status."""
        s, p, draft, fixed = self.s, env.payload, self.draft, self.fixed
        at = parse_time(p[s.time_field])
        fault = draft.faults.get(order_id, {})
        row = draft.code_row_at(p.get(s.code_field, ""), p[s.time_field])
        if row is not None and fault.get("row") == "first" and "B7" not in fixed:
            row = min(draft.code_rows(row.code), key=lambda r: r.valid_from)  # B7: stale
        if row is None:
            return "dead_letter"
        partner, tier = row.partner_id, row.tier  # B7: the cached partner and tier
        if "B7" in fixed:
            partner = draft.survivor(row.partner_id)
            tier = draft.partners[partner].tier
        o = _Order(
            partner=partner,
            program=draft.programs[row.program_id],
            tier=str(fault.get("tier", tier)),
            currency=str(p.get("currency")),  # B6: never compared
            at=at,
            gross=self.money(p.get(s.gross_field), env.version, 0),
            tax=self.money(p.get(s.tax_field), env.version, 0),
            booked=0,
            period="",
            fault=fault,
        )
        o.period = _period(o, at)
        o.booked = self.commission(o)
        self.book(o, order_id, env.event_id, "accrual", o.period, o.booked)
        self.state[order_id] = o
        for later in sorted(self.held.pop(order_id, []), key=lambda e: int(e.payload["seq"])):
            self.effect(later, o, order_id)
        return "applied"

    def deliver(self, env: Envelope) -> None:
        """One delivery, logged in `events_ingested` with what the platform did with it."""
        p = env.payload
        order_id = p.get(self.s.order_field)
        if env.event_id in self.seen:
            self.log.append((env, order_id, "retry_ignored"))
            return
        self.seen.add(env.event_id)  # B1: the only dedup key
        key = (str(order_id), int(p.get("seq", 0)))
        if "B1" in self.fixed and key in self.seen_keys:
            self.log.append((env, order_id, "applied"))
            return
        self.seen_keys.add(key)
        if env.event_type == "order.created":
            status = self.open_order(env, order_id)
        else:
            status = "applied"
            o = self.state.get(order_id)
            if o is None:
                status = "dead_letter"  # B3
                if "B3" in self.fixed:
                    self.held.setdefault(str(order_id), []).append(env)
                    status = "held"
            else:
                self.effect(env, o, order_id)
        self.log.append((env, order_id, status))


def replay(
    draft: Draft, envelopes: list[Envelope], fixed: frozenset[str] = frozenset()
) -> tuple[list[LedgerEntry], IngestLog]:
    """`build`, its ingest log left as (delivery, order, status): a plan's checks never read
    it, so its rows are made only for the world kept (`ingest_rows`)."""
    state = _Replay(draft, fixed)
    for env in envelopes:
        state.deliver(env)
    return state.entries, state.log


def ingest_rows(log: IngestLog) -> list[IngestRow]:
    return [IngestRow(e.event_id, e.received_at, e.event_type, o, status) for e, o, status in log]


def build(
    draft: Draft, envelopes: list[Envelope], fixed: frozenset[str] = frozenset()
) -> tuple[list[LedgerEntry], list[IngestRow]]:
    """Replay the deliveries as the platform did. `fixed` names latent bugs to leave out
    (tests use it to show which bug a family activates)."""
    entries, log = replay(draft, envelopes, fixed)
    return entries, ingest_rows(log)

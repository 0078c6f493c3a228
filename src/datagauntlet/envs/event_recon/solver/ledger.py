"""The contract's ledger, computed from the raw delivery stream by the solver's own code.

This is a third implementation of the rules (after the generator's and the reconciler's),
written from INTEGRATION.md's text. It reads only what `View` holds (the four files, as the
tools returned them) and `Terms` (the contract's parameters). Zone rules come from the pinned
zone table, the one public input every implementation shares.

`order_lines` is the contract's engine; `books.compute` runs it (or, for a misreading, the
delivery-by-delivery engine in `delivery.py`) over every order on the wire.
Both engines open an order (`open_order`), take its basis (`basis_of`) and size a refund
(`refund_parts`) with the same steps; they differ in how they sequence the deliveries.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from datetime import UTC, datetime
from decimal import ROUND_DOWN, ROUND_HALF_EVEN, Decimal
from typing import Any

from datagauntlet.envs.event_recon.solver.reading import CONTRACT, Reading
from datagauntlet.envs.event_recon.solver.terms import ProgramTerms, Terms
from datagauntlet.envs.event_recon.solver.view import Row, View
from datagauntlet.envs.event_recon.world.zones import zone

Key = tuple[str, str]  # (partner_id, period)
Lines = dict[Key, int]


@dataclass(frozen=True)
class Event:
    delivery: int
    event_id: str
    type: str
    version: int
    attempt: int
    backfill: bool
    batch: str | None
    payload: dict[str, Any]

    def seq(self) -> int:
        value = self.payload.get("seq", 0)
        return value if isinstance(value, int) and not isinstance(value, bool) else 0


@dataclass(frozen=True)
class Line:
    """One booked quantity: an order's commission or a refund's reversal."""

    order_id: str
    event_id: str
    kind: str  # "accrual" or "reversal"
    partner_id: str
    program_id: str
    period: str
    amount: int
    currency: str


@dataclass
class Ledger:
    """What a reading says is owed: per-order lines and the partners' projection."""

    lines: dict[str, list[Line]] = field(default_factory=dict)  # order id -> its lines
    manual: list[Row] = field(default_factory=list)

    def order_lines(self, order_id: str) -> Lines:
        return aggregate(self.lines.get(order_id, []))


def aggregate(lines: list[Line]) -> Lines:
    out: dict[Key, int] = defaultdict(int)
    for line in lines:
        out[(line.partner_id, line.period)] += line.amount
    return {k: v for k, v in sorted(out.items()) if v}


def parse_time(text: str) -> datetime:
    return datetime.strptime(text, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)


def events_by_order(view: View, terms: Terms) -> dict[str, list[Event]]:
    """Every delivery, grouped by order id, in delivery order."""
    order_field = terms.field("order")
    out: dict[str, list[Event]] = defaultdict(list)
    for n, env in enumerate(view.webhooks, start=1):
        payload = env.get("payload") or {}
        order = payload.get(order_field)
        if not isinstance(order, str):
            continue
        out[order].append(
            Event(
                delivery=int(env.get("delivery", n)),
                event_id=str(env.get("event_id")),
                type=str(env.get("type")),
                version=int(env.get("version", 1)),
                attempt=int(env.get("attempt", 1)),
                backfill=bool(env.get("backfill")),
                batch=env.get("batch"),
                payload=payload,
            )
        )
    return dict(out)


def money(value: Any, version: int, reading: Reading) -> int:
    """W2 as written (by JSON type), or the misreading (by envelope version)."""
    if value is None:
        return 0
    if reading.money_by_type:
        if isinstance(value, bool):
            raise ValueError("a boolean money value")
        if isinstance(value, int):
            return value
        return int((Decimal(str(value)) * 100).to_integral_value(rounding=ROUND_HALF_EVEN))
    if version == 1:
        return int(float(value))
    return int((Decimal(str(value)) * 100).to_integral_value(rounding=ROUND_DOWN))


def commission(basis_minor: int, rate_bps: int, rounding: str) -> int:
    sign = -1 if basis_minor < 0 else 1
    num, den = abs(basis_minor) * rate_bps, 10_000
    q, r = divmod(num, den)
    if rounding == "half_even":
        if 2 * r > den or (2 * r == den and q % 2 == 1):
            q += 1
    elif 2 * r >= den:  # half up
        q += 1
    return sign * q


class World:
    """The workspace's reference data, indexed once."""

    def __init__(self, view: View, terms: Terms) -> None:
        self.terms = terms
        self.partners = {p["partner_id"]: p for p in view.table("partners")}
        self.codes: dict[str, list[Row]] = defaultdict(list)
        for row in view.table("referral_codes"):
            self.codes[row["code"]].append(row)
        for rows in self.codes.values():
            rows.sort(key=lambda r: r["valid_from"])
        self.events = events_by_order(view, terms)
        self.ledger_rows = view.table("ledger_entries")

    def survivor(self, partner_id: str) -> str:
        seen: set[str] = set()
        while partner_id in self.partners and self.partners[partner_id].get("merged_into"):
            if partner_id in seen:
                break
            seen.add(partner_id)
            partner_id = self.partners[partner_id]["merged_into"]
        return partner_id

    def code_row(self, code: Any, at: str, reading: Reading) -> Row | None:
        rows = self.codes.get(code) if isinstance(code, str) else None
        if not rows:
            return None
        if reading.code_row == "first":
            return rows[0]
        best = None
        for row in rows:
            if row["valid_from"] <= at:
                best = row
        return best

    def rate(self, program_id: str, tier: str, at: str, reading: Reading) -> int | None:
        rows = [v for v in self.terms.schedule if v.program_id == program_id and v.tier == tier]
        if reading.rate_version == "latest":
            rows = sorted(rows, key=lambda v: v.effective_from)
            return rows[-1].rate_bps if rows else None
        best = None
        for v in sorted(rows, key=lambda v: v.effective_from):
            if v.effective_from <= at:
                best = v
        return best.rate_bps if best else None

    def period(self, at: str, zone_name: str, reading: Reading) -> str:
        instant = parse_time(at)
        if reading.zone == "UTC":
            return instant.strftime("%Y-%m")
        return instant.astimezone(zone(zone_name)).strftime("%Y-%m")

    def manual_rows(self) -> list[Row]:
        return [
            r
            for r in self.ledger_rows
            if r.get("kind") == "manual" and r.get("approved_by") and r.get("order_ref") is None
        ]


def counted(events: list[Event], reading: Reading) -> list[Event]:
    """The deliveries of one order that have an effect (R1, R2, R4), in delivery order."""
    seen_ids: set[str] = set()
    seen_keys: set[int] = set()
    out: list[Event] = []
    for ev in events:
        if reading.retries_ignored and ev.event_id in seen_ids:
            continue
        seen_ids.add(ev.event_id)
        if reading.dedup_by_seq:
            key = ev.seq()
            if key in seen_keys:
                continue
            seen_keys.add(key)
        out.append(ev)
    if not reading.hold_orphans:
        created = next((i for i, e in enumerate(out) if e.type == "order.created"), None)
        if created is not None:
            out = [e for i, e in enumerate(out) if i >= created]
    return out


@dataclass(frozen=True)
class Opening:
    """What an order's `order.created` fixes under a reading: who is owed, and at what rate."""

    at: str
    partner: str
    program: ProgramTerms
    rate: int

    def line(self, order_id: str, event_id: str, kind: str, period: str, amount: int) -> Line:
        return Line(
            order_id,
            event_id,
            kind,
            self.partner,
            self.program.program_id,
            period,
            amount,
            self.program.currency,
        )


def open_order(world: World, payload: dict[str, Any], reading: Reading) -> Opening | None:
    """The order's partner, program and rate, or None when it earns nothing from the start."""
    t = world.terms
    at = payload.get(t.field("time"))
    if not isinstance(at, str):
        return None
    row = world.code_row(payload.get(t.field("code")), at, reading)
    if row is None:  # R5
        return None
    program = t.programs.get(row["program_id"])
    if program is None:
        return None
    if reading.currency_check and payload.get("currency") != program.currency:  # R12
        return None
    partner = world.survivor(row["partner_id"]) if reading.follow_merges else row["partner_id"]
    if reading.tier_source == "partner":
        tier = (world.partners.get(partner) or {}).get("tier", row["tier"])
    else:
        tier = row["tier"]
    rate = world.rate(program.program_id, tier, at, reading)
    if rate is None:
        return None
    return Opening(at, partner, program, rate)


def basis_of(program: ProgramTerms, reading: Reading, gross: int, tax: int) -> int:
    """R8: the amount the rate applies to, gross or net as the reading takes the program."""
    kind = program.basis
    if reading.basis == "gross":
        kind = "gross"
    elif reading.basis == "flip":
        kind = "net" if kind == "gross" else "gross"
    return gross if kind == "gross" else gross - tax


def refund_parts(
    world: World, ev: Event, left_gross: int, left_tax: int, reading: Reading
) -> tuple[int, int]:
    """R13: a refund's (gross, tax); an absent amount is the rest of the order, or nothing."""
    gf, tf = world.terms.field("gross"), world.terms.field("tax")
    rest = reading.refund_rest and reading.absent_keeps
    p = ev.payload
    r_gross = money(p[gf], ev.version, reading) if gf in p else (left_gross if rest else 0)
    r_tax = money(p[tf], ev.version, reading) if tf in p else (left_tax if rest else 0)
    return r_gross, r_tax


def _amended(
    world: World, created: Event, effects: list[Event], reading: Reading
) -> tuple[int, int]:
    """The order's (gross, tax) after every amendment in `effects` order (W1)."""
    gf, tf = world.terms.field("gross"), world.terms.field("tax")
    gross = money(created.payload.get(gf), created.version, reading)
    tax = money(created.payload.get(tf), created.version, reading)
    for e in effects:
        if e.type != "order.updated":
            continue
        if gf in e.payload or not reading.absent_keeps:
            gross = money(e.payload.get(gf), e.version, reading)
        if tf in e.payload or not reading.absent_keeps:
            tax = money(e.payload.get(tf), e.version, reading)
    return gross, tax


def order_lines(world: World, order_id: str, reading: Reading = CONTRACT) -> list[Line]:
    """What one order books under `reading`: its commission and its refunds' reversals."""
    effective = counted(world.events.get(order_id, []), reading)
    created = next((e for e in effective if e.type == "order.created"), None)
    if created is None:
        return []
    opening = open_order(world, created.payload, reading)
    if opening is None:
        return []
    program = opening.program
    effects = [e for e in effective if e is not created]
    if reading.apply_by_seq:
        effects.sort(key=lambda e: (e.seq(), e.delivery))
    gross, tax = _amended(world, created, effects, reading)
    if reading.bar == "never" or (reading.bar == "latest" and gross < program.bar_minor):
        return []  # R10
    period = world.period(opening.at, program.zone, reading)
    amount = commission(basis_of(program, reading, gross, tax), opening.rate, reading.rounding)
    lines = [opening.line(order_id, created.event_id, "accrual", period, amount)]
    left_gross, left_tax = gross, tax
    for e in effects:
        if e.type != "order.refunded":
            continue
        r_gross, r_tax = refund_parts(world, e, left_gross, left_tax, reading)
        left_gross -= r_gross
        left_tax -= r_tax
        when = e.payload.get(world.terms.field("time"))
        if not isinstance(when, str):
            continue
        period = world.period(when, program.zone, reading)
        amount = commission(
            basis_of(program, reading, r_gross, r_tax), opening.rate, reading.rounding
        )
        lines.append(opening.line(order_id, e.event_id, "reversal", period, -amount))
    return [line for line in lines if line.amount]


def projection(world: World, ledger: Ledger) -> dict[str, dict[str, int]]:
    """The partners' balance projection of `ledger`, manual rows included."""
    totals: dict[str, dict[str, int]] = {p: defaultdict(int) for p in world.partners}
    for lines in ledger.lines.values():
        for line in lines:
            totals.setdefault(line.partner_id, defaultdict(int))[line.period] += line.amount
    amount, period = world.terms.amount_column, world.terms.period_column
    for row in ledger.manual:
        totals.setdefault(row["partner_id"], defaultdict(int))[row[period]] += int(row[amount])
    return {p: {k: v for k, v in sorted(t.items()) if v} for p, t in sorted(totals.items())}


def shipped_projection(world: World, rows: list[Row] | None = None) -> dict[str, dict[str, int]]:
    """The balance projection of ledger rows as they stand (the contract's definition)."""
    amount, period = world.terms.amount_column, world.terms.period_column
    totals: dict[str, dict[str, int]] = {p: defaultdict(int) for p in world.partners}
    for row in world.ledger_rows if rows is None else rows:
        totals.setdefault(row["partner_id"], defaultdict(int))[row[period]] += int(row[amount])
    return {p: {k: v for k, v in sorted(t.items()) if v} for p, t in sorted(totals.items())}


def shipped_order_lines(world: World) -> dict[str, Lines]:
    amount, period = world.terms.amount_column, world.terms.period_column
    out: dict[str, dict[Key, int]] = defaultdict(lambda: defaultdict(int))
    for row in world.ledger_rows:
        if row.get("order_ref") is not None:
            out[row["order_ref"]][(row["partner_id"], row[period])] += int(row[amount])
    return {o: {k: v for k, v in sorted(lines.items()) if v} for o, lines in out.items()}

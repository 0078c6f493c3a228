"""The contract's ledger, computed from the raw delivery stream by the solver's own code.

This is a third implementation of the rules (after the generator's and the reconciler's),
written from INTEGRATION.md's text. It reads only what `View` holds (the four files, as the
tools returned them) and `Terms` (the contract's parameters). Zone rules come from the pinned
zone table, the one public input every implementation shares.

`Reading` says how each rule is read. Its defaults are the contract as written; each switch
is the plausible misreading of one rule, which is what a policy that skipped that rule does
(`graded`) and what a defect family's latent bug or fault looks like (`diagnose`).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from decimal import ROUND_DOWN, ROUND_HALF_EVEN, Decimal
from typing import Any

from datagauntlet.envs.event_recon.solver.terms import Terms
from datagauntlet.envs.event_recon.solver.view import Row, View
from datagauntlet.envs.event_recon.zones import zone

Key = tuple[str, str]  # (partner_id, period)
Lines = dict[Key, int]


@dataclass(frozen=True)
class Reading:
    """How the rules are read; the defaults are the contract as written."""

    retries_ignored: bool = True  # R1 (off: every delivery counts)
    dedup_by_seq: bool = True  # R2 (off: dedup on event_id only)
    apply_by_seq: bool = True  # R3 (off: delivery order)
    hold_orphans: bool = True  # R4 (off: an effect before its order is dropped)
    code_row: str = "in_force"  # R5 ("first": the code's earliest row, moves ignored)
    follow_merges: bool = True  # R6 (off: the code's own partner)
    tier_source: str = "partner"  # R7 ("code_cache": referral_codes.tier)
    rate_version: str = "in_force"  # R7 ("latest": the newest schedule row)
    basis: str = "program"  # R8 ("gross": always gross; "flip": the other basis)
    zone: str = "program"  # R9 ("UTC": UTC calendar months)
    bar: str = "latest"  # R10 ("none": every order earns; "never": none does)
    rounding: str = "half_even"  # R11 ("half_up")
    currency_check: bool = True  # R12 (off: a foreign-currency order earns)
    refund_rest: bool = True  # R13 (off: a refund without amounts refunds nothing)
    manual_stands: bool = True  # R14 (off: manual rows are not owed)
    absent_keeps: bool = True  # W1 (off: an absent money field is zero)
    money_by_type: bool = True  # W2 (off: money read by envelope version)


CONTRACT = Reading()
CONTRACT_RULES = (*(f"R{i}" for i in range(1, 15)), "W1", "W2")


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

    def projection(self, partners: list[str]) -> dict[str, dict[str, int]]:
        totals: dict[str, dict[str, int]] = {p: defaultdict(int) for p in partners}
        for lines in self.lines.values():
            for line in lines:
                totals.setdefault(line.partner_id, defaultdict(int))[line.period] += line.amount
        return {p: {k: v for k, v in sorted(t.items()) if v} for p, t in sorted(totals.items())}


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


def _counted(events: list[Event], reading: Reading) -> list[Event]:
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


def order_lines(world: World, order_id: str, reading: Reading = CONTRACT) -> list[Line]:
    """What one order books under `reading`: its commission and its refunds' reversals."""
    t = world.terms
    counted = _counted(world.events.get(order_id, []), reading)
    created = next((e for e in counted if e.type == "order.created"), None)
    if created is None:
        return []
    p = created.payload
    at = p.get(t.field("time"))
    if not isinstance(at, str):
        return []
    row = world.code_row(p.get(t.field("code")), at, reading)
    if row is None:  # R5
        return []
    program = t.programs.get(row["program_id"])
    if program is None:
        return []
    if reading.currency_check and p.get("currency") != program.currency:  # R12
        return []
    partner = world.survivor(row["partner_id"]) if reading.follow_merges else row["partner_id"]
    if reading.tier_source == "partner":
        tier = (world.partners.get(partner) or {}).get("tier", row["tier"])
    else:
        tier = row["tier"]
    rate = world.rate(program.program_id, tier, at, reading)
    if rate is None:
        return []

    effects = [e for e in counted if e is not created]
    if reading.apply_by_seq:
        effects.sort(key=lambda e: (e.seq(), e.delivery))
    gf, tf = t.field("gross"), t.field("tax")
    gross = money(p.get(gf), created.version, reading)
    tax = money(p.get(tf), created.version, reading)
    for e in effects:
        if e.type != "order.updated":
            continue
        if gf in e.payload or not reading.absent_keeps:
            gross = money(e.payload.get(gf), e.version, reading)
        if tf in e.payload or not reading.absent_keeps:
            tax = money(e.payload.get(tf), e.version, reading)

    if reading.bar == "never" or (reading.bar == "latest" and gross < program.bar_minor):
        return []  # R10

    def basis(g: int, x: int) -> int:
        kind = program.basis
        if reading.basis == "gross":
            kind = "gross"
        elif reading.basis == "flip":
            kind = "net" if kind == "gross" else "gross"
        return g if kind == "gross" else g - x

    lines = [
        Line(
            order_id,
            created.event_id,
            "accrual",
            partner,
            program.program_id,
            world.period(at, program.zone, reading),
            commission(basis(gross, tax), rate, reading.rounding),
            program.currency,
        )
    ]
    left_gross, left_tax = gross, tax
    for e in effects:
        if e.type != "order.refunded":
            continue
        rest = reading.refund_rest and reading.absent_keeps
        r_gross = money(e.payload[gf], e.version, reading) if gf in e.payload else None
        r_tax = money(e.payload[tf], e.version, reading) if tf in e.payload else None
        r_gross = r_gross if r_gross is not None else (left_gross if rest else 0)
        r_tax = r_tax if r_tax is not None else (left_tax if rest else 0)
        left_gross -= r_gross
        left_tax -= r_tax
        when = e.payload.get(t.field("time"))
        if not isinstance(when, str):
            continue
        lines.append(
            Line(
                order_id,
                e.event_id,
                "reversal",
                partner,
                program.program_id,
                world.period(when, program.zone, reading),
                -commission(basis(r_gross, r_tax), rate, reading.rounding),
                program.currency,
            )
        )
    return [line for line in lines if line.amount]


def replay_lines(world: World, order_id: str, reading: Reading) -> list[Line]:
    """One order processed delivery by delivery, the way a ledger builder runs, with each
    rule read as `reading` says. With the contract's reading it books what `order_lines`
    books; with a misreading it books what a builder with that bug would have booked (a
    re-emitted `order.created`, say, accrues again and restarts the order's state)."""
    t = world.terms
    gf, tf, timef = t.field("gross"), t.field("tax"), t.field("time")
    lines: list[Line] = []
    held: list[Event] = []
    state: dict[str, Any] | None = None

    def qualifies(s: dict[str, Any]) -> bool:
        if reading.bar == "none":
            return True
        if reading.bar == "never":
            return False
        return bool(s["gross"] >= s["program"].bar_minor)

    def basis(s: dict[str, Any], g: int, x: int) -> int:
        kind = s["program"].basis
        if reading.basis == "gross":
            kind = "gross"
        elif reading.basis == "flip":
            kind = "net" if kind == "gross" else "gross"
        return g if kind == "gross" else g - x

    def earned(s: dict[str, Any]) -> int:
        if not qualifies(s):
            return 0
        return commission(basis(s, s["gross"], s["tax"]), s["rate"], reading.rounding)

    def book(s: dict[str, Any], ev: Event, kind: str, period: str, amount: int) -> None:
        if amount:
            lines.append(
                Line(
                    order_id,
                    ev.event_id,
                    kind,
                    s["partner"],
                    s["program"].program_id,
                    period,
                    amount,
                    s["program"].currency,
                )
            )

    def apply(s: dict[str, Any], ev: Event) -> None:
        p = ev.payload
        if ev.type == "order.updated":
            if reading.apply_by_seq and ev.seq() < s["top_seq"]:
                return  # R3: a later seq already stands
            s["top_seq"] = max(s["top_seq"], ev.seq())
            if gf in p or not reading.absent_keeps:
                s["gross"] = money(p.get(gf), ev.version, reading)
            if tf in p or not reading.absent_keeps:
                s["tax"] = money(p.get(tf), ev.version, reading)
            now = earned(s)
            book(s, ev, "adjustment", s["period"], now - s["booked"])
            s["booked"] = now
        elif ev.type == "order.refunded":
            rest = reading.refund_rest and reading.absent_keeps
            r_gross = money(p[gf], ev.version, reading) if gf in p else None
            r_tax = money(p[tf], ev.version, reading) if tf in p else None
            r_gross = r_gross if r_gross is not None else (s["left_gross"] if rest else 0)
            r_tax = r_tax if r_tax is not None else (s["left_tax"] if rest else 0)
            s["refunded_gross"] += r_gross
            s["refunded_tax"] += r_tax
            when = p.get(timef)
            if qualifies(s) and isinstance(when, str):
                amount = commission(basis(s, r_gross, r_tax), s["rate"], reading.rounding)
                period = world.period(when, s["program"].zone, reading)
                book(s, ev, "reversal", period, -amount)

    for ev in _counted(world.events.get(order_id, []), replace(reading, hold_orphans=True)):
        p = ev.payload
        if ev.type == "order.created":
            at = p.get(timef)
            row = (
                world.code_row(p.get(t.field("code")), at, reading) if isinstance(at, str) else None
            )
            program = t.programs.get(row["program_id"]) if row else None
            if row is None or program is None or not isinstance(at, str):
                continue
            if reading.currency_check and p.get("currency") != program.currency:
                continue
            partner = (
                world.survivor(row["partner_id"]) if reading.follow_merges else row["partner_id"]
            )
            if reading.tier_source == "partner":
                tier = (world.partners.get(partner) or {}).get("tier", row["tier"])
            else:
                tier = row["tier"]
            rate = world.rate(program.program_id, tier, at, reading)
            if rate is None:
                continue
            state = {
                "partner": partner,
                "program": program,
                "rate": rate,
                "top_seq": ev.seq(),
                "gross": money(p.get(gf), ev.version, reading),
                "tax": money(p.get(tf), ev.version, reading),
                "period": world.period(at, program.zone, reading),
                "refunded_gross": 0,
                "refunded_tax": 0,
                "booked": 0,
            }
            state["booked"] = earned(state)
            book(state, ev, "accrual", state["period"], state["booked"])
            if reading.hold_orphans:
                for e in sorted(held, key=lambda e: (e.seq(), e.delivery)):
                    _apply_with_rest(state, e, apply)
            held = []
        elif state is None:
            held.append(ev)
        else:
            _apply_with_rest(state, ev, apply)
    return lines


def _apply_with_rest(state: dict[str, Any], ev: Event, apply: Any) -> None:
    state["left_gross"] = state["gross"] - state["refunded_gross"]
    state["left_tax"] = state["tax"] - state["refunded_tax"]
    apply(state, ev)


def compute(world: World, reading: Reading = CONTRACT) -> Ledger:
    """What `reading` says every order books: the contract's engine for the contract, the
    delivery-by-delivery one for a misreading (it books what a builder with that bug would)."""
    ledger = Ledger(manual=world.manual_rows() if reading.manual_stands else [])
    lines = order_lines if reading == CONTRACT else replay_lines
    for order_id in sorted(world.events):
        ledger.lines[order_id] = lines(world, order_id, reading)
    return ledger


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


def with_rules(known: frozenset[str]) -> Reading:
    """The reading of a policy that knows only `known` of the rules (W1, W2 included)."""
    r = CONTRACT
    off = {
        "R1": {"retries_ignored": False},
        "R2": {"dedup_by_seq": False},
        "R3": {"apply_by_seq": False},
        "R4": {"hold_orphans": False},
        "R5": {"code_row": "first"},
        "R6": {"follow_merges": False},
        "R7": {"tier_source": "code_cache", "rate_version": "latest"},
        "R8": {"basis": "gross"},
        "R9": {"zone": "UTC"},
        "R10": {"bar": "none"},
        "R11": {"rounding": "half_up"},
        "R12": {"currency_check": False},
        "R13": {"refund_rest": False},
        "R14": {"manual_stands": False},
        "W1": {"absent_keeps": False},
        "W2": {"money_by_type": False},
    }
    for rule, change in off.items():
        if rule not in known:
            r = replace(r, **change)
    return r

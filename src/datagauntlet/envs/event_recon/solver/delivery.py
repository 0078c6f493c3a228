"""One order processed delivery by delivery, the way a ledger builder runs.

With the contract's reading it books what `ledger.order_lines` books (a test checks this on
every order of a sample); with a misreading it books what a builder with that bug would have
booked: a re-emitted `order.created`, say, accrues again and restarts the order's state, and
a late lower-`seq` amendment overwrites a later one. `diagnose` uses it to find which
misreading reproduces a moved order's rows, and the graded policies to decide what they
believe is owed.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from datagauntlet.envs.event_recon.solver.ledger import (
    Event,
    Line,
    World,
    commission,
    counted,
    money,
)
from datagauntlet.envs.event_recon.solver.reading import Reading


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

    for ev in counted(world.events.get(order_id, []), replace(reading, hold_orphans=True)):
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

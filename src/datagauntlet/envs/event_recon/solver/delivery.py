"""One order processed delivery by delivery, the way a ledger builder runs.

With the contract's reading it books what `ledger.order_lines` books (a test checks this on
every order of a sample); with a misreading it books what a builder with that bug would have
booked: a re-emitted `order.created`, say, accrues again and restarts the order's state, and
a late lower-`seq` amendment overwrites a later one. `diagnose` uses it to find which
misreading reproduces a moved order's rows, and the graded policies to decide what they
believe is owed.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from datagauntlet.envs.event_recon.solver.ledger import (
    Event,
    Line,
    Opening,
    World,
    basis_of,
    commission,
    counted,
    money,
    open_order,
    refund_parts,
)
from datagauntlet.envs.event_recon.solver.reading import Reading


@dataclass
class _OrderState:
    """An order as the builder holds it between deliveries."""

    opening: Opening
    top_seq: int
    gross: int
    tax: int
    period: str
    refunded_gross: int = 0
    refunded_tax: int = 0
    booked: int = 0


class _Replay:
    """One order's deliveries applied in turn under `reading`, booking into `lines`."""

    def __init__(self, world: World, order_id: str, reading: Reading) -> None:
        self.world, self.order_id, self.reading = world, order_id, reading
        self.gf, self.tf = world.terms.field("gross"), world.terms.field("tax")
        self.lines: list[Line] = []

    def qualifies(self, s: _OrderState) -> bool:
        if self.reading.bar == "none":
            return True
        if self.reading.bar == "never":
            return False
        return bool(s.gross >= s.opening.program.bar_minor)

    def earned(self, s: _OrderState) -> int:
        if not self.qualifies(s):
            return 0
        basis = basis_of(s.opening.program, self.reading, s.gross, s.tax)
        return commission(basis, s.opening.rate, self.reading.rounding)

    def book(self, s: _OrderState, ev: Event, kind: str, period: str, amount: int) -> None:
        if amount:
            self.lines.append(s.opening.line(self.order_id, ev.event_id, kind, period, amount))

    def open(self, ev: Event) -> _OrderState | None:
        """A fresh state from an `order.created`, its accrual booked; None if it earns nothing."""
        opening = open_order(self.world, ev.payload, self.reading)
        if opening is None:
            return None
        p, r = ev.payload, self.reading
        s = _OrderState(
            opening=opening,
            top_seq=ev.seq(),
            gross=money(p.get(self.gf), ev.version, r),
            tax=money(p.get(self.tf), ev.version, r),
            period=self.world.period(opening.at, opening.program.zone, r),
        )
        s.booked = self.earned(s)
        self.book(s, ev, "accrual", s.period, s.booked)
        return s

    def apply(self, s: _OrderState, ev: Event) -> None:
        if ev.type == "order.updated":
            self.update(s, ev)
        elif ev.type == "order.refunded":
            self.refund(s, ev)

    def update(self, s: _OrderState, ev: Event) -> None:
        """An amendment rebooks the difference between what the order now earns and what it
        had booked."""
        p, r = ev.payload, self.reading
        if r.apply_by_seq and ev.seq() < s.top_seq:
            return  # R3: a later seq already stands
        s.top_seq = max(s.top_seq, ev.seq())
        if self.gf in p or not r.absent_keeps:
            s.gross = money(p.get(self.gf), ev.version, r)
        if self.tf in p or not r.absent_keeps:
            s.tax = money(p.get(self.tf), ev.version, r)
        now = self.earned(s)
        self.book(s, ev, "adjustment", s.period, now - s.booked)
        s.booked = now

    def refund(self, s: _OrderState, ev: Event) -> None:
        r = self.reading
        left_gross, left_tax = s.gross - s.refunded_gross, s.tax - s.refunded_tax
        r_gross, r_tax = refund_parts(self.world, ev, left_gross, left_tax, r)
        s.refunded_gross += r_gross
        s.refunded_tax += r_tax
        when = ev.payload.get(self.world.terms.field("time"))
        if self.qualifies(s) and isinstance(when, str):
            basis = basis_of(s.opening.program, r, r_gross, r_tax)
            amount = commission(basis, s.opening.rate, r.rounding)
            period = self.world.period(when, s.opening.program.zone, r)
            self.book(s, ev, "reversal", period, -amount)


def replay_lines(world: World, order_id: str, reading: Reading) -> list[Line]:
    """One order processed delivery by delivery, the way a ledger builder runs, with each
    rule read as `reading` says. With the contract's reading it books what `order_lines`
    books; with a misreading it books what a builder with that bug would have booked (a
    re-emitted `order.created`, say, accrues again and restarts the order's state)."""
    replay = _Replay(world, order_id, reading)
    held: list[Event] = []  # deliveries before any order.created opened the order
    state: _OrderState | None = None
    for ev in counted(world.events.get(order_id, []), replace(reading, hold_orphans=True)):
        if ev.type == "order.created":
            opened = replay.open(ev)
            if opened is None:
                continue
            state = opened
            if reading.hold_orphans:
                for e in sorted(held, key=lambda e: (e.seq(), e.delivery)):
                    replay.apply(state, e)
            held = []
        elif state is None:
            held.append(ev)
        else:
            replay.apply(state, ev)
    return replay.lines

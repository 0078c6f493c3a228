"""The generator's working model of one world, before it is written out as files.

Orders and their effects are the logical truth; `wire` says how each event was delivered
(when, in which batch, with which money typing) and `extras` adds retries and re-emissions.
Defect families edit a copy of this model; the files are rendered from it at the end.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from datetime import datetime
from typing import TypeVar

from datagauntlet.envs.event_recon.world.records import (
    LedgerEntry,
    Partner,
    Program,
    RateVersion,
    ReferralCode,
    Schema,
)

_T = TypeVar("_T")


def _shallow(obj: _T) -> _T:
    """`copy.copy` of a plain dataclass instance (what it does for one, without its dispatch:
    a world's copy makes thousands of these per attempt)."""
    twin = object.__new__(type(obj))
    twin.__dict__.update(obj.__dict__)
    return twin


@dataclass
class Effect:
    """An amendment or a refund. `None` money means absent on the wire (W1)."""

    event_id: str
    kind: str  # "order.updated" or "order.refunded"
    seq: int
    at: datetime
    gross: int | None
    tax: int | None


@dataclass
class Order:
    order_id: str
    code: str
    customer: str
    currency: str
    at: datetime
    gross: int
    tax: int
    event_id: str  # of its order.created
    effects: list[Effect] = field(default_factory=list)

    def events(self) -> list[str]:
        return [self.event_id, *(e.event_id for e in self.effects)]


@dataclass
class Delivery:
    """How one event reached the platform."""

    received_at: datetime
    backfill: bool = False
    batch: str | None = None
    money_style: str | None = None  # None, "string", "integer" or "sub_minor" (W2 drift)


@dataclass
class Extra:
    """A further delivery of an event: a retry (same id) or a re-emission (new id)."""

    source_event: str
    event_id: str
    attempt: int
    received_at: datetime
    batch: str | None = None  # set: delivered in this backfill batch, not as its source was


@dataclass
class Draft:
    seed: int
    tier: int
    schema: Schema
    currency: str
    brand: str
    months: tuple[str, ...]  # the window's UTC months
    start: datetime
    end: datetime
    cutover: datetime  # envelopes received from here on are version 2
    partners: dict[str, Partner]
    programs: dict[str, Program]
    schedule: list[RateVersion]  # authoritative (INTEGRATION.md); db `programs` mirrors it
    codes: list[ReferralCode]
    orders: list[Order]
    wire: dict[str, Delivery]
    extras: list[Extra]
    manual: list[LedgerEntry]
    faults: dict[str, dict[str, object]] = field(default_factory=dict)  # order_id -> fault
    reserved: set[str] = field(default_factory=set)  # distractor orders no defect may touch
    payout_stamp: str = ""

    def copy(self) -> Draft:
        """A copy families may edit: every mutable part is new, frozen records are shared."""
        orders = []
        for o in self.orders:
            twin = _shallow(o)
            twin.effects = [_shallow(e) for e in o.effects]
            orders.append(twin)
        return dataclasses.replace(
            self,
            partners=dict(self.partners),
            programs=dict(self.programs),
            schedule=list(self.schedule),
            codes=list(self.codes),
            orders=orders,
            wire={k: _shallow(d) for k, d in self.wire.items()},
            extras=list(self.extras),
            manual=list(self.manual),
            faults={k: dict(v) for k, v in self.faults.items()},
            reserved=set(self.reserved),
        )

    def order(self, order_id: str) -> Order:
        for o in self.orders:
            if o.order_id == order_id:
                return o
        raise KeyError(order_id)

    def code_rows(self, code: str) -> list[ReferralCode]:
        return [c for c in self.codes if c.code == code]

    def _rows_of(self, code: str) -> list[ReferralCode]:
        # Families replace or append to `codes`, never edit a row in place, so the list
        # itself (held, so it cannot be recycled) and its length say when the index is stale.
        cached = self.__dict__.get("_code_index")
        if cached is None or cached[0] is not self.codes or cached[1] != len(self.codes):
            index: dict[str, list[ReferralCode]] = {}
            for row in self.codes:
                index.setdefault(row.code, []).append(row)
            cached = (self.codes, len(self.codes), index)
            self.__dict__["_code_index"] = cached
        return cached[2].get(code, [])

    def code_row_at(self, code: str, at: str) -> ReferralCode | None:
        best = None
        for row in self._rows_of(code):
            if (
                row.code == code
                and row.valid_from <= at
                and (best is None or row.valid_from > best.valid_from)
            ):
                best = row
        return best

    def survivor(self, partner_id: str) -> str:
        seen = set()
        while self.partners[partner_id].merged_into and partner_id not in seen:
            seen.add(partner_id)
            partner_id = self.partners[partner_id].merged_into  # type: ignore[assignment]
        return partner_id

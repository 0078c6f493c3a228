"""Render a draft's events as the envelopes the platform received, in delivery order."""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from datetime import datetime
from typing import Any

from datagauntlet.core.seeding import HashPrefix
from datagauntlet.envs.event_recon.grading.accounting import iso
from datagauntlet.envs.event_recon.world.draft import Delivery, Draft, Effect, Order
from datagauntlet.envs.event_recon.world.records import Envelope


def money_on_wire(minor: int, version: int, style: str | None) -> int | str:
    """W2 typing: version 1 sends integer minor units, version 2 decimal strings in major
    units. A drift style overrides that (the defect families' type violations)."""
    if style is None:
        style = "integer" if version == 1 else "string"
    if style == "integer":
        return minor
    if style == "string":
        return f"{minor // 100}.{minor % 100:02d}"
    if style.startswith("sub_minor:"):
        # A third decimal that rounds half-to-even back up to `minor`; truncating loses one.
        thousandths = (minor - 1) * 10 + int(style.split(":", 1)[1])
        return f"{thousandths // 1000}.{thousandths % 1000:03d}"
    raise ValueError(f"unknown money style {style!r}")


def signature(payload: dict[str, Any]) -> str:
    body = json.dumps(payload, sort_keys=True, separators=(",", ":"))
    return "sha256=" + hashlib.sha256(body.encode()).hexdigest()


def _tax_style(style: str | None) -> str | None:
    return None if style and style.startswith("sub_minor") else style


def _payload(
    draft: Draft, found: tuple[Order, Effect | None], version: int, style: str | None
) -> tuple[str, dict[str, Any]]:
    s = draft.schema
    order, effect = found
    if effect is None:
        return "order.created", {
            s.order_field: order.order_id,
            s.code_field: order.code,
            s.gross_field: money_on_wire(order.gross, version, style),
            s.tax_field: money_on_wire(order.tax, version, _tax_style(style)),
            s.time_field: iso(order.at),
            "seq": 1,
            "currency": order.currency,
            "customer": order.customer,
        }
    payload: dict[str, Any] = {
        s.order_field: order.order_id,
        s.time_field: iso(effect.at),
        "seq": effect.seq,
    }
    if effect.gross is not None:
        payload[s.gross_field] = money_on_wire(effect.gross, version, style)
    if effect.tax is not None:
        payload[s.tax_field] = money_on_wire(effect.tax, version, _tax_style(style))
    return effect.kind, payload


def event_index(draft: Draft) -> dict[str, tuple[Order, Effect | None]]:
    index: dict[str, tuple[Order, Effect | None]] = {}
    for order in draft.orders:
        index[order.event_id] = (order, None)
        for effect in order.effects:
            index[effect.event_id] = (order, effect)
    return index


# A delivery to render: (received, what its tie-break hashes, source event, event id, attempt,
# how it was delivered).
_Item = tuple[datetime, tuple[str | int, ...], str, str, int, Delivery]


def _sort_by_receipt(seed: int, items: list[_Item]) -> None:
    """By receipt time, ties broken by a keyed hash of the item's tie parts. Only deliveries
    that share a second are hashed: the order is the same as with every one hashed."""
    tie = HashPrefix(seed, "tie")
    shared = {at for at, n in Counter(item[0] for item in items).items() if n > 1}
    items.sort(key=lambda item: (item[0], tie.at(*item[1]) if item[0] in shared else 0))


def render(draft: Draft, only: set[str] | None = None) -> list[Envelope]:
    """Every delivery, sorted by receipt time (ties broken by a keyed hash, never by id).

    With `only`, just the deliveries of those orders (their relative order is the same).
    """
    index = event_index(draft)
    items: list[_Item] = []
    for event_id, d in draft.wire.items():
        if only is not None and index[event_id][0].order_id not in only:
            continue
        items.append((d.received_at, (event_id,), event_id, event_id, 1, d))
    for x in draft.extras:
        if only is not None and index[x.source_event][0].order_id not in only:
            continue
        d = draft.wire[x.source_event]
        if x.batch is None:
            moved = Delivery(x.received_at, d.backfill, d.batch, d.money_style)
        else:
            moved = Delivery(x.received_at, True, x.batch, d.money_style)
        tie = (x.event_id, x.attempt)
        items.append((x.received_at, tie, x.source_event, x.event_id, x.attempt, moved))
    _sort_by_receipt(draft.seed, items)
    out = []
    for n, (received, _, source, event_id, attempt, d) in enumerate(items, start=1):
        version = 2 if received >= draft.cutover else 1
        kind, payload = _payload(draft, index[source], version, d.money_style)
        out.append(
            Envelope(
                delivery=n,
                event_id=event_id,
                event_type=kind,
                version=version,
                attempt=attempt,
                backfill=d.backfill,
                batch=d.batch,
                received_at=iso(received),
                payload=payload,
            )
        )
    return out

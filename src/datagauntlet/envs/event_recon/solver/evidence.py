"""What a wire or reference family leaves on an order itself, readable without arithmetic:
the marks the diagnosis weighs when two misreadings book the same rows."""

from __future__ import annotations

import re
from collections import defaultdict

from datagauntlet.envs.event_recon.solver.ledger import World
from datagauntlet.envs.event_recon.solver.reading import CONTRACT

SUB_MINOR = re.compile(r"^-?\d+\.\d{3,}$")


def sub_minor(world: World, order_id: str) -> bool:
    t = world.terms
    money_fields = (t.field("gross"), t.field("tax"))
    return any(
        isinstance(ev.payload.get(f), str) and SUB_MINOR.match(ev.payload[f])
        for ev in world.events.get(order_id, [])
        for f in money_fields
    )


def _money_fields(world: World) -> tuple[str, str]:
    return world.terms.field("gross"), world.terms.field("tax")


def _absent_money(world: World, order_id: str) -> bool:
    return any(
        ev.type != "order.created" and any(f not in ev.payload for f in _money_fields(world))
        for ev in world.events.get(order_id, [])
    )


def _type_against_version(world: World, order_id: str) -> bool:
    for ev in world.events.get(order_id, []):
        for f in _money_fields(world):
            value = ev.payload.get(f)
            if value is None:
                continue
            if (ev.version == 1) != (isinstance(value, int) and not isinstance(value, bool)):
                return True
    return False


def _re_emitted(world: World, order_id: str) -> bool:
    ids: dict[int, set[str]] = defaultdict(set)
    for ev in world.events.get(order_id, []):
        ids[ev.seq()].add(ev.event_id)
    return any(len(v) > 1 for v in ids.values())


def _out_of_seq(world: World, order_id: str) -> bool:
    seqs = [ev.seq() for ev in world.events.get(order_id, []) if ev.type == "order.updated"]
    return seqs != sorted(seqs)


def _before_created(world: World, order_id: str) -> bool:
    first = next(iter(world.events.get(order_id, [])), None)
    return first is not None and first.type != "order.created"


def _code_row(world: World, order_id: str) -> dict[str, str] | None:
    created = next((e for e in world.events.get(order_id, []) if e.type == "order.created"), None)
    if created is None:
        return None
    t = world.terms
    at = created.payload.get(t.field("time"))
    return world.code_row(created.payload.get(t.field("code")), str(at), CONTRACT)


def _merged(world: World, order_id: str) -> bool:
    row = _code_row(world, order_id)
    return bool(row and (world.partners.get(row["partner_id"]) or {}).get("merged_into"))


def _stale_tier(world: World, order_id: str) -> bool:
    row = _code_row(world, order_id)
    if not row:
        return False
    partner = world.partners.get(world.survivor(row["partner_id"])) or {}
    return bool(partner.get("tier") != row["tier"])


def _foreign(world: World, order_id: str) -> bool:
    row = _code_row(world, order_id)
    created = next((e for e in world.events.get(order_id, []) if e.type == "order.created"), None)
    program = world.terms.programs.get(row["program_id"]) if row else None
    return bool(created and program and created.payload.get("currency") != program.currency)


# What each wire or reference family leaves on the order itself, readable without arithmetic.
WIRE_EVIDENCE = {
    "duplicate_delivery": _re_emitted,
    "out_of_order_delivery": _out_of_seq,
    "missing_field_coercion": _absent_money,
    "schema_drift": _type_against_version,
    "currency_or_rounding_drift": lambda w, o: _foreign(w, o) or sub_minor(w, o),
    "partial_backfill": _before_created,
    "identity_fragmentation": _merged,
    "tier_misconfiguration": _stale_tier,
}


# Wire families whose trace on the order is its own payload, not the reference data.
PAYLOAD_EVIDENCE = (
    "duplicate_delivery",
    "out_of_order_delivery",
    "missing_field_coercion",
    "schema_drift",
    "currency_or_rounding_drift",
    "partial_backfill",
)

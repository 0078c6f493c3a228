"""Classify each defect from the evidence: which misreading of the contract reproduces what
the platform booked.

An order is *moved* when the ledger's rows for it differ from what the contract says it books.
Each defect family is the platform reading one rule wrongly (a latent builder bug set off by
the wire or the reference data, or a derivation fault), so the family of a moved order is the
one whose misreading, applied to that order alone, reproduces the booked rows exactly. The two
families whose misreadings coincide on the wire (schema drift and rounding drift both read
money by envelope version) are told apart by the evidence itself: a money string with more
than two decimals.

When two misreadings book the same rows, an anomaly on the order itself (a module family's
`seen_on` included) outweighs a derivation fault, a module family beats the built-in one its
evidence `refines`, the words of the families'
contract lines are held against the order's deliveries, and a coincidence of amounts goes to
the family seen unambiguously elsewhere. A family this package does not define is known only
through the reference step its module brings (`Family.misreadings`, `Family.seen_on`).

A (family, partner) pair is reported when that family's moved orders, summed, change the
partner's balance in some period, which is the manifest's own rule (a defect is listed for a
partner it alone moved). The cited event is the `order.created` of the first such order.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from datagauntlet.envs.event_recon.solver.delivery import replay_lines
from datagauntlet.envs.event_recon.solver.ledger import (
    Ledger,
    Lines,
    World,
    aggregate,
    shipped_order_lines,
)
from datagauntlet.envs.event_recon.solver.reading import CONTRACT, Reading

# Each family and the misreadings that explain it (any one of them), as changes to a reading.
HYPOTHESES: dict[str, tuple[dict[str, object], ...]] = {
    "duplicate_delivery": ({"dedup_by_seq": False},),
    "out_of_order_delivery": ({"apply_by_seq": False},),
    "missing_field_coercion": ({"absent_keeps": False},),
    "schema_drift": ({"money_by_type": False},),
    "currency_or_rounding_drift": ({"currency_check": False}, {"money_by_type": False}),
    "partial_backfill": ({"hold_orphans": False},),
    "identity_fragmentation": ({"follow_merges": False},),
    "tier_misconfiguration": ({"tier_source": "code_cache"},),
    "gross_net_divergence": ({"basis": "flip"},),
    "timezone_boundary": ({"zone": "UTC"},),
    "retroactive_program_change": ({"rate_version": "latest"},),
    "qualification_bar_mismatch": ({"bar": "none"}, {"bar": "never"}),
}
SUB_MINOR = re.compile(r"^-?\d+\.\d{3,}$")

# A family this package does not define is recognised only through its own reference step
# (`Family.misreadings`, `Family.seen_on`), which its family module brings: the solver never
# guesses one from its contract line, so what the public reference knows is the public twelve.
Steps = Mapping[str, Any]
NO_STEPS: Steps = {}


@dataclass(frozen=True)
class Finding:
    family: str
    partner_id: str
    event_id: str

    def as_dict(self) -> dict[str, str]:
        return {"family": self.family, "partner_id": self.partner_id, "event_id": self.event_id}


@dataclass
class Diagnosis:
    moved: list[str] = field(default_factory=list)  # order ids whose rows are wrong
    family_of: dict[str, str] = field(default_factory=dict)  # moved order -> family
    unexplained: dict[str, list[str]] = field(default_factory=dict)  # order -> candidates
    findings: list[Finding] = field(default_factory=list)


def _sub_minor(world: World, order_id: str) -> bool:
    t = world.terms
    money_fields = (t.field("gross"), t.field("tax"))
    return any(
        isinstance(ev.payload.get(f), str) and SUB_MINOR.match(ev.payload[f])
        for ev in world.events.get(order_id, [])
        for f in money_fields
    )


def candidates(
    world: World,
    order_id: str,
    booked: Lines,
    families: tuple[str, ...],
    base: Reading = CONTRACT,
    steps: Steps = NO_STEPS,
) -> list[str]:
    """The families whose misreading of this order reproduces what was booked."""
    out = []
    for family in families:
        for change in hypotheses(world, family, steps):
            reading = replace(base, **change)  # type: ignore[arg-type]
            if aggregate(replay_lines(world, order_id, reading)) == booked:
                out.append(family)
                break
    if "schema_drift" in out and "currency_or_rounding_drift" in out:
        rounding = _sub_minor(world, order_id)
        out.remove("schema_drift" if rounding else "currency_or_rounding_drift")
    if len(out) > 1:  # a wire or reference anomaly on the order outweighs a derivation fault
        seen = [f for f in out if _seen(world, order_id, f, steps)]
        if seen:
            out = seen
        # a module family whose evidence refines a built-in's (a backfill replay is also a
        # re-emission) wins over that one when both are seen
        refined = {b for f in out for b in getattr(steps.get(f), "refines", ())}
        out = [f for f in out if f not in refined] or out
    if len(out) > 1:  # two families read the same rule wrongly: the contract's words decide
        out = _by_description(world, order_id, out)
    return out


# Words of a family's contract line that the order's own deliveries can confirm or refute.
FEATURES = ("backfill", "refund", "amendment")


def hypotheses(world: World, family: str, steps: Steps = NO_STEPS) -> tuple[dict[str, object], ...]:
    if family in HYPOTHESES:
        return HYPOTHESES[family]
    return tuple(getattr(steps.get(family), "misreadings", ()))


def _seen(world: World, order_id: str, family: str, steps: Steps) -> bool:
    """Whether the family's own mark is on the order (a module family's `seen_on`)."""
    if family in WIRE_EVIDENCE:
        return WIRE_EVIDENCE[family](world, order_id)
    seen_on = getattr(steps.get(family), "seen_on", None)
    return bool(seen_on and seen_on(world, order_id))


def _features(world: World, order_id: str) -> set[str]:
    """What the order's re-emitted deliveries (or, if none, all of them) show."""
    events = world.events.get(order_id, [])
    first: dict[int, str] = {}
    again = []
    for ev in events:
        if first.setdefault(ev.seq(), ev.event_id) != ev.event_id:
            again.append(ev)
    shown: set[str] = set()
    for ev in again or events:
        if ev.backfill:
            shown.add("backfill")
        if ev.type == "order.refunded":
            shown.add("refund")
        if ev.type == "order.updated":
            shown.add("amendment")
    return shown


def _by_description(world: World, order_id: str, options: list[str]) -> list[str]:
    """Keep the families whose contract line the order bears out: none of the words it uses
    may be refuted by the deliveries, and the most confirmed words win."""
    shown = _features(world, order_id)
    lines = world.terms.family_lines

    def words(family: str) -> set[str]:
        return {w for w in FEATURES if w in lines.get(family, "").lower()}

    fit = [f for f in options if words(f) <= shown]
    if not fit:
        return options
    best = max(len(words(f)) for f in fit)
    return [f for f in fit if len(words(f)) == best]


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
    "currency_or_rounding_drift": lambda w, o: _foreign(w, o) or _sub_minor(w, o),
    "partial_backfill": _before_created,
    "identity_fragmentation": _merged,
    "tier_misconfiguration": _stale_tier,
}


def diagnose(
    world: World,
    ledger: Ledger,
    families: tuple[str, ...],
    base: Reading = CONTRACT,
    steps: Steps = NO_STEPS,
) -> Diagnosis:
    shipped = shipped_order_lines(world)
    diag = Diagnosis()
    orders = sorted(set(ledger.lines) | set(shipped))
    for order_id in orders:
        booked = shipped.get(order_id, {})
        if booked != ledger.order_lines(order_id):
            diag.moved.append(order_id)
    moves: dict[str, dict[str, dict[str, int]]] = defaultdict(
        lambda: defaultdict(lambda: defaultdict(int))
    )
    cite: dict[tuple[str, str], str] = {}
    found = {o: candidates(world, o, shipped.get(o, {}), families, base, steps) for o in diag.moved}
    sure = {f[0] for f in found.values() if len(f) == 1}
    for order_id in diag.moved:
        booked = shipped.get(order_id, {})
        options = found[order_id]
        if len(options) > 1:  # a coincidence of amounts: side with a defect seen elsewhere
            options = [f for f in options if f in sure]
        if len(options) != 1:
            diag.unexplained[order_id] = found[order_id]
            continue
        family = options[0]
        diag.family_of[order_id] = family
        right = ledger.order_lines(order_id)
        created = next(
            (e.event_id for e in world.events.get(order_id, []) if e.type == "order.created"),
            None,
        )
        for key in sorted(set(booked) | set(right)):
            partner, period = key
            moves[family][partner][period] += booked.get(key, 0) - right.get(key, 0)
            if created is not None:
                cite.setdefault((family, partner), created)
    for family in sorted(moves):
        for partner in sorted(moves[family]):
            if any(moves[family][partner].values()) and (family, partner) in cite:
                diag.findings.append(Finding(family, partner, cite[(family, partner)]))
    return diag

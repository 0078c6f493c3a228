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

from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from datagauntlet.envs.event_recon.solver.delivery import replay_lines
from datagauntlet.envs.event_recon.solver.evidence import PAYLOAD_EVIDENCE, WIRE_EVIDENCE, sub_minor
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
    family_of: dict[str, str] = field(default_factory=dict)  # moved order -> family(ies)
    families_of: dict[str, tuple[str, ...]] = field(default_factory=dict)
    unexplained: dict[str, list[str]] = field(default_factory=dict)  # order -> candidates
    findings: list[Finding] = field(default_factory=list)


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
        rounding = sub_minor(world, order_id)
        out.remove("schema_drift" if rounding else "currency_or_rounding_drift")
    if len(out) > 1:  # a wire or reference anomaly on the order outweighs a derivation fault
        seen = [f for f in out if _seen(world, order_id, f, steps)]
        if seen:
            out = seen
        # a module family whose evidence refines a built-in's (a backfill replay is also a
        # re-emission) wins over that one when both are seen
        refined = _refined(out, steps)
        out = [f for f in out if f not in refined] or out
    if len(out) > 1:  # two families read the same rule wrongly: the contract's words decide
        out = _by_description(world, order_id, out)
    return out


def _refined(families: Any, steps: Steps) -> set[str]:
    """The built-in families that a module family among `families` refines."""
    return {b for f in families for b in getattr(steps.get(f), "refines", ())}


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


def pair_candidates(
    world: World,
    order_id: str,
    booked: Lines,
    families: tuple[str, ...],
    base: Reading = CONTRACT,
    steps: Steps = NO_STEPS,
) -> list[tuple[str, str]]:
    """Two families on one order: the pairs whose misreadings together reproduce what was
    booked, each member borne out by the order's own evidence where it leaves any."""
    out = []
    for i, first in enumerate(families):
        if not _borne_out(world, order_id, first, steps):
            continue
        for second in families[i + 1 :]:
            if not _borne_out(world, order_id, second, steps):
                continue
            if _pair_fits(world, order_id, booked, first, second, base, steps):
                out.append((first, second))
    return out


def _borne_out(world: World, order_id: str, family: str, steps: Steps) -> bool:
    """False when the family leaves a mark on its orders (built-in or `seen_on`) and this
    order lacks it."""
    if family in WIRE_EVIDENCE or getattr(steps.get(family), "seen_on", None):
        return _seen(world, order_id, family, steps)
    return True


def _pair_fits(
    world: World,
    order_id: str,
    booked: Lines,
    first: str,
    second: str,
    base: Reading,
    steps: Steps = NO_STEPS,
) -> bool:
    for a in hypotheses(world, first, steps):
        for b in hypotheses(world, second, steps):
            if set(a) & set(b):
                continue
            reading = replace(base, **a, **b)  # type: ignore[arg-type]
            if aggregate(replay_lines(world, order_id, reading)) == booked:
                return True
    return False


def _alone(
    world: World, order_id: str, family: str, booked: Lines, base: Reading, steps: Steps = NO_STEPS
) -> Lines:
    """What the order books with only this family's misreading (the manifest's rule: a
    defect is listed for the partners it alone moved)."""
    right = aggregate(replay_lines(world, order_id, base))
    for change in hypotheses(world, family, steps):
        lines = aggregate(replay_lines(world, order_id, replace(base, **change)))  # type: ignore[arg-type]
        if lines != right:
            return lines
    return booked


def _with_masked(
    world: World, order_id: str, shipped: dict[str, Lines], family: str, base: Reading
) -> tuple[str, ...]:
    """One family explains the order; a second whose trace the payload shows, and whose
    misreading together with the first books the same rows, rode along unseen in the amounts
    (a one-unit rounding drift under a re-keyed duplicate's other rate, say)."""
    booked = shipped.get(order_id, {})
    for other in PAYLOAD_EVIDENCE:
        if other == family or not WIRE_EVIDENCE[other](world, order_id):
            continue
        if other in _masks(family) and _pair_fits(world, order_id, booked, family, other, base):
            return (family, other)
    return (family,)


def _masks(family: str) -> tuple[str, ...]:
    # Only a partner-moving family can hide another's amounts: its rows sit elsewhere.
    return PAYLOAD_EVIDENCE if family == "identity_fragmentation" else ()


def _narrowed(
    world: World,
    order_id: str,
    pairs: list[tuple[str, str]],
    sure: set[str],
    steps: Steps,
) -> list[tuple[str, str]]:
    """The pairs left by the tie-breaks `candidates` applies to one family: marks on the order
    outweigh a derivation fault, a module family beats what it refines; then a coincidence
    of amounts goes to families seen unambiguously elsewhere."""
    if len(pairs) > 1:
        pairs = [p for p in pairs if all(_seen(world, order_id, f, steps) for f in p)] or pairs
    if len(pairs) > 1:
        refined = _refined({f for p in pairs for f in p}, steps)
        pairs = [p for p in pairs if not set(p) & refined] or pairs
    if len(pairs) > 1:
        pairs = [p for p in pairs if set(p) <= sure] or pairs
    return pairs


def _explain(
    world: World,
    diag: Diagnosis,
    shipped: dict[str, Lines],
    families: tuple[str, ...],
    base: Reading,
    steps: Steps = NO_STEPS,
) -> None:
    """Set `families_of` for every moved order one family or a pair explains."""
    found = {o: candidates(world, o, shipped.get(o, {}), families, base, steps) for o in diag.moved}
    sure = {f[0] for f in found.values() if len(f) == 1}
    for order_id in diag.moved:
        options = found[order_id]
        if len(options) > 1:  # a coincidence of amounts: side with a defect seen elsewhere
            options = [f for f in options if f in sure]
        if len(options) == 1:
            diag.families_of[order_id] = _with_masked(world, order_id, shipped, options[0], base)
            continue
        if not found[order_id]:
            pairs = pair_candidates(
                world, order_id, shipped.get(order_id, {}), families, base, steps
            )
            pairs = _narrowed(world, order_id, pairs, sure, steps)
            if len(pairs) == 1:
                diag.families_of[order_id] = pairs[0]
                continue
        diag.unexplained[order_id] = found[order_id]
    diag.family_of = {o: "+".join(f) for o, f in diag.families_of.items()}


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
    _explain(world, diag, shipped, families, base, steps)
    moves: dict[str, dict[str, dict[str, int]]] = defaultdict(
        lambda: defaultdict(lambda: defaultdict(int))
    )
    cite: dict[tuple[str, str], str] = {}
    for order_id, named in diag.families_of.items():
        booked = shipped.get(order_id, {})
        right = ledger.order_lines(order_id)
        created = next(
            (e.event_id for e in world.events.get(order_id, []) if e.type == "order.created"),
            None,
        )
        for family in named:
            wrong = (
                booked if len(named) == 1 else _alone(world, order_id, family, booked, base, steps)
            )
            for key in sorted(set(wrong) | set(right)):
                partner, period = key
                moves[family][partner][period] += wrong.get(key, 0) - right.get(key, 0)
                if created is not None:
                    cite.setdefault((family, partner), created)
    for family in sorted(moves):
        for partner in sorted(moves[family]):
            if any(moves[family][partner].values()) and (family, partner) in cite:
                diag.findings.append(Finding(family, partner, cite[(family, partner)]))
    return diag

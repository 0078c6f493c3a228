"""Generation plans: which families hit which partners, and the ten conditions a plan must
meet before its task may exist (seven numbered invariants, three tier-shape conditions).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from functools import cached_property

from datagauntlet.core.seeding import Keyed
from datagauntlet.envs.event_recon.grading import truth
from datagauntlet.envs.event_recon.world.builder import IngestLog, ingest_rows, replay
from datagauntlet.envs.event_recon.world.contract_free import bookkeeping_projection
from datagauntlet.envs.event_recon.world.draft import Draft
from datagauntlet.envs.event_recon.world.families import Family, Injection
from datagauntlet.envs.event_recon.world.names import PARTNER_TIERS
from datagauntlet.envs.event_recon.world.records import (
    Defect,
    Envelope,
    IngestRow,
    LedgerEntry,
    Projection,
)
from datagauntlet.envs.event_recon.world.statement import statement_projection
from datagauntlet.envs.event_recon.world.wire import render

MAX_PAIRS_PER_PARTNER = 1.0
# Invariant 7: the share of a task's broken partners that the contract-free bookkeeping
# repairs may finish. The original's "at most half" let a policy that never reads the
# contract average 0.207 of the ledger component over the public split here (T2 0.30); a
# quarter keeps it well under that; the gates hold it to lines fitted on the split
# (`ceilings.json`). Every repair of a shipped workspace-only policy is in the simulation.
MAX_REPAIRABLE_SHARE = 0.25
DEFECTS_BY_TIER = {1: (1, 1), 2: (2, 2), 3: (3, 5), 4: (4, 5)}

CONDITIONS = (
    "1-clean-world-is-clean",
    "2-every-defect-moves-a-balance",
    "3-named-partners-visibly-wrong",  # ... and each moved order attributable to one family
    "4-untouched-partners-correct",
    "5-blast-radius",
    "6-statement-not-a-solution",
    "7-contract-needed",
    "8-tier1-one-partner",
    "9-distinct-families",
    "10-tier4-interacts",
)


class FamilyFailed(ValueError):
    """A family's own plan or apply raised (a bug in a family module, named)."""


@dataclass
class Built:
    """A draft rendered and run through the platform's builder."""

    draft: Draft
    envelopes: list[Envelope]
    entries: list[LedgerEntry]
    order_truth: truth.OrderLines
    correct: Projection
    shipped: Projection
    ingest_log: IngestLog

    @cached_property
    def ingest(self) -> list[IngestRow]:
        return ingest_rows(self.ingest_log)

    def order_shipped(self) -> truth.OrderLines:
        out: dict[str, dict[tuple[str, str], int]] = defaultdict(lambda: defaultdict(int))
        for e in self.entries:
            if e.order_ref is not None:
                out[e.order_ref][(e.partner_id, e.period)] += e.amount_minor
        return {o: {k: v for k, v in lines.items() if v} for o, lines in out.items()}

    def moved_orders(self) -> list[str]:
        shipped = self.order_shipped()
        return [
            o.order_id
            for o in self.draft.orders
            if o.order_id in self.order_truth
            and shipped.get(o.order_id, {})
            != {k: v for k, v in self.order_truth[o.order_id].items() if v}
        ]


def ledger_projection(
    partners: list[str] | tuple[str, ...], entries: list[LedgerEntry]
) -> Projection:
    totals: dict[str, dict[str, int]] = {p: defaultdict(int) for p in partners}
    for e in entries:
        totals.setdefault(e.partner_id, defaultdict(int))[e.period] += e.amount_minor
    return {p: {k: v for k, v in sorted(t.items()) if v} for p, t in sorted(totals.items())}


def run(draft: Draft, only: set[str] | None = None) -> Built:
    """Render and build the draft. With `only`, just those orders (and no manual rows): the
    projections then hold those orders' contributions alone, which is all a defect confined
    to them can change."""
    envelopes = render(draft, only)
    entries, log = replay(draft, envelopes)
    if only is None:
        entries = entries + list(draft.manual)
        lines = truth.all_order_lines(draft)
    else:
        lines = {
            o.order_id: truth.order_lines(draft, o) for o in draft.orders if o.order_id in only
        }
    return Built(
        draft,
        envelopes,
        entries,
        lines,
        truth.project(draft, lines, manual=only is None),
        ledger_projection(list(draft.partners), entries),
        log,
    )


def apply(clean: Draft, injections: list[Injection], families: dict[str, Family]) -> Draft:
    draft = clean.copy()
    for inj in injections:
        try:
            families[inj.family].apply(draft, inj)
        except Exception as exc:  # a family module's code: say whose it was
            raise FamilyFailed(f"family {inj.family!r} failed to apply: {exc!r}") from exc
    return draft


def named_partners(inj: Injection, families: dict[str, Family]) -> tuple[str, ...]:
    fam = families[inj.family]
    named = getattr(fam, "named", None)
    return tuple(named(inj)) if named else (inj.partner_id,)


@dataclass
class Evaluation:
    tier: int
    final: Built
    manifest: tuple[Defect, ...]
    failed: list[str] = field(default_factory=list)
    repairable: tuple[str, ...] = ()


def evaluate(
    clean: Draft, injections: list[Injection], families: dict[str, Family], exhaustive: bool = True
) -> Evaluation:
    """Check a plan against all ten conditions; `failed` lists the ones it breaks.

    With `exhaustive=False` (generation) it stops at the first failure, cheapest checks first.
    """
    tier = clean.tier
    failed: list[str] = []
    families_used = [inj.family for inj in injections]
    if tier >= 2 and len(set(families_used)) != len(families_used):
        failed.append(CONDITIONS[8])  # the plan alone says so
    final = run(apply(clean, injections, families))
    broken_final = {p for p in final.draft.partners if final.shipped[p] != final.correct[p]}
    if tier == 1 and (len(injections) != 1 or len(broken_final) != 1):
        failed.append(CONDITIONS[7])
    if _answered_elsewhere(final, broken_final):
        failed.append(CONDITIONS[5])
    if failed and not exhaustive:  # the cheap checks first: most rejected plans stop here
        return Evaluation(tier, final, (), failed)
    repaired = bookkeeping_projection(final.draft, final.envelopes, final.entries)
    repairable = tuple(sorted(p for p in broken_final if repaired.get(p, {}) == final.correct[p]))
    if len(repairable) > MAX_REPAIRABLE_SHARE * len(broken_final):
        failed.append(CONDITIONS[6])
    if failed and not exhaustive:
        return Evaluation(tier, final, (), failed, repairable)
    base = run(clean)
    if base.shipped != base.correct:
        failed.insert(0, CONDITIONS[0])
    manifest: list[Defect] = []
    for inj in injections:
        # A defect edits only the orders it claimed, so alone it can move only their rows;
        # the final world's check of unnamed partners (condition 4) catches one that lies.
        alone = run(apply(clean, [inj], families), set(inj.orders))
        broken = {p for p in alone.draft.partners if alone.shipped[p] != alone.correct[p]}
        if not broken:
            failed.append(CONDITIONS[1])
        manifest.extend(_defects(inj, alone, broken))
        if _ambiguous(clean, inj, alone):
            failed.append(CONDITIONS[2])
    named = {d.partner_id for d in manifest}
    if not named <= broken_final:
        failed.append(CONDITIONS[2])
    if broken_final - named:
        failed.append(CONDITIONS[3])
    pairs = {(d.family, d.partner_id) for d in manifest}
    if len(pairs) > MAX_PAIRS_PER_PARTNER * len(final.draft.partners):
        failed.append(CONDITIONS[4])
    if tier == 4:
        per_partner: dict[str, set[str]] = defaultdict(set)
        for d in manifest:
            per_partner[d.partner_id].add(d.family)
        interacts = any(len(v) >= 2 for v in per_partner.values())
        reasoning = any(families[f].contract_reasoning for f in families_used)
        if not (interacts and reasoning):
            failed.append(CONDITIONS[9])
    return Evaluation(
        tier, final, tuple(manifest), sorted(set(failed), key=CONDITIONS.index), repairable
    )


def _answered_elsewhere(final: Built, broken: set[str]) -> bool:
    """Condition 6: a broken partner whose correct balance is already written down, in the
    payouts made (checked first: they are free) or in the brand's statement."""
    first = final.draft.months[0]
    paid = {p: {first: v[first]} for p, v in final.shipped.items() if v.get(first, 0) > 0}
    if any(paid.get(p, {}) == final.correct[p] for p in broken):
        return True
    statement = statement_projection(final.draft, broken)
    return any(statement.get(p, {}) == final.correct[p] for p in broken)


# The misreading each derivation-side family leaves on an order, as a builder fault.
MISREADINGS: dict[str, tuple[dict[str, object], ...]] = {
    "gross_net_divergence": ({"basis": "flip"},),
    "timezone_boundary": ({"zone": "UTC"},),
    "retroactive_program_change": ({"rate": "latest"},),
    "qualification_bar_mismatch": ({"bar": 0}, {"bar": 10**15}),
    "tier_misconfiguration": tuple({"tier": t} for t in PARTNER_TIERS),
}


def _ambiguous(clean: Draft, inj: Injection, alone: Built) -> bool:
    """True when another family's misreading would leave exactly the same rows on one of
    the orders this injection moved: the task could not say which family it was."""
    if inj.family not in MISREADINGS:
        return False
    shipped = alone.order_shipped()
    clean_codes = {(c.code, c.valid_from): c for c in clean.codes}
    neutral = alone.draft.copy()
    neutral.codes = [clean_codes.get((c.code, c.valid_from), c) for c in neutral.codes]
    order_field = alone.draft.schema.order_field
    for oid in alone.moved_orders():
        envelopes = [e for e in alone.envelopes if e.payload.get(order_field) == oid]
        actual = shipped.get(oid, {})
        neutral.faults = {k: v for k, v in alone.draft.faults.items() if k != oid}
        for family, faults in MISREADINGS.items():
            if family == inj.family:
                continue
            for fault in faults:
                neutral.faults[oid] = fault
                entries, _ = replay(neutral, envelopes)
                lines: dict[tuple[str, str], int] = defaultdict(int)
                for e in entries:
                    lines[(e.partner_id, e.period)] += e.amount_minor
                if {k: v for k, v in lines.items() if v} == actual:
                    return True
    return False


def _defects(inj: Injection, alone: Built, broken: set[str]) -> list[Defect]:
    """One manifest entry per partner the injection alone broke; evidence is every event id
    (re-emissions included) on the orders it moved that touch that partner."""
    shipped_lines = alone.order_shipped()
    index = {o.order_id: o for o in alone.draft.orders}
    extra_ids: dict[str, list[str]] = defaultdict(list)
    for x in alone.draft.extras:
        extra_ids[x.source_event].append(x.event_id)
    moved = alone.moved_orders()
    out = []
    for p in sorted(broken):
        evidence: set[str] = set()
        for oid in moved:
            touched = {k[0] for k in shipped_lines.get(oid, {})} | {
                k[0] for k in alone.order_truth[oid]
            }
            if p in touched:
                for eid in index[oid].events():
                    evidence.add(eid)
                    evidence.update(extra_ids.get(eid, ()))
        out.append(Defect(inj.family, p, tuple(sorted(evidence))))
    return out


def _bookkeeping_only(family: Family) -> bool:
    return bool(getattr(family, "bookkeeping_only", False))


SHARED_HUB = "identity_fragmentation"
SHARED_CHANCE = 0.6  # of a T3/T4 plan putting its second defect on the hub's own orders


def _draw_families(tier: int, k: Keyed, families: dict[str, Family]) -> tuple[list[str], bool]:
    """The plan's families (distinct), and whether the first two share orders."""
    lo, hi = DEFECTS_BY_TIER[tier]
    n = k.randint("n-defects", 0, lo, hi)
    names = sorted(families)
    books = [f for f in names if _bookkeeping_only(families[f])]
    others = [f for f in names if f not in books]
    shared = tier >= 3 and SHARED_HUB in books and k.chance("shared", 0, SHARED_CHANCE)
    if shared:  # the duplicate is finished by a re-key: four broken partners admit it
        n = max(n, 4)
    chosen = k.sample("families", others, min(n, len(others)))
    if shared:
        chosen[-1] = SHARED_HUB
    elif tier >= 3 and books and k.chance("bookkeeping", 0, 0.8):
        # The hub has its own draw above; the rest get this slot.
        rest = [f for f in books if f != SHARED_HUB] or books
        chosen[-1] = k.choice("bookkeeping-family", 0, rest)
    if tier == 4 and not any(families[f].contract_reasoning for f in chosen):
        reasoning = [f for f in others if families[f].contract_reasoning and f not in chosen]
        chosen[0] = k.choice("reasoning-family", 0, reasoning)
    # Reference families claim whole codes: plan them first; a bookkeeping-only one leads.
    chosen.sort(
        key=lambda f: (
            not _bookkeeping_only(families[f]),
            families[f].where != "reference",
            names.index(f),
        )
    )
    return chosen, shared


def draw(
    clean: Draft, k: Keyed, families: dict[str, Family], family_key: Keyed | None = None
) -> list[Injection] | None:
    """A plan for the draft's tier: distinct families from T2 on; on T3/T4 the first two
    defects share a partner, and in `SHARED_CHANCE` of plans the first is a merged
    duplicate and the second lands on the very orders the duplicate's code earned, so the
    repairs interact (re-key before re-rating; the other way round books twice).

    Families that are bookkeeping in every mode would break invariant 7 on a tier-1 or
    tier-2 task, so those tiers do not draw them; T3/T4 draw at most one, and put it on the
    shared partner next to a defect that needs the contract. These are only to waste fewer
    attempts: the ten conditions judge the built task either way.

    `family_key`, when given, draws the families (the rest still comes from `k`): the
    generator keys them by the task alone on tiers 1-2, so a family that is harder to plant
    is retried on fresh worlds rather than quietly replaced by an easier one.
    """
    tier = clean.tier
    chosen, shared = _draw_families(tier, family_key or k, families)
    partners = [p for p in clean.partners if clean.partners[p].merged_into is None]
    used: set[str] = set()
    claimed: set[str] = set()
    plan: list[Injection] = []
    hub: str | None = None
    pending = list(chosen)
    i = 0
    while pending:
        if tier >= 3 and i == 1:
            # The second defect goes to the first one's partner (its orders, when shared):
            # whichever family can.
            taken = claimed
            options = pending
            if shared and plan[0].family == SHARED_HUB:
                hub_orders = set(plan[0].orders)
                taken = {o.order_id for o in clean.orders} - hub_orders
                options = [f for f in pending if families[f].where != "reference"]
            pick = next(
                (
                    (f, inj)
                    for f in options
                    if (inj := _plan_on(families[f], clean, [hub], k, i, taken)) is not None
                ),
                None,
            )
            if pick is None:
                return None
            name, inj = pick
        else:
            name = pending[0]
            pool = [p for p in partners if p not in used or tier >= 3]
            inj = _plan_on(
                families[name], clean, k.shuffled(f"partners-{i}", pool)[:6], k, i, claimed
            )
            if inj is None:
                return None
        pending.remove(name)
        hub = hub or inj.partner_id
        claimed.update(inj.orders)
        used.update(named_partners(inj, families))
        plan.append(inj)
        i += 1
    return plan


def _plan_on(
    family: Family, clean: Draft, partners: list[str | None], k: Keyed, i: int, claimed: set[str]
) -> Injection | None:
    severity = k.randint("severity", i, 1, 3)
    for attempt, partner in enumerate(partners):
        if partner is None:
            continue
        keyed = Keyed(f"{k.seed}/{family.name}/{i}/{attempt}")
        try:
            inj = family.plan(clean, partner, severity, keyed, claimed)
        except Exception as exc:
            raise FamilyFailed(f"family {family.name!r} failed to plan: {exc!r}") from exc
        if inj is not None:
            return inj
    return None

"""The ten conditions: for each, a plan that violates it, and the check that rejects it."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from datagauntlet.core.seeding import Keyed
from datagauntlet.envs.event_recon.world import plan as plan_mod
from datagauntlet.envs.event_recon.world.base_world import base_draft
from datagauntlet.envs.event_recon.world.draft import Draft
from datagauntlet.envs.event_recon.world.families import (
    Injection,
    builtin_families,
    earning,
    partner_orders,
    plain,
)
from datagauntlet.envs.event_recon.world.generator import generate, plan_world
from datagauntlet.envs.event_recon.world.plan import CONDITIONS, FamilyFailed, evaluate
from datagauntlet.envs.event_recon.world.statement import statement_projection

FAMILIES = builtin_families()


def injection(draft: Draft, family: str, k: str, tier_partner: int = 0, claimed=None) -> Injection:
    """The first partner, from `tier_partner` on, the family can plan for."""
    partners = sorted(draft.partners)
    for p in partners[tier_partner:] + partners[:tier_partner]:
        inj = FAMILIES[family].plan(draft, p, 1, Keyed(k), set(claimed or ()))
        if inj is not None:
            return inj
    raise AssertionError(f"{family} found no partner")


def first_accepted(tier: int) -> tuple[Draft, list[Injection]]:
    for attempt in range(50):
        clean = base_draft(7, tier, attempt)
        plan = plan_mod.draw(clean, Keyed(f"cond/{tier}/{attempt}"), FAMILIES)
        if plan and not evaluate(clean, plan, FAMILIES).failed:
            return clean, plan
    raise AssertionError("no accepted plan")


@dataclass
class _Scripted:
    """A test family whose apply is a given function."""

    name: str
    fn: object
    where: str = "wire"
    rule: str = "R1"
    latent_bug: str = ""
    contract_reasoning: bool = False

    def plan(self, draft, partner_id, severity, k, claimed):  # pragma: no cover - unused
        return None

    def apply(self, draft, inj):
        self.fn(draft, inj)  # type: ignore[operator]


def test_an_accepted_plan_meets_all_ten() -> None:
    for tier in (1, 2, 3, 4):
        clean, plan = first_accepted(tier)
        assert evaluate(clean, plan, FAMILIES).failed == []


def test_1_a_clean_world_that_is_not_clean() -> None:
    clean, plan = first_accepted(2)
    dirty = clean.copy()
    order = earning(dirty, partner_orders(dirty, sorted(dirty.partners)[0], set()))[0]
    order.currency = "XXX" if order.currency != "XXX" else "YYY"  # B6 is live before any defect
    assert CONDITIONS[0] in evaluate(dirty, plan, FAMILIES).failed


def test_2_a_defect_that_moves_nothing() -> None:
    clean, plan = first_accepted(2)
    families = {**FAMILIES, "noop": _Scripted("noop", lambda d, i: None)}
    plan = [*plan, Injection("noop", plan[0].partner_id, ())]
    assert CONDITIONS[1] in evaluate(clean, plan, families).failed


def test_3_a_named_partner_left_correct_and_4_an_unnamed_partner_broken() -> None:
    clean = base_draft(11, 3)
    faulty = injection(clean, "gross_net_divergence", "c3")
    victim = next(
        p
        for p in sorted(clean.partners)
        if p != faulty.partner_id and earning(clean, partner_orders(clean, p, set()))
    )
    target = earning(clean, partner_orders(clean, victim, set()))[0].order_id

    def undo(draft: Draft, inj: Injection) -> None:  # cancels the fault, once it is there
        for oid in faulty.orders:
            draft.faults.pop(oid, None)

    def sleeper(draft: Draft, inj: Injection) -> None:  # breaks another partner, never alone
        if any(oid in draft.faults for oid in faulty.orders):
            draft.faults[target] = {"basis": "flip", "bar": 0}

    families = {
        **FAMILIES,
        "undo": _Scripted("undo", undo),
        "sleeper": _Scripted("sleeper", sleeper),
    }
    cancel = evaluate(clean, [faulty, Injection("undo", victim, ())], families).failed
    assert CONDITIONS[2] in cancel
    wake = evaluate(clean, [faulty, Injection("sleeper", victim, ())], families).failed
    assert CONDITIONS[3] in wake


def test_5_a_blast_radius_over_the_bound(monkeypatch: pytest.MonkeyPatch) -> None:
    clean, plan = first_accepted(3)
    assert CONDITIONS[4] not in evaluate(clean, plan, FAMILIES).failed
    pairs = len({(d.family, d.partner_id) for d in evaluate(clean, plan, FAMILIES).manifest})
    monkeypatch.setattr(plan_mod, "MAX_PAIRS_PER_PARTNER", (pairs - 1) / len(clean.partners))
    assert CONDITIONS[4] in evaluate(clean, plan, FAMILIES).failed


def test_6_a_task_the_statement_would_solve() -> None:
    for attempt in (176, *range(200)):  # 176: the first such draw of seed 3 (searched once)
        clean = base_draft(3, 1, attempt)
        plan = plan_mod.draw(clean, Keyed(f"c6/{attempt}"), FAMILIES)
        if not plan:
            continue
        ev = evaluate(clean, plan, FAMILIES)
        if CONDITIONS[5] in ev.failed:
            statement = statement_projection(ev.final.draft)
            broken = [p for p in ev.final.correct if ev.final.correct[p] != ev.final.shipped[p]]
            assert any(statement.get(p, {}) == ev.final.correct[p] for p in broken)
            return
    raise AssertionError("no plan in 200 had the statement as its solution")


def test_7_a_task_finishable_without_the_contract() -> None:
    clean = base_draft(5, 1)
    inj = injection(clean, "timezone_boundary", "c7")  # re-bucketing repairs it: bookkeeping
    ev = evaluate(clean, [inj], FAMILIES)
    assert CONDITIONS[6] in ev.failed and ev.repairable == (inj.partner_id,)


def test_8_tier_one_with_two_partners() -> None:
    clean = base_draft(5, 1)
    a = injection(clean, "gross_net_divergence", "c8a")
    b = injection(clean, "tier_misconfiguration", "c8b", 3, a.orders)
    assert a.partner_id != b.partner_id
    assert CONDITIONS[7] in evaluate(clean, [a, b], FAMILIES).failed


def test_9_one_family_twice() -> None:
    clean = base_draft(5, 2)
    a = injection(clean, "gross_net_divergence", "c9a")
    b = injection(clean, "gross_net_divergence", "c9b", 3, a.orders)
    assert CONDITIONS[8] in evaluate(clean, [a, b], FAMILIES).failed


def test_10_tier_four_without_interaction() -> None:
    clean = base_draft(5, 4)
    partners = sorted(clean.partners)
    plan: list[Injection] = []
    claimed: set[str] = set()
    for i, family in enumerate(
        ("tier_misconfiguration", "gross_net_divergence", "schema_drift", "partial_backfill")
    ):
        inj = injection(clean, family, f"c10/{i}", 3 * i, claimed)
        claimed |= set(inj.orders)
        plan.append(inj)
    assert len({i.partner_id for i in plan}) == 4 and partners
    assert CONDITIONS[9] in evaluate(clean, plan, FAMILIES).failed


def test_rejected_plans_are_regenerated_not_shipped() -> None:
    attempts = [plan_world(seed, 4)[1] for seed in range(8)]
    assert max(attempts) > 1  # some first draws were rejected and redrawn
    for seed in range(3):
        world = generate(seed, 1)
        assert len(world.broken_partners) == 1 and len(world.manifest) == 1


def test_7_counts_the_widened_contract_free_repairs() -> None:
    """A bare refund (reverse what was booked) and an under-bar order (drop its rows) are
    finished without the contract too, so a tier-1 task made of either is refused."""
    clean = base_draft(5, 1)
    partner, order = next(
        (p, o)
        for p in sorted(clean.partners)
        for o in plain(earning(clean, partner_orders(clean, p, set())))
    )
    bare = Injection(
        "missing_field_coercion",
        partner,
        (order.order_id,),
        {"specs": [{"order": order.order_id, "mode": "refund", "id": "evt_" + "a" * 16,
                    "tax": 0, "minutes": 600}]},
    )  # fmt: skip
    ev = evaluate(clean, [bare], FAMILIES)
    assert CONDITIONS[6] in ev.failed and ev.repairable == (partner,)
    under = next(
        o
        for p in sorted(clean.partners)
        for o in partner_orders(clean, p, set())
        if o.gross < 1500 and not o.effects and o.currency == clean.currency
    )
    owner = clean.code_row_at(under.code, under.at.strftime("%Y-%m-%dT%H:%M:%SZ"))
    assert owner is not None
    lowered = Injection(
        "qualification_bar_mismatch",
        owner.partner_id,
        (under.order_id,),
        {"bars": {under.order_id: 1}, "mode": "lowered"},
    )
    ev = evaluate(clean, [lowered], FAMILIES)
    assert CONDITIONS[6] in ev.failed and ev.repairable == (owner.partner_id,)


class _Raising(_Scripted):
    def plan(self, draft, partner_id, severity, k, claimed):
        raise ZeroDivisionError("oops")


def test_a_family_that_raises_is_named_in_a_value_error() -> None:
    with pytest.raises(FamilyFailed, match=r"broken_family.*ZeroDivisionError"):
        generate(3, 1, {"broken_family": _Raising("broken_family", lambda d, i: None)})
    assert issubclass(FamilyFailed, ValueError)

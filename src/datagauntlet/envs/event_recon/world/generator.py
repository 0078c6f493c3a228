"""`generate(seed, tier)`: one task world, a pure function of its seed.

A plan is drawn on a clean world and kept only if it meets all ten conditions of `plan.py`;
otherwise the next attempt draws a fresh clean world and plan from the same seed.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator, Mapping
from contextlib import contextmanager

from datagauntlet.core.seeding import Keyed
from datagauntlet.envs.event_recon.world import zones
from datagauntlet.envs.event_recon.world.base_world import DEFAULT_SCALE, base_draft
from datagauntlet.envs.event_recon.world.contract import render_contract
from datagauntlet.envs.event_recon.world.families import (
    Family,
    Injection,
    activated_bug,
    broken_rule,
    builtin_families,
)
from datagauntlet.envs.event_recon.world.plan import Evaluation, draw, evaluate
from datagauntlet.envs.event_recon.world.records import TIERS, Payout, World
from datagauntlet.envs.event_recon.world.statement import statement_rows
from datagauntlet.envs.event_recon.world.workspace import csv_bytes, jsonl_bytes, sqlite_bytes

MAX_ATTEMPTS = 200


class GenerationError(RuntimeError):
    """No plan met the ten conditions within MAX_ATTEMPTS (a generator defect)."""


@contextmanager
def collector_paused() -> Iterator[None]:
    """The cyclic collector off for one generation, then restored as found.

    An attempt keeps ~10^5 objects alive (drafts, envelopes, entries) and makes no reference
    cycles, so reference counting frees all of it; the collector only walked it, again and
    again: about a fifth of a world's CPU time (tests/event_recon checks there are no cycles).
    """
    was_on = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_on:
            gc.enable()


def plan_world(
    seed: int,
    tier: int,
    families: Mapping[str, Family] | None = None,
    scale: float = DEFAULT_SCALE,
) -> tuple[Evaluation, int]:
    with collector_paused():
        ev, attempts, _ = _plan_world(seed, tier, families, scale)
    return ev, attempts


def _plan_world(
    seed: int, tier: int, families: Mapping[str, Family] | None, scale: float = DEFAULT_SCALE
) -> tuple[Evaluation, int, list[Injection]]:
    if tier not in TIERS:
        raise ValueError(f"tier must be one of 1-4, not {tier!r}")
    fams = dict(builtin_families() if families is None else families)
    # Tiers 1-2 keep the families they drew for every attempt: redrawing them with the world
    # would favour the families that plant most easily (see plan.draw).
    family_key = Keyed(f"event-recon/{seed}/{tier}/families") if tier <= 2 else None
    if scale != DEFAULT_SCALE and family_key is not None:
        family_key = Keyed(f"event-recon/{seed}/{tier}/families/x{scale:g}")
    for attempt in range(MAX_ATTEMPTS):
        clean = base_draft(seed, tier, attempt, scale)
        plan = draw(clean, Keyed(f"event-recon/{seed}/{tier}/{attempt}/plan"), fams, family_key)
        if plan is None:
            continue
        ev = evaluate(clean, plan, fams, exhaustive=False)
        if not ev.failed:
            return ev, attempt + 1, plan
    raise GenerationError(f"no plan for seed {seed} tier {tier} met the ten conditions")


def rule_and_bug(family: Family, inj: Injection) -> dict[str, str]:
    """What one planted defect breaks, by its mode: the contract rule and the latent bug."""
    return {"rule": broken_rule(family, inj), "latent_bug": activated_bug(family, inj)}


def payouts_for(ev: Evaluation) -> list[Payout]:
    draft = ev.final.draft
    k = Keyed(f"event-recon/{draft.seed}/payouts")
    first = draft.months[0]
    out = []
    for i, (partner, periods) in enumerate(sorted(ev.final.shipped.items())):
        amount = periods.get(first, 0)
        if amount > 0:
            out.append(
                Payout("po_" + k.token("payout", i, 10), partner, first, amount, draft.payout_stamp)
            )
    return out


def generate(
    seed: int,
    tier: int,
    families: Mapping[str, Family] | None = None,
    scale: float = DEFAULT_SCALE,
) -> World:
    with collector_paused():
        return _generate(seed, tier, families, scale)


def _generate(seed: int, tier: int, families: Mapping[str, Family] | None, scale: float) -> World:
    fams = builtin_families() if families is None else families
    ev, attempts, plan = _plan_world(seed, tier, fams, scale)
    final = ev.final
    draft = final.draft
    names = tuple(sorted(fams))
    summaries = {
        n: str(getattr(fams[n], "summary", "")) for n in names if getattr(fams[n], "summary", "")
    }
    files = {
        "db.sqlite": sqlite_bytes(draft, final.ingest, final.entries, payouts_for(ev)),
        "webhooks.jsonl": jsonl_bytes(final.envelopes),
        "partner_statement.csv": csv_bytes(statement_rows(draft), draft.currency),
        "INTEGRATION.md": render_contract(draft, names, summaries).encode(),
    }
    return World(
        seed=seed,
        tier=tier,
        schema=draft.schema,
        currency=draft.currency,
        brand=draft.brand,
        partner_ids=tuple(sorted(draft.partners)),
        files=files,
        manifest=ev.manifest,
        correct=final.correct,
        shipped=final.shipped,
        zone_source=zones.source(),
        families=names,
        attempts=attempts,
        notes={
            "repairable_without_contract": ev.repairable,
            "rules": {inj.family: rule_and_bug(fams[inj.family], inj) for inj in plan},
        },
    )


class TaskRefused(RuntimeError):
    """The generator and the independent reconciler disagree: the task is not scored."""


def cross_check(world: World) -> int:
    """Reconcile the world's own files and compare with the generator's correct ledger.

    Returns the number of partner projections compared; raises TaskRefused on a difference.
    """
    from datagauntlet.envs.event_recon.grading.reconciler import reconcile_files

    theirs = reconcile_files(world.files)
    if theirs != world.correct:
        differ = sorted(
            p for p in set(theirs) | set(world.correct) if theirs.get(p) != world.correct.get(p)
        )
        raise TaskRefused(
            f"seed {world.seed} tier {world.tier}: generator and reconciler disagree on "
            f"{len(differ)} partner(s), first {differ[0]}"
        )
    return len(theirs)


def build_task(
    seed: int,
    tier: int,
    families: Mapping[str, Family] | None = None,
    scale: float = DEFAULT_SCALE,
) -> World:
    """A world that passed all ten conditions and the cross-check (else TaskRefused)."""
    world = generate(seed, tier, families, scale)
    cross_check(world)
    return world

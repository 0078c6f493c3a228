"""Which families the public split draws, on which tier: the table docs/envs/event-recon.md
publishes, computed from the worlds themselves (a test pins the two together).

Two families cannot appear on some tiers, by the shape of the tier and invariant 7 (at most a
quarter of a task's broken partners finished without the contract): `OFF_TIER` says which and
why. Every other (family, tier) cell must be drawn at least once, and every family in at
least `MIN_TASKS` public tasks.
"""

from __future__ import annotations

from collections.abc import Iterable

from datagauntlet.envs.event_recon.world.records import FAMILIES, TIERS, World

MIN_TASKS = 15
OFF_TIER: dict[tuple[str, int], str] = {
    ("identity_fragmentation", 1): "it names two partners (the survivor and the duplicate); "
    "tier 1 moves exactly one",
    ("identity_fragmentation", 2): "the duplicate's balance is always cleared by a re-key, and "
    "with the two or three broken partners of tier 2 invariant 7 admits none",
    ("timezone_boundary", 1): "every misbucketed month is fixed by re-bucketing rows by the "
    "program's zone, and tier 1's one broken partner leaves invariant 7 no room",
    ("timezone_boundary", 2): "the same repair, and tier 2's two broken partners admit none",
}


def coverage(worlds: Iterable[World]) -> dict[str, dict[int, int]]:
    """{family: {tier: tasks whose manifest names it}} (every family and tier present)."""
    out = {f: dict.fromkeys(TIERS, 0) for f in FAMILIES}
    for w in worlds:
        for family in {d.family for d in w.manifest}:
            out.setdefault(family, dict.fromkeys(TIERS, 0))[w.tier] += 1
    return out


def coverage_problems(table: dict[str, dict[int, int]]) -> list[str]:
    """What breaks the coverage rule: too few tasks, a tier it can have and never gets, or a
    tier `OFF_TIER` says it cannot have."""
    out = []
    for family, by_tier in table.items():
        if sum(by_tier.values()) < MIN_TASKS:
            out.append(f"{family}: {sum(by_tier.values())} tasks < {MIN_TASKS}")
        for tier, n in by_tier.items():
            off = (family, tier) in OFF_TIER
            if off and n:
                out.append(f"{family} drawn on T{tier}, which OFF_TIER rules out")
            if not off and not n:
                out.append(f"{family} never drawn on T{tier}")
    return out


def render(table: dict[str, dict[int, int]]) -> str:
    """The markdown table docs/envs/event-recon.md carries (`-` where the tier cannot)."""
    lines = ["| family | T1 | T2 | T3 | T4 | tasks |", "|---|---|---|---|---|---|"]
    for family in sorted(table):
        cells = ["-" if (family, t) in OFF_TIER else str(table[family][t]) for t in TIERS]
        lines.append(f"| `{family}` | {' | '.join(cells)} | {sum(table[family].values())} |")
    return "\n".join(lines)

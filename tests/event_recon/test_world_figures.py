"""The world figures the docs publish, recomputed from the code.

The full sweep (all 120 public tasks) runs under `make gates` (DATAGAUNTLET_GATES=1); the
default suite checks the same derivation on one task per tier.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from world_helpers import sample_world

from datagauntlet.envs.event_recon.gates.world_checks import world_of
from datagauntlet.envs.event_recon.splits import public_tasks

ROOT = Path(__file__).resolve().parents[2]


def figures(worlds: list) -> dict[str, str]:
    shares: dict[int, list[float]] = {}
    for w in worlds:
        share = len(w.notes["repairable_without_contract"]) / len(w.broken_partners)
        shares.setdefault(w.tier, []).append(share)
    every = [x for v in shares.values() for x in v]
    return {
        "projections": f"{sum(len(w.partner_ids) for w in worlds):,}",
        "mean": f"{sum(every) / len(every):.3f}",
        **{f"T{t}": f"{sum(v) / len(v):.3f}".rstrip("0").rstrip(".") for t, v in shares.items()},
    }


def test_the_figures_derive_from_worlds() -> None:
    worlds = [sample_world(i) for i in (0, 30, 60, 90)]
    f = figures(worlds)
    assert f["projections"] == f"{sum(len(w.partner_ids) for w in worlds):,}"
    assert f["T1"] == "0" and f["T2"] == "0"  # tier 1 and 2 admit no contract-free repair


@pytest.mark.skipif(os.environ.get("DATAGAUNTLET_GATES") != "1", reason="full sweep: make gates")
def test_docs_world_figures_match_the_public_split() -> None:
    f = figures([world_of(r) for r in public_tasks()])
    docs = (ROOT / "docs" / "envs" / "event-recon.md").read_text()
    assert re.search(rf"120/120 (public )?tasks\s*(agree)?[^.]*{f['projections']}", docs)
    assert f"finishes {f['mean']} of broken partners" in docs
    assert f"T3 {f['T3']}, T4 {f['T4']}" in docs


def docs_text() -> str:
    return " ".join((ROOT / "docs" / "envs" / "event-recon.md").read_text().split())


def test_docs_roster_sizes_are_the_configs() -> None:
    from datagauntlet.envs.event_recon.world.base_world import PARTNERS_BY_TIER

    b = PARTNERS_BY_TIER
    stated = ", ".join(f"{b[t][0]}-{b[t][1]} (T{t})" for t in (1, 2, 3))
    assert f"rosters of {stated} and {b[4][0]}-{b[4][1]} (T4) partners" in docs_text()
    low, high = min(lo for lo, _ in b.values()), max(hi for _, hi in b.values())
    assert f"rosters are {low}-{high} partners" in docs_text()


def stream_kb(worlds: list, tier: int) -> str:
    sizes = [len(w.files["webhooks.jsonl"]) for w in worlds if w.tier == tier]
    return f"{round(min(sizes) / 1000)}-{round(max(sizes) / 1000)} KB"


@pytest.mark.skipif(os.environ.get("DATAGAUNTLET_GATES") != "1", reason="full sweep: make gates")
def test_docs_world_sizes_match_the_public_split() -> None:
    worlds = [world_of(r) for r in public_tasks()]
    text = docs_text()
    projections = f"{sum(len(w.partner_ids) for w in worlds):,}"
    assert f"partners, {projections} partner projections over the 120 public tasks" in text
    assert f"120/120 tasks agree, {projections} partner projections" in text
    assert f"public cross-check covers {projections} partner projections" in text
    assert f"A tier-4 `webhooks.jsonl` is {stream_kb(worlds, 4)}" in text
    assert f"and a tier-3 one {stream_kb(worlds, 3)}" in text
    merged = sum(1 for w in worlds if any(d.family == "identity_fragmentation" for d in w.manifest))
    assert f"`identity_fragmentation` is drawn ({merged} of the 120 public tasks)" in text

"""The independent reconciler: its imports, its agreement with the generator, and the
mutation test (one accounting bug planted in the generator at a time, caught each time)."""

from __future__ import annotations

import ast
import tempfile
from datetime import UTC, timedelta
from pathlib import Path

import pytest
from world_helpers import SAMPLE_INDICES, sample_records, sample_world

import datagauntlet.envs.event_recon.grading.reconciler as reconciler_module
from datagauntlet.envs.event_recon.gates.world_checks import cross_check_all
from datagauntlet.envs.event_recon.grading import accounting
from datagauntlet.envs.event_recon.grading.projection import project_ledger
from datagauntlet.envs.event_recon.grading.reconciler import reconcile
from datagauntlet.envs.event_recon.world.generator import TaskRefused, cross_check, generate
from datagauntlet.envs.event_recon.world.workspace import materialize

ALLOWED = {
    "__future__", "json", "re", "sqlite3", "collections.abc", "dataclasses", "datetime",
    "decimal", "pathlib", "typing",
    "datagauntlet.envs.event_recon.world.records", "datagauntlet.envs.event_recon.world.zones",
}  # fmt: skip


def test_reconciler_imports_only_record_types_and_the_zone_table() -> None:
    tree = ast.parse(Path(reconciler_module.__file__).read_text())
    imported: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            imported.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            imported.add(node.module or "")
    assert imported <= ALLOWED, imported - ALLOWED
    assert "datagauntlet.envs.event_recon.grading.accounting" not in imported


def test_generator_and_reconciler_agree_on_the_sample() -> None:
    tasks, projections = cross_check_all(sample_records())
    assert tasks == len(SAMPLE_INDICES) and projections >= 8 * tasks


def test_reconcile_from_a_directory_and_project_the_shipped_ledger() -> None:
    world = sample_world(SAMPLE_INDICES[3])
    with tempfile.TemporaryDirectory() as d:
        materialize(world, d)
        assert reconcile(d) == world.correct
        shipped = project_ledger(Path(d) / "db.sqlite", world.schema, world.partner_ids)
    assert shipped == world.shipped != world.correct


def _half_up(numerator: int, denominator: int) -> int:
    return (2 * numerator + denominator) // (2 * denominator)


_real_rate_for = accounting.rate_for
_real_period_of = accounting.period_of.__wrapped__

MUTANTS = {
    # rounding mode: half up instead of half to even
    "rounding": ("round_half_even", _half_up),
    # basis: net programs paid on gross
    "basis": ("basis_amount", lambda basis, gross, tax: gross),
    # zone: every period a UTC month
    "zone": ("period_of", lambda at, zone_name: at.astimezone(UTC).strftime("%Y-%m")),
    # bar: an order exactly at the bar, or within 2.00 above it, does not qualify
    "bar": ("qualifies", lambda gross, program: gross > program.min_order_minor + 200),
    # rate date: the rate in force a week after the order
    "rate_date": (
        "rate_for",
        lambda schedule, pid, tier, at: _real_rate_for(schedule, pid, tier, at + timedelta(days=7)),
    ),
}


@pytest.mark.parametrize("mutant", sorted(MUTANTS))
def test_cross_check_catches_each_planted_accounting_bug(
    mutant: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    name, replacement = MUTANTS[mutant]
    monkeypatch.setattr(accounting, name, replacement)
    caught = 0
    for seed in range(40):
        world = generate(seed, 3 + seed % 2)  # the mutated generator still builds its world
        try:
            cross_check(world)
        except TaskRefused:
            caught += 1
            break
    assert caught, f"the {mutant} mutant passed the cross-check on 40 tasks"


def test_unmutated_generator_passes_the_same_tasks() -> None:
    for seed in range(6):
        cross_check(generate(seed, 3 + seed % 2))

"""event-recon's gate rows on a sample of tasks (`make gates` runs them over all 120).

Each row must pass on the sample and each must fail when what it guards breaks.
"""

from __future__ import annotations

from functools import cache

import pytest

import datagauntlet as dg
from datagauntlet.core.episode import Task
from datagauntlet.envs.event_recon.attacks.probes import SINGLE_AXIS, sweep_bound
from datagauntlet.envs.event_recon.gates import gates as er_gates
from datagauntlet.envs.event_recon.gates import world_rows

SAMPLE = 4  # one task per tier (the eval split interleaves tiers)


@cache
def env() -> dg.Environment:
    return dg.make("event-recon")


@cache
def tasks() -> tuple[Task, ...]:
    return tuple(env().tasks("eval", SAMPLE))


@cache
def played(policy: str) -> tuple[tuple[float, dict[str, float]], ...]:
    return tuple(er_gates.play_many(env(), [(policy, t) for t in tasks()]))


def test_oracle_and_reference_are_one_on_every_sampled_task() -> None:
    assert er_gates.oracle_min([r for r, _ in played("oracle")]).ok
    assert min(r for r, _ in played("reference")) == 1.0


def test_oracle_min_row_fails_below_one() -> None:
    assert not er_gates.oracle_min([1.0, 0.99]).ok


@pytest.mark.parametrize("probe", list(SINGLE_AXIS))
def test_each_single_axis_probe_stays_under_its_ceiling(probe: str) -> None:
    row = er_gates.probe_max(probe, [r for r, _ in played(probe)])
    assert row.ok, row


def test_probe_row_fails_above_the_ceiling() -> None:
    assert not er_gates.probe_max("x", [0.0, 0.051]).ok


def test_null_scores_zero() -> None:
    assert max(r for r, _ in played("null")) == 0.0


def test_sweep_never_beats_its_derived_bound() -> None:
    rows = er_gates.sweep_rows(env(), tasks()[:2], workers=1)
    assert all(r.ok for r in rows), rows


def test_sweep_bound_is_the_arithmetic_of_its_definition() -> None:
    manifest = frozenset({("a", "p1"), ("a", "p2"), ("b", "p3")})
    # 2 hits of 10 claims against 3 manifest pairs, every hit grounded at best
    p, r = 2 / 10, 2 / 3
    expected = 0.3 * (1.25 * p * r / (0.25 * p + r)) + 0.1 * p
    assert sweep_bound(manifest, 10, "a") == pytest.approx(expected)
    assert sweep_bound(manifest, 10, "zzz") == 0.0


def test_attacker_rows_catch_a_solved_task_and_a_high_ledger() -> None:
    ok = [(0.4, {"ledger_correctness": 0.0})] * 4
    assert all(r.ok for r in er_gates.attacker_rows("w", [1, 2, 3, 4], ok, mean_over=1))
    solved = [*ok[:3], (1.0, {"ledger_correctness": 1.0})]
    rows = {r.name: r for r in er_gates.attacker_rows("w", [1, 2, 3, 4], solved, mean_over=1)}
    assert not rows["w:solved"].ok and not rows["w:ledger-mean"].ok
    assert not rows["w:ledger-max"].ok
    assert not rows["w:ledger-mean-t4"].ok and rows["w:ledger-mean-t1"].ok


def test_attacker_ledger_max_is_invariant_sevens_quarter_on_every_task() -> None:
    quarter = [(0.4, {"ledger_correctness": 0.25})] * 4
    rows = {r.name: r for r in er_gates.attacker_rows("w", [1, 2, 3, 4], quarter)}
    assert rows["w:ledger-max"].ok and rows["w:ledger-max"].value == 0.25
    over = [*quarter[:3], (0.5, {"ledger_correctness": 1 / 3})]
    rows = {r.name: r for r in er_gates.attacker_rows("w", [1, 2, 3, 4], over)}
    assert not rows["w:ledger-max"].ok


def test_attacker_mean_lines_are_judged_only_on_whole_tiers() -> None:
    # one task a tier finishing its quarter reads as a tier mean of 0.25: not a tier's mean
    one = [(0.4, {"ledger_correctness": 0.0})] * 3 + [(0.4, {"ledger_correctness": 0.25})]
    rows = {r.name: r for r in er_gates.attacker_rows("w", [1, 2, 3, 4], one)}
    assert rows["w:ledger-mean-t4"].ok and "not judged on 1 tasks" in rows["w:ledger-mean-t4"].bound
    assert rows["w:ledger-mean"].ok and "not judged" in rows["w:ledger-mean"].bound
    tiers = [t for t in (1, 2, 3, 4) for _ in range(er_gates.TIER_TASKS)]
    over = er_gates.ATTACKER_LEDGER_TIER + 0.01
    whole = [(0.4, {"ledger_correctness": over if t == 4 else 0.0}) for t in tiers]
    rows = {r.name: r for r in er_gates.attacker_rows("w", tiers, whole)}
    assert rows["w:ledger-mean-t4"].bound == f"<= {er_gates.ATTACKER_LEDGER_TIER:g}"
    assert not rows["w:ledger-mean-t4"].ok  # a whole tier over its fitted line
    assert rows["w:ledger-mean"].bound == f"<= {er_gates.ATTACKER_LEDGER_MEAN:g}"
    split_mean_ok = over / 4 <= er_gates.ATTACKER_LEDGER_MEAN
    assert rows["w:ledger-mean"].ok == split_mean_ok


@pytest.mark.parametrize("name", ["workspace_only", "workspace_only_scaled"])
def test_every_workspace_only_policy_solves_nothing_on_the_sample(name: str) -> None:
    tiers = [env().tier_of(t) for t in tasks()]  # type: ignore[attr-defined]
    rows = er_gates.attacker_rows(name, tiers, played(name))
    assert rows[0].ok, rows[0]


def test_the_attacker_gate_covers_every_shipped_workspace_only_policy() -> None:
    from datagauntlet.core.gates import GateRun
    from datagauntlet.envs.event_recon.attacks.attackers import policies

    g = GateRun(env(), "eval", 1)
    gate = next(x for x in er_gates.extra_gates() if x.name == "workspace-attacker")
    names = {r.name.split(":")[0] for r in gate.run(g)}  # type: ignore[union-attr]
    assert names == set(policies()) == {"workspace_only", "workspace_only_scaled"}


def test_the_invariant_7_row_counts_tasks_repaired_beyond_the_count() -> None:
    assert er_gates.invariant7_row("w", [0, 1, 2], [0, 1, 2]).ok
    row = er_gates.invariant7_row("w", [0, 2, 2], [0, 1, 2])
    assert not row.ok and row.value == 1


def test_world_rows_pass_on_the_sample() -> None:
    sample = list(env().tasks("public", 2))
    for row in (
        world_rows.cross_check_row(env(), sample),
        world_rows.leakage_row(env(), sample),
        world_rows.canary_row(env(), sample),
        world_rows.determinism_row(env(), sample),
    ):
        assert row.ok, row


def test_script_rescoring_gives_one_reward() -> None:
    row = world_rows.rescoring_row(env(), tasks()[0], "reference", times=5)
    assert row.ok and row.value == 1


def test_reference_reruns_count_failures() -> None:
    row = er_gates.reference_reruns(env(), list(tasks()[:1]), workers=1, reruns=2)
    assert row.ok and row.value == 0


def test_workspace_determinism_counts_eval_tasks_as_the_public_tasks_they_are() -> None:
    row = world_rows.determinism_row(env(), list(tasks()[:2]))
    assert row.ok and row.value == "2/2"

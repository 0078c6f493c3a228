"""The fitted ceilings: stored in one place with the sample they name, and what the fit
computes from the committed full run; a small re-fit agrees with them.

`fit_ceilings.py` fits each ceiling on the per-task figures of a full public gate run
(docs/envs/event-recon-gates.json) and stores it in `ceilings.json`, which `gates.py` reads.
"""

from __future__ import annotations

import os
from functools import cache
from pathlib import Path
from typing import Any

import pytest

import datagauntlet as dg
from datagauntlet.envs.event_recon.attacks.probes import SWEEP_PREFIX
from datagauntlet.envs.event_recon.gates import fit_ceilings, gate_report
from datagauntlet.envs.event_recon.gates import gates as er_gates

SAMPLE = (2, 38, 64, 101)  # public tasks, one a tier
SWEEP_FAMILIES = 3  # families replayed on the sample


@cache
def stored() -> dict[str, Any]:
    return fit_ceilings.load()


@cache
def committed() -> dict[str, Any]:
    return gate_report.load()


def test_the_gates_read_the_stored_ceilings() -> None:
    ceilings = stored()["ceilings"]
    assert ceilings["sweep"] == er_gates.SWEEP_CEILING
    assert ceilings["attacker_ledger_mean"] == er_gates.ATTACKER_LEDGER_MEAN
    assert ceilings["attacker_ledger_tier"] == er_gates.ATTACKER_LEDGER_TIER


def test_the_stored_fit_names_its_sample_and_is_the_fit_of_the_committed_run() -> None:
    record = stored()
    assert record["sample"] == "public, 120 tasks"
    assert (committed()["split"], committed()["tasks"]) == ("public", 120)
    assert record["attackers"] == list(fit_ceilings.attacker_names())
    refit = fit_ceilings.fit(committed(), on=record["fitted"], code=record["code"])
    assert refit == record  # same figures (by digest), same maxima, same ceilings


def test_each_ceiling_is_its_measured_maximum_with_the_margin() -> None:
    record = stored()
    for name in fit_ceilings.NAMES:
        value, line = record["measured"][name], record["ceilings"][name]
        assert value + fit_ceilings.MARGIN_FLOOR <= line + 1e-9
        assert value * (1 + fit_ceilings.MARGIN) <= line + 1e-9
        assert line - fit_ceilings.STEP < max(value * 1.25, value + 0.01) + 1e-9


@pytest.mark.parametrize(
    ("value", "line"), [(0.0, 0.01), (0.058, 0.08), (0.0864, 0.11), (0.2, 0.25), (0.04, 0.05)]
)
def test_the_margin_arithmetic(value: float, line: float) -> None:
    assert fit_ceilings.ceiling(value) == line


def test_a_committed_maximum_above_its_stored_ceiling_fails_its_row() -> None:
    high = [(0.4, {"ledger_correctness": er_gates.ATTACKER_LEDGER_TIER + 0.01})]
    tiers = [1] * er_gates.TIER_TASKS
    rows = {r.name: r for r in er_gates.attacker_rows("w", tiers, high * len(tiers))}
    assert not rows["w:ledger-mean-t1"].ok


@cache
def replayed() -> dict[str, Any]:
    """The sample's figures, played now, shaped like a gate run's."""
    env = dg.make("event-recon")
    tasks = [env.tasks("public")[i] for i in SAMPLE]
    names = fit_ceilings.attacker_names()
    ledger: dict[str, dict[str, float]] = {n: {} for n in names}
    for name in names:
        for task, (_, comps) in zip(
            tasks, er_gates.play_many(env, [(name, t) for t in tasks]), strict=True
        ):
            ledger[name][task.id] = comps["ledger_correctness"]
    families = sorted(committed()["sweep"])[:SWEEP_FAMILIES]
    jobs = [(f"{SWEEP_PREFIX}{f}", t) for t in tasks for f in families]
    sweep: dict[str, dict[str, float]] = {}
    for (policy, task), (reward, _) in zip(jobs, er_gates.play_many(env, jobs), strict=True):
        sweep.setdefault(policy[len(SWEEP_PREFIX) :], {})[task.id] = reward
    tiers = {t.id: env.tier_of(t) for t in tasks}  # type: ignore[attr-defined]
    return {
        "split": "public",
        "tasks": len(tasks),
        "sweep": sweep,
        "ledger": ledger,
        "tiers": tiers,
    }


def test_a_refit_on_a_small_sample_agrees_with_the_stored_fit() -> None:
    sample = replayed()
    full = committed()
    # the sample's figures are the committed run's for those tasks ...
    for name, by_task in sample["ledger"].items():
        assert by_task == {t: full["ledger"][name][t] for t in by_task}, name
    for family, by_task in sample["sweep"].items():
        assert by_task == {t: full["sweep"][family][t] for t in by_task}, family
    # ... so its maxima sit under the full fit's, and its ceilings under the stored ones
    small = fit_ceilings.measured(sample)
    assert small["sweep"] <= stored()["measured"]["sweep"]
    assert fit_ceilings.ceiling(small["sweep"]) <= stored()["ceilings"]["sweep"]


def test_the_docs_table_is_the_stored_fit() -> None:
    block = fit_ceilings.docs_block(fit_ceilings.DOCS.read_text())
    assert block == fit_ceilings.markdown(stored())


def test_rejudging_the_committed_run_against_the_stored_lines_changes_nothing() -> None:
    """`gate_report --rejudge` re-derives the fitted-ceiling rows from the run's own figures:
    on the committed run (judged against the stored lines) it is the identity, and a row
    judged against a stale line is brought back to the stored one."""
    assert gate_report.rejudge(committed()) == committed()
    stale = dict(committed())
    stale["rows"] = [
        {**r, "bound": "<= 0.32"} if r["name"] == "sweep-max" else r for r in committed()["rows"]
    ]
    assert gate_report.rejudge(stale) == committed()


@pytest.mark.parametrize("kind", ["device", "fifo", "not json", "a list", "missing"])
def test_a_hostile_report_is_one_line_and_exit_two(
    kind: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "run.json"
    if kind == "device":
        path = Path("/dev/zero")
    elif kind == "fifo":
        os.mkfifo(path)
    elif kind != "missing":
        path.write_text("[" * 10 if kind == "not json" else "[1, 2]")
    assert fit_ceilings.main(["--report", str(path)]) == 2  # a FIFO is refused, never read
    err = capsys.readouterr().err
    assert err.startswith("fit_ceilings: cannot fit on") and err.count("\n") == 1

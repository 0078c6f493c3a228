"""The gate table of docs/envs/event-recon.md, pinned to the committed full gate run and the code.

`make gates` runs every row over the 120 public tasks and writes docs/envs/event-recon-gates.json
(`gate_report --workers 2 --write`). Here, fast:
- the page's table is exactly what that file renders;
- each row in the file is what the file's own per-task figures add up to;
- a sample of tasks is replayed through every policy and a few sweep families, and each reward
  (and the attacker's ledger component) is exactly the file's figure for that task, inside the
  published row: reference and oracle 1.0, null 0, each probe at most its published maximum.
"""

from __future__ import annotations

import statistics
from functools import cache
from pathlib import Path
from typing import Any

import pytest

import datagauntlet as dg
from datagauntlet.core.episode import Task
from datagauntlet.envs.event_recon.attacks import cheap_attacks
from datagauntlet.envs.event_recon.attacks.probes import (
    PROBE_CEILING,
    SINGLE_AXIS,
    SWEEP_PREFIX,
    sweep_bound,
)
from datagauntlet.envs.event_recon.gates import gate_report, world_rows
from datagauntlet.envs.event_recon.gates import gates as er_gates

# One public task a tier (public tasks run T1 first, 30 a tier), away from the eval split's
# first four, which tests/event_recon/test_er_gates.py plays.
SAMPLE = (7, 41, 77, 113)
SWEEP_FAMILIES = 4  # families replayed, each on one sampled task


@cache
def report() -> dict[str, Any]:
    return gate_report.load()


@cache
def rows() -> dict[str, dict[str, Any]]:
    return {r["name"]: r for r in report()["rows"]}


@cache
def env() -> dg.Environment:
    return dg.make("event-recon")


@cache
def sample() -> tuple[Task, ...]:
    tasks = env().tasks("public")
    return tuple(tasks[i] for i in SAMPLE)


@cache
def replayed(policy: str) -> tuple[tuple[float, dict[str, float]], ...]:
    return tuple(er_gates.play_many(env(), [(policy, t) for t in sample()]))


def row(prefix: str) -> dict[str, Any]:
    found = [r for name, r in rows().items() if name.split(" (")[0] == prefix]
    assert len(found) == 1, (prefix, sorted(rows()))
    return found[0]


# --- the page and the file ---------------------------------------------------------------------
def test_page_table_is_what_the_committed_run_renders() -> None:
    block = gate_report.page_block(gate_report.PAGE.read_text())
    assert block == gate_report.table(report())


def test_the_committed_run_is_the_whole_public_split_every_row_passing() -> None:
    r = report()
    assert (r["env"], r["split"], r["tasks"], r["workers"]) == ("event-recon", "public", 120, 2)
    assert r["ok"] and all(x["ok"] for x in r["rows"]), [x for x in r["rows"] if not x["ok"]]
    ids = [t.id for t in env().tasks("public")]
    assert sorted(r["tiers"]) == sorted(ids)
    assert set(r["per_task"]) == set(env().policies())
    for policy, by_task in r["per_task"].items():
        assert sorted(by_task) == sorted(ids), policy
    assert set(r["sweep"]) == set(env().families(env().tasks("public", 1)[0]))  # the twelve
    assert r["seconds"] > 0 and len(r["loadavg"]) == 2  # the time is a figure, not a test
    assert set(r["cheap"]) == set(cheap_attacks.POLICIES)
    for by_task in (*r["sweep"].values(), *r["cheap"].values()):
        assert sorted(by_task) == sorted(ids)


def test_render_replaces_only_the_marked_block(tmp_path: Path) -> None:
    page = tmp_path / "event-recon.md"
    page.write_text(f"head\n{gate_report.BEGIN}\nstale\n{gate_report.END}\ntail\n")
    gate_report.render_page(report(), page)
    text = page.read_text()
    assert text.startswith("head\n") and text.endswith("tail\n") and "stale" not in text
    assert gate_report.page_block(text) == gate_report.table(report())
    page.write_text(f"head\n{gate_report.BEGIN}\n{gate_report.END}\ntail\n")  # an empty block
    gate_report.render_page(report(), page)
    assert gate_report.page_block(page.read_text()) == gate_report.table(report())
    page.write_text("no markers\n")
    with pytest.raises(ValueError, match="gates:event-recon"):
        gate_report.render_page(report(), page)


def test_a_changed_row_changes_the_table() -> None:
    r = dict(report())
    r["rows"] = [{**report()["rows"][0], "ok": False}, *report()["rows"][1:]]
    assert gate_report.table(r) != gate_report.table(report())
    assert "**no**" in gate_report.table(r)


@pytest.mark.parametrize(
    "argv",
    [["--workers", "0"], ["-n", "0"], ["--write", "-n", "3"], ["--write", "--split", "eval"]],
)
def test_cli_mistakes_exit_two_without_running(argv: list[str], capsys: Any) -> None:
    assert gate_report.main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("gate_report: ") and err.count("\n") == 1


# --- each row is what the per-task figures add up to -------------------------------------------
def _values(policy: str) -> list[float]:
    return list(report()["per_task"][policy].values())


def test_policy_rows_are_the_per_task_figures() -> None:
    ref = env().reference
    assert row("reference-min")["value"] == min(_values(ref)) == 1.0
    assert row("oracle-min")["value"] == min(_values("oracle")) == 1.0
    assert row("null")["value"] == max(_values("null")) == 0.0
    for probe in SINGLE_AXIS:
        assert row(f"probe-max:{probe}")["value"] == er_gates.probe_max(probe, _values(probe)).value
        assert row(f"probe:{probe}")["value"] == round(statistics.fmean(_values(probe)), 4)
    best = max(round(statistics.fmean(_values(p)), 4) for p in SINGLE_AXIS)
    assert row("floor-gap")["value"] == round(1.0 - best, 4)


@pytest.mark.parametrize("policy", ["workspace_only", "workspace_only_scaled"])
def test_attacker_rows_are_the_per_task_figures(policy: str) -> None:
    r = report()
    ids = list(r["per_task"][policy])
    results = [
        (r["per_task"][policy][i], {"ledger_correctness": r["ledger"][policy][i]}) for i in ids
    ]
    expected = er_gates.attacker_rows(policy, [r["tiers"][i] for i in ids], results)
    for e in expected:
        assert rows()[e.name] == {"name": e.name, "value": e.value, "bound": e.bound, "ok": e.ok}
    assert row(f"{policy}:beyond-invariant-7")["value"] == 0


def test_sweep_rows_are_the_per_task_figures() -> None:
    sweep = report()["sweep"]
    everything = [v for by_task in sweep.values() for v in by_task.values()]
    assert len(everything) == len(sweep) * 120
    assert row("sweep-bound")["name"] == f"sweep-bound ({len(everything)} episodes)"
    assert row("sweep-max")["value"] == round(max(everything), 4)


# --- a replayed sample is the file's figures ---------------------------------------------------
@pytest.mark.parametrize("policy", ["reference", "oracle", "null", *SINGLE_AXIS])
def test_replayed_policy_rewards_are_the_committed_ones(policy: str) -> None:
    committed = report()["per_task"][policy]
    got = [reward for reward, _ in replayed(policy)]
    assert got == [committed[t.id] for t in sample()]
    if policy in ("reference", "oracle"):
        assert got == [1.0] * len(got)
    elif policy == "null":
        assert got == [0.0] * len(got)
    else:
        assert max(got) <= row(f"probe-max:{policy}")["value"] <= PROBE_CEILING


@pytest.mark.parametrize("policy", ["workspace_only", "workspace_only_scaled"])
def test_replayed_attackers_are_the_committed_reward_and_ledger(policy: str) -> None:
    r = report()
    got = replayed(policy)
    assert [g for g, _ in got] == [r["per_task"][policy][t.id] for t in sample()]
    assert [c["ledger_correctness"] for _, c in got] == [
        r["ledger"][policy][t.id] for t in sample()
    ]
    assert all(g < 1.0 for g, _ in got)
    assert max(c["ledger_correctness"] for _, c in got) <= row(f"{policy}:ledger-max")["value"]


def test_replayed_sweep_is_the_committed_reward_and_within_its_bounds() -> None:
    families = sorted(report()["sweep"])[:SWEEP_FAMILIES]
    jobs = [(f"{SWEEP_PREFIX}{f}", sample()[i % len(SAMPLE)]) for i, f in enumerate(families)]
    got = er_gates.play_many(env(), jobs)
    for (policy, task), (reward, _) in zip(jobs, got, strict=True):
        family = policy[len(SWEEP_PREFIX) :]
        assert reward == report()["sweep"][family][task.id]
        truth = env().episode_truth(task)  # type: ignore[attr-defined]
        assert reward <= sweep_bound(truth.manifest, len(truth.partners), family) + 1e-6
        assert reward <= row("sweep-max")["value"]


def test_cheap_attack_rows_are_the_per_task_figures() -> None:
    cheap = report()["cheap"]
    touch = list(cheap["perfect_report_touch"].values())
    assert all(abs(v - cheap_attacks.REPORT_VALUE) < 1e-9 for v in touch)
    assert row("report-only:perfect_report_touch")["value"] == f"{min(touch):.4f}-{max(touch):.4f}"
    fixed = max(cheap["fixed_script"].values())
    assert row("contract-free:fixed_script")["value"] == round(fixed, 4)
    assert fixed <= cheap_attacks.CONTRACT_FREE_VALUE + 1e-9
    values = list(cheap["schema_report"].values())
    assert (
        row("probe-max:schema_report")["value"] == er_gates.probe_max("schema_report", values).value
    )
    assert row("schema_report-bound")["value"] == 0
    for name in ("fixed_script_perfect_report", "merged_report"):
        assert row(f"report-only:{name}")["value"] == round(max(cheap[name].values()), 4)


def test_the_pages_merged_into_figure_is_the_committed_one() -> None:
    import re

    text = gate_report.PAGE.read_text()
    match = re.search(r"`identity_fragmentation` on the (\d+) tasks that draw it", text)
    assert match, "the page's sentence on merged_into moved"
    scored = sum(1 for v in report()["cheap"]["merged_report"].values() if v > 0)
    assert int(match.group(1)) == scored


@pytest.mark.parametrize("policy", list(cheap_attacks.POLICIES))
def test_replayed_cheap_attacks_are_the_committed_rewards(policy: str) -> None:
    committed = report()["cheap"][policy]
    got = [reward for reward, _ in replayed(policy)]
    assert got == [committed[t.id] for t in sample()]
    if policy == "perfect_report_touch":
        assert got == pytest.approx([cheap_attacks.REPORT_VALUE] * len(got), abs=1e-9)
    elif policy == "schema_report":
        assert max(got) <= row(f"probe-max:{policy}")["value"] <= PROBE_CEILING
    elif policy == "fixed_script":
        assert max(got) <= row(f"contract-free:{policy}")["value"]
        assert max(got) <= cheap_attacks.CONTRACT_FREE_VALUE + 1e-9
    elif policy == "fixed_script_perfect_report":
        bound = cheap_attacks.REPORT_VALUE + cheap_attacks.CONTRACT_FREE_VALUE
        assert max(got) <= row(f"report-only:{policy}")["value"] <= bound + 1e-9
    else:
        assert max(got) <= row(f"report-only:{policy}")["value"] <= cheap_attacks.REPORT_VALUE


def test_world_rows_hold_on_the_replayed_sample() -> None:
    n = len(SAMPLE)
    assert world_rows.cross_check_row(env(), list(sample())).value == f"{n}/{n}"
    assert world_rows.leakage_row(env(), list(sample())).value == f"0/{n}"
    assert world_rows.canary_row(env(), list(sample())).value == f"{n}/{n} / 0/{n}"

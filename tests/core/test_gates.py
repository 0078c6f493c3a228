"""`datagauntlet gates`: each gate by name with its figure and bound, non-zero exit on failure."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import datagauntlet as dg
from datagauntlet.core import gates
from datagauntlet.core.gates import Gate, GateResult, ceiling, reference_passes, run_gates
from datagauntlet.core.score import Score

# Version stamps come with the core's scores; until a Score carries one that gate fails.
STAMPED = "stamp" in getattr(Score, "__dataclass_fields__", {})
ROOT = Path(__file__).resolve().parents[2]
# Every env's whole eval split, where the probes' mean ceilings are judged (over fewer tasks
# they are shown, not judged): bad-batch-gate's 32 cases balanced over families, dataclean's
# 40, dirty-integration's 60, and event-recon's 4, one task of each tier (its own rows' test,
# tests/event_recon/test_er_gates.py, samples the same); `make gates` runs its 120 public ones.
WHOLE = {"bad-batch-gate": 32, "dataclean": 40, "dirty-integration": 60, "event-recon": 4}


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "datagauntlet.cli.main", "gates", *args],
        capture_output=True,
        text=True,
        env=os.environ,
        timeout=600,
    )


@pytest.mark.parametrize("env_id", dg.list_envs())
def test_every_env_passes_its_gates_on_a_sample(env_id: str) -> None:
    assert len(dg.make(env_id).tasks("eval")) == WHOLE[env_id]
    proc = _cli(env_id, "--json")
    report = json.loads(proc.stdout)
    assert set(report) - {"canary"} == {"env", "ok", "gates"} and report["env"] == env_id
    assert report.get("canary") == dg.make(env_id).canary  # on the gate JSON when it has one
    names = [g["name"] for g in report["gates"]]
    for shared in ("reference-min", "null", "probe:", "floor-gap", "determinism", "rescoring",
                   "leak-scan", "version-stamp"):  # fmt: skip
        assert any(n.startswith(shared) for n in names), (shared, names)
    for g in report["gates"]:
        assert set(g) == {"name", "value", "bound", "ok"}
        if g["name"] != "version-stamp" or STAMPED:
            assert g["ok"], g
        if g["name"].startswith("probe:"):  # the whole split: every mean ceiling judged
            assert "not judged" not in g["bound"], g
    assert report["ok"] == STAMPED and proc.returncode == (0 if STAMPED else 1)


def test_the_event_recon_sample_holds_one_task_of_each_tier() -> None:
    env = dg.make("event-recon")
    tiers = [env.tier_of(t) for t in env.tasks("eval", WHOLE["event-recon"])]
    assert sorted(tiers) == [1, 2, 3, 4]


def test_a_probe_over_its_ceiling_fails_the_gate(monkeypatch: pytest.MonkeyPatch) -> None:
    env = dg.make("dataclean")
    policies = env.policies()

    @ceiling(0.5)
    def generic_claimed_low(ep: Any) -> None:
        policies["generic"](ep)

    monkeypatch.setattr(type(env), "policies", lambda self: {**policies, "g": generic_claimed_low})
    report = run_gates(env, only=["probes", "floor-gap"])  # the whole split: judged
    row = next(g for g in report.gates if g.name == "probe:g")
    assert not row.ok and row.bound == "<= 0.5" and row.value > 0.5
    assert not report.ok
    partial = run_gates(env, n=3, only=["probes"])  # a mean over 3 of 40 is shown, not judged
    row = next(g for g in partial.gates if g.name == "probe:g")
    assert row.ok and row.bound == "<= 0.5 (not judged on 3 of 40 tasks)" and row.value > 0.5


def test_a_partial_sample_of_bad_batch_gate_is_not_failed_by_its_mean_ceilings() -> None:
    proc = _cli("bad-batch-gate", "-n", "8", "--json")
    rows = {g["name"]: g for g in json.loads(proc.stdout)["gates"]}
    assert all(g["ok"] for n, g in rows.items() if n.startswith("probe:")), rows
    for name in ("load-then-quarantine", "inspect-theatre"):  # docs/gates.md's two probes
        over = rows[f"probe:{name}"]
        assert over["value"] == 0.75 and over["ok"], over
        assert over["bound"] == "<= 0.7 (not judged on 8 of 32 tasks)", over
    docs = " ".join((ROOT / "docs" / "gates.md").read_text().split())
    assert "two probes mean 0.75 there against 0.7 lines they keep over the 32" in docs


def test_a_planted_leak_is_found(monkeypatch: pytest.MonkeyPatch) -> None:
    env = dg.make("dataclean")
    first_word = env.episode(env.tasks("eval", 1)[0]).prompt.split()[0]
    monkeypatch.setattr(type(env), "truth_values", lambda self, ep: [first_word])
    report = run_gates(env, n=2, only=["leak-scan"])
    assert not report.ok and first_word in str(report.gates[0].value)


def test_a_score_key_seen_before_the_end_is_a_leak() -> None:
    env = dg.make("dirty-integration")
    assert '"records_missed":' in gates.score_keys(env)


def test_nondeterminism_and_unstable_scores_fail(monkeypatch: pytest.MonkeyPatch) -> None:
    env = dg.make("dirty-integration")
    runs = iter([{"a": "1"}, {"a": "2"}])
    monkeypatch.setattr(gates, "_digests_in_subprocess", lambda *a: next(runs))
    report = run_gates(env, n=2, only=["determinism"])
    assert report.gates[0].value == "differ" and not report.ok


def test_no_null_policy_declared_fails(monkeypatch: pytest.MonkeyPatch) -> None:
    env = dg.make("dirty-integration")
    plain = {k: v for k, v in env.policies().items() if not getattr(v, "is_null", False)}
    monkeypatch.setattr(type(env), "policies", lambda self: plain)
    report = run_gates(env, n=2, only=["null"])
    assert report.gates[0].value == "undeclared" and not report.ok


def test_an_env_adds_rows_of_its_own(monkeypatch: pytest.MonkeyPatch) -> None:
    env = dg.make("dirty-integration")

    def tasks_counted(g: gates.GateRun) -> GateResult:
        return GateResult("tasks", len(g.tasks), "== 2", len(g.tasks) == 2)

    monkeypatch.setattr(type(env), "extra_gates", lambda self: [Gate("tasks", tasks_counted)])
    report = run_gates(env, n=2, only=["tasks"])
    assert [g.as_dict() for g in report.gates] == [
        {"name": "tasks", "value": 2, "bound": "== 2", "ok": True}
    ]


@pytest.mark.parametrize("env_id", dg.list_envs())
def test_reference_passes(env_id: str) -> None:
    env = dg.make(env_id)
    assert all(reference_passes(env, t) for t in env.tasks("eval", 2))


def test_cli_mistakes_are_one_line_and_exit_2() -> None:
    for args in (["nope"], ["dataclean", "--split", "bogus"], ["dataclean", "-n", "0"]):
        proc = _cli(*args)
        assert proc.returncode == 2, (args, proc.stderr)
        assert "Traceback" not in proc.stderr and proc.stderr.strip().count("\n") == 0

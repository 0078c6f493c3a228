"""event-recon's own gate rows, run by `datagauntlet gates event-recon` after the shared ones.

Each row is a named figure with its bound:
- `oracle-min`: the truth-reading oracle's lowest reward (>= 1.0);
- `reference-reruns`: reference episodes re-run `RERUNS` times over the tasks, failures (== 0);
- `probe-max:<name>`: each single-axis probe's highest reward on any task (<= PROBE_CEILING);
- `sweep-bound`: tasks where a one-family sweep beat its own derived bound (== 0);
- `sweep-max`: the sweep's highest reward over every family and task (<= SWEEP_CEILING);
- `<policy>:*`, for every shipped workspace-only policy (`attackers.policies()`): it solves
  nothing, repairs no partner invariant 7 did not count as repairable, and its ledger component
  stays under its split-wide and per-tier lines;
- `cross-check`, `workspace-determinism`, `leakage`, `canary`: the world's own checks
  (`world_rows.py`; see docs/envs/event-recon.md).

A row over zero tasks fails: a gate that judged nothing proves nothing. The three fitted lines
are read from `ceilings.json`, where `fit_ceilings.py` stores them with the sample they name.
"""

from __future__ import annotations

import os
import statistics
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from typing import Any

from datagauntlet.core.episode import Task
from datagauntlet.envs.event_recon.attacks.probes import (
    PROBE_CEILING,
    SWEEP_PREFIX,
    sweep_bound,
    sweep_policies,
)
from datagauntlet.envs.event_recon.gates import fit_ceilings
from datagauntlet.envs.event_recon.gates.row import Row, as_results
from datagauntlet.envs.event_recon.gates.world_rows import (
    canary_row,
    cross_check_row,
    determinism_row,
    env_families,
    leakage_row,
    rescoring_row,
)

# Drift detectors, not security bounds (the workspace-only policies solving nothing is what
# bounds adversarial reward): each fitted by `fit_ceilings.py` on the measured maxima of a full
# public run, with its margin; `FIT` names the sample, the date and the code.
FIT = fit_ceilings.load()
SWEEP_CEILING = float(FIT["ceilings"]["sweep"])
ATTACKER_LEDGER_MEAN = float(FIT["ceilings"]["attacker_ledger_mean"])
ATTACKER_LEDGER_TIER = float(FIT["ceilings"]["attacker_ledger_tier"])
RERUNS = 200
TIER_TASKS = 30  # a tier of the public split: the population the mean lines were fitted on


def _play(args: tuple[dict[str, Any], str, dict[str, Any]]) -> tuple[float, dict[str, float]]:
    from datagauntlet.core.registry import make
    from datagauntlet.envs.event_recon.attacks.cheap_attacks import POLICIES as CHEAP

    config, policy, task = args
    env = make("event-recon", **config)
    fn = {**env.policies(), **sweep_policies(env_families(env)), **CHEAP}[policy]
    ep = env.episode(Task(**task))
    try:
        fn(ep)
        score = ep.score()
    finally:
        ep.close()
    return score.reward, {k: c["value"] for k, c in score.components.items()}


def play_many(
    env: Any, jobs: Sequence[tuple[str, Task]], workers: int = 1
) -> list[tuple[float, dict[str, float]]]:
    """(reward, components) per (policy, task), in job order, in process or across workers."""
    payload = [(env.config.as_dict(), p, t.full_dict()) for p, t in jobs]
    if workers <= 1 or len(payload) < 2:
        return [_play(a) for a in payload]
    chunk = max(1, len(payload) // (workers * 8))
    with ProcessPoolExecutor(max_workers=min(workers, os.cpu_count() or 1)) as pool:
        return list(pool.map(_play, payload, chunksize=chunk))


def oracle_min(rewards: Sequence[float]) -> Row:
    low = min(rewards, default=0.0)
    return Row("oracle-min", low, ">= 1.0", low >= 1.0)


def reference_reruns(env: Any, tasks: Sequence[Task], workers: int, reruns: int = RERUNS) -> Row:
    jobs = [(env.reference, tasks[i % len(tasks)]) for i in range(reruns)] if tasks else []
    failures = sum(1 for reward, _ in play_many(env, jobs, workers) if reward < 1.0)
    return Row(f"reference-reruns ({len(jobs)})", failures, "== 0", failures == 0 and bool(jobs))


def probe_max(name: str, rewards: Sequence[float]) -> Row:
    high = max(rewards, default=0.0)
    ok = high <= PROBE_CEILING and bool(rewards)
    return Row(f"probe-max:{name}", round(high, 4), f"<= {PROBE_CEILING:g}", ok)


def sweep_rows(
    env: Any,
    tasks: Sequence[Task],
    workers: int,
    record: dict[str, dict[str, float]] | None = None,
) -> list[Row]:
    """The sweep's two rows; `record`, when given, gets each family's reward per task id."""
    families = env_families(env)
    # task-major: a worker plays one task's families back to back, so it builds the world once
    # and grades the one touch script once (run_graded reuses an identical submission)
    offered = {t.id: set(env.families(t)) for t in tasks}  # a public task offers the twelve
    jobs = [(f"{SWEEP_PREFIX}{f}", t) for t in tasks for f in families if f in offered[t.id]]
    results = play_many(env, jobs, workers)
    over = 0
    for (policy, task), (reward, _) in zip(jobs, results, strict=True):
        if record is not None:
            record.setdefault(policy[len(SWEEP_PREFIX) :], {})[task.id] = reward
        truth = env.episode_truth(task)
        bound = sweep_bound(truth.manifest, len(truth.partners), policy[len(SWEEP_PREFIX) :])
        over += reward > bound + 1e-6
    high = max((r for r, _ in results), default=0.0)
    return [
        Row(f"sweep-bound ({len(jobs)} episodes)", over, "== 0", over == 0 and bool(jobs)),
        Row(
            "sweep-max",
            round(high, 4),
            f"<= {SWEEP_CEILING:g}",
            high <= SWEEP_CEILING and bool(jobs),
        ),
    ]


def cheap_rows(
    env: Any,
    tasks: Sequence[Task],
    workers: int,
    record: dict[str, dict[str, float]] | None = None,
) -> list[Row]:
    """The rows of `cheap_attacks.py`; `record`, when given, gets each one's reward per task."""
    from datagauntlet.envs.event_recon.attacks.cheap_attacks import (
        CONTRACT_FREE_VALUE,
        POLICIES,
        REPORT_VALUE,
        partner_bound,
    )

    names = list(POLICIES)
    jobs = [(p, t) for t in tasks for p in names]  # task-major, as in the sweep
    results = play_many(env, jobs, workers)
    rewards: dict[str, list[float]] = {p: [] for p in names}
    for (policy, task), (reward, _) in zip(jobs, results, strict=True):
        rewards[policy].append(reward)
        if record is not None:
            record.setdefault(policy, {})[task.id] = reward
    over = 0
    for task, reward in zip(tasks, rewards["schema_report"], strict=True):
        truth = env.episode_truth(task)
        families = len(env.families(task))  # the families this task's contract publishes
        bound = max((partner_bound(truth.manifest, families, p) for p in truth.partners), default=0)
        over += reward > bound + 1e-6
    touch = rewards["perfect_report_touch"]
    exact = bool(touch) and all(abs(r - REPORT_VALUE) < 1e-9 for r in touch)
    spread = f"{min(touch, default=0.0):.4f}-{max(touch, default=0.0):.4f}"
    fixed = max(rewards["fixed_script"], default=0.0)
    blind = max(rewards["fixed_script_perfect_report"], default=0.0)
    merged = max(rewards["merged_report"], default=0.0)
    return [
        Row(
            "report-only:perfect_report_touch", spread, f"== {REPORT_VALUE:g} on every task", exact
        ),
        Row(
            "contract-free:fixed_script",
            round(fixed, 4),
            f"<= {CONTRACT_FREE_VALUE:g}",
            fixed <= CONTRACT_FREE_VALUE + 1e-9 and bool(tasks),
        ),
        Row(
            "report-only:fixed_script_perfect_report",
            round(blind, 4),
            f"<= {REPORT_VALUE + CONTRACT_FREE_VALUE:g}",
            blind <= REPORT_VALUE + CONTRACT_FREE_VALUE + 1e-9 and bool(tasks),
        ),
        Row(
            f"schema_report-bound ({len(tasks)} episodes)", over, "== 0", over == 0 and bool(tasks)
        ),
        probe_max("schema_report", rewards["schema_report"]),
        Row(
            "report-only:merged_report",
            round(merged, 4),
            f"<= {REPORT_VALUE:g}",
            merged <= REPORT_VALUE + 1e-9 and bool(tasks),
        ),
    ]


def attacker_rows(
    name: str,
    tiers: Sequence[int],
    results: Sequence[tuple[float, dict[str, float]]],
    mean_over: int = TIER_TASKS,
) -> list[Row]:
    """The attacker solves nothing; its ledger component stays within invariant 7's share on
    every task, and its means stay under their lines. The mean lines were fitted on whole tiers
    (30 tasks) and the whole split, so a mean over fewer than `mean_over` tasks a tier is shown
    but not judged: one task that finishes its quarter would read as a tier mean of 0.25."""
    from datagauntlet.envs.event_recon.world.plan import MAX_REPAIRABLE_SHARE

    solved = sum(1 for reward, _ in results if reward >= 1.0)
    ledger = [c["ledger_correctness"] for _, c in results]
    high = round(max(ledger, default=0.0), 4)
    mean = round(statistics.fmean(ledger), 4) if ledger else 0.0
    per_tier = {t: [v for u, v in zip(tiers, ledger, strict=True) if u == t] for t in set(tiers)}
    whole = bool(per_tier) and min(len(v) for v in per_tier.values()) >= mean_over

    def line(limit: float, judged: bool, n: int) -> str:
        return f"<= {limit:g}" if judged else f"<= {limit:g} (not judged on {n} tasks)"

    rows = [
        Row(f"{name}:solved", solved, "== 0", solved == 0 and bool(results)),
        Row(
            f"{name}:ledger-max",
            high,
            f"<= {MAX_REPAIRABLE_SHARE:g}",
            high <= MAX_REPAIRABLE_SHARE,
        ),
        Row(
            f"{name}:ledger-mean",
            mean,
            line(ATTACKER_LEDGER_MEAN, whole, len(ledger)),
            mean <= ATTACKER_LEDGER_MEAN or not whole,
        ),
    ]
    for tier in sorted(per_tier):
        vals = per_tier[tier]
        m = round(statistics.fmean(vals), 4)
        rows.append(
            Row(
                f"{name}:ledger-mean-t{tier}",
                m,
                line(ATTACKER_LEDGER_TIER, len(vals) >= mean_over, len(vals)),
                m <= ATTACKER_LEDGER_TIER or len(vals) < mean_over,
            )
        )
    return rows


# --- the rows as core/gates.py gates -----------------------------------------------------------
def invariant7_row(name: str, repaired: Sequence[int], repairable: Sequence[int]) -> Row:
    """Tasks where a workspace-only policy repaired more partners than the generator counted
    as repairable without the contract: invariant 7's simulation missed one of its repairs."""
    over = sum(1 for done, allowed in zip(repaired, repairable, strict=True) if done > allowed)
    n = len(repaired)
    return Row(f"{name}:beyond-invariant-7 ({n} tasks)", over, "== 0", over == 0 and n > 0)


def _attackers(g: Any) -> list[Any]:
    """Every shipped workspace-only policy's rows."""
    from datagauntlet.envs.event_recon.attacks.attackers import policies

    tiers = [g.env.tier_of(t) for t in g.tasks]
    repairable = [len(g.env.world(t).notes["repairable_without_contract"]) for t in g.tasks]
    rows: list[Row] = []
    for name in sorted(policies()):
        played = g.results(name)
        results = [(r.reward, r.components) for r in played]
        rows += attacker_rows(name, tiers, results)
        repaired = [int(r.metrics.get("partners_repaired", 0)) for r in played]
        rows.append(invariant7_row(name, repaired, repairable))
    return as_results(rows)


def extra_gates() -> list[Any]:
    from datagauntlet.core.gates import Gate
    from datagauntlet.envs.event_recon.attacks.probes import SINGLE_AXIS

    def rows(fn: Callable[[Any], Sequence[Row]]) -> Callable[[Any], list[Any]]:
        return lambda g: as_results(fn(g))

    gates = [
        Gate("oracle-min", rows(lambda g: [oracle_min(g.rewards("oracle"))])),
        Gate(
            "reference-reruns",
            rows(lambda g: [reference_reruns(g.env, g.tasks, g.workers)]),
        ),
        Gate(
            "probe-max",
            rows(lambda g: [probe_max(n, g.rewards(n)) for n in SINGLE_AXIS]),
        ),
        Gate(
            "sweep",
            rows(lambda g: sweep_rows(g.env, g.tasks, g.workers, getattr(g, "sweep", None))),
        ),
        Gate("workspace-attacker", _attackers),
        Gate(
            "cheap-attacks",
            rows(lambda g: cheap_rows(g.env, g.tasks, g.workers, getattr(g, "cheap", None))),
        ),
        Gate("cross-check", rows(lambda g: [cross_check_row(g.env, g.tasks)])),
        Gate("workspace-determinism", rows(lambda g: [determinism_row(g.env, g.tasks)])),
        Gate(
            "script-rescoring",
            rows(lambda g: [rescoring_row(g.env, g.tasks[0], g.env.reference)]),
        ),
        Gate("leakage", rows(lambda g: [leakage_row(g.env, g.tasks)])),
        Gate("canary", rows(lambda g: [canary_row(g.env, g.tasks)])),
    ]
    return gates

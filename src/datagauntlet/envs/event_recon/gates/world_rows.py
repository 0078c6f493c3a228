"""The rows that judge the worlds themselves, not a policy's play: the reconciler's cross-check,
byte-identical workspaces across processes, leakage, the canary and re-scoring stability."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from datagauntlet.core.episode import Task
from datagauntlet.core.secret import scrub_seeds
from datagauntlet.envs.event_recon.gates.row import Row


def env_families(env: Any) -> tuple[str, ...]:
    """The public twelve and every family a module (the config's or the held-out one) adds."""
    from datagauntlet.envs.event_recon.splits import reference_steps
    from datagauntlet.envs.event_recon.world.records import FAMILIES

    return tuple(FAMILIES) + tuple(reference_steps(getattr(env.config, "family_module", None)))


def _records(env: Any, tasks: Sequence[Task]) -> list[Any]:
    return [env.record(t) for t in tasks]


def cross_check_row(env: Any, tasks: Sequence[Task]) -> Row:
    from datagauntlet.envs.event_recon.gates.world_checks import cross_check_all
    from datagauntlet.envs.event_recon.world.generator import TaskRefused

    try:
        n, projections = cross_check_all(_records(env, tasks))
    except TaskRefused as exc:  # a held-out seed is a secret: the row may be published
        text = scrub_seeds(str(exc))
        return Row("cross-check", f"refused: {text}"[:200], f"{len(tasks)}/{len(tasks)}", False)
    return Row(
        f"cross-check ({projections:,} partner projections)",
        f"{n}/{len(tasks)}",
        f"{len(tasks)}/{len(tasks)}",
        n == len(tasks) and n > 0,
    )


def determinism_row(env: Any, tasks: Sequence[Task]) -> Row:
    """Workspaces byte-identical in this process and two others with different hash seeds,
    for every task of a split table (eval's are the public ones, reordered; train and test
    tasks have no table to rebuild them from in another process, so they are not counted)."""
    from datagauntlet.envs.event_recon.gates.world_checks import (
        digests_in_subprocess,
        workspace_digest,
    )

    groups: dict[tuple[str, str | None], list[Task]] = {}
    for t in tasks:
        r = env.record(t)
        if r.split not in ("train", "test"):
            groups.setdefault((r.split, r.family_module), []).append(t)
    same = total = 0
    for (split, module), group in groups.items():
        indices = [env.record(t).index for t in group]
        here = [workspace_digest(env.world(t)) for t in group]
        runs = [digests_in_subprocess(indices, seed, split, module) for seed in ("1", "2")]
        same += sum(1 for i, d in enumerate(here) if all(r[i] == d for r in runs))
        total += len(group)
    ok = same == total > 0  # over zero tasks it proves nothing
    return Row("workspace-determinism", f"{same}/{total}", f"{total}/{total}", ok)


def leakage_row(env: Any, tasks: Sequence[Task]) -> Row:
    from datagauntlet.envs.event_recon.gates.world_checks import leak_findings

    leaky = sum(1 for t in tasks if leak_findings(env.world(t), env_families(env)))
    ok = leaky == 0 and bool(tasks)
    return Row("leakage (string, column, derived)", f"{leaky}/{len(tasks)}", "0", ok)


def canary_row(env: Any, tasks: Sequence[Task]) -> Row:
    from datagauntlet.envs.event_recon import canary

    on_records = sum(1 for t in tasks if canary.on_records(env, t))
    in_workspaces = sum(1 for t in tasks if canary.in_workspace(env.world(t).files))
    n = len(tasks)
    return Row(
        "canary (records / workspaces)",
        f"{on_records}/{n} / {in_workspaces}/{n}",
        f"{n}/{n} / 0/{n}",
        on_records == n > 0 and in_workspaces == 0,
    )


def rescoring_row(env: Any, task: Task, policy: str, times: int = 100) -> Row:
    """One trajectory re-graded `times` times from scratch, the script re-run each time."""
    ep = env.episode(task)
    try:
        env.policies()[policy](ep)
        rewards = {ep.rescore().reward for _ in range(times)}
    finally:
        ep.close()
    return Row(f"rescoring ({times}x, script re-run)", len(rewards), "== 1", len(rewards) == 1)

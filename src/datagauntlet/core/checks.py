"""The named conformance checks `check_env` runs, one promise of DESIGN.md each.

Each check is a function of a `Context` that returns nothing or raises `ConformanceError` with
a message saying what broke. They share the context's recordings, so a policy is played once
per task however many checks read its trajectory (`check_context.py`). The checks that open a
fresh episode of each task live in `episode_checks.py`; this file holds the env-wide ones, the
ones over every policy's play, and the table of all of them in the order they run.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable

from datagauntlet.core.action_log import canonical_json
from datagauntlet.core.check_context import Check, ConformanceError, Context, Played, Recorder, fail
from datagauntlet.core.env import policy_sees_truth
from datagauntlet.core.episode import Task
from datagauntlet.core.episode_checks import (
    check_bad_input,
    check_close_twice,
    check_handlers,
    check_no_credit_without_submission,
    check_prompts,
    check_refusals_bounded,
    check_results_unshared,
    check_tool_schemas,
)
from datagauntlet.core.replay import next_tool_call
from datagauntlet.core.score import STAMP_FIELDS

__all__ = ["CHECKS", "Check", "ConformanceError", "Context"]


# --- the env as a whole ------------------------------------------------------------------------
def check_weights(ctx: Context) -> None:
    if not math.isclose(sum(ctx.env.weights.values()), 1.0, abs_tol=1e-9):
        fail("weights do not sum to 1")


def check_reference_exists(ctx: Context) -> None:
    if ctx.env.reference not in ctx.policies:
        fail(f"reference policy {ctx.env.reference!r} is not among {sorted(ctx.policies)}")


def check_tasks_deterministic(ctx: Context) -> None:
    n = len(ctx.tasks)
    if [t.as_dict() for t in ctx.tasks] != [t.as_dict() for t in ctx.env.tasks("eval", n)]:
        fail("tasks are not deterministic")


def check_splits_disjoint(ctx: Context) -> None:
    train, eval_, test = ({t.seed for t in ctx.env.tasks(s, 20)} for s in ("train", "eval", "test"))
    if train & eval_ or eval_ & test or train & test:
        fail("splits share task seeds")


# --- every policy on every task ----------------------------------------------------------------
def _each_play(ctx: Context, check: Callable[[str, Task, Played], None]) -> None:
    for task in ctx.tasks:
        for name in ctx.policies:
            check(name, task, ctx.play(name, task))


def check_policies_deterministic(ctx: Context) -> None:
    def one(name: str, task: Task, first: Played) -> None:
        again = ctx.play(name, task, attempt=1)
        if canonical_json(first.score.as_dict()) != canonical_json(again.score.as_dict()):
            fail(f"policy {name} scored differently on a replay of the same task")
        if canonical_json(first.recorder.results) != canonical_json(again.recorder.results):
            fail(f"policy {name} saw different results on a replay of the same task")

    _each_play(ctx, one)


def check_results_json(ctx: Context) -> None:
    def one(name: str, _task: Task, played: Played) -> None:
        for result in played.recorder.results:
            if json.loads(json.dumps(result)) != result:
                fail(f"a result of policy {name} does not survive JSON: {result!r}")

    _each_play(ctx, one)


def check_scores(ctx: Context) -> None:
    """Scores lie in [0, 1] and are the weighted sum of the env's components."""

    def one(name: str, _task: Task, played: Played) -> None:
        s = played.score
        if not 0.0 <= s.reward <= 1.0:
            fail(f"policy {name} reward {s.reward} outside [0, 1]")
        total = sum(c["value"] * c["weight"] for c in s.components.values())
        if not math.isclose(total, s.reward, abs_tol=1e-5):
            fail(f"policy {name}: reward is not the weighted sum of its components")
        if set(s.components) != set(ctx.env.weights):
            fail(f"policy {name}: components differ from the env's weights")

    _each_play(ctx, one)


def check_log_chain(ctx: Context) -> None:
    def one(name: str, _task: Task, played: Played) -> None:
        if not played.episode.log.chain_intact():
            fail(f"policy {name}: action log chain broken")

    _each_play(ctx, one)


def check_reference_scores_one(ctx: Context) -> None:
    for task in ctx.tasks:
        reward = ctx.play(ctx.env.reference, task).score.reward
        if reward != 1.0:
            fail(f"reference policy {ctx.env.reference} scored {reward} on task {task.id}")


def check_version_stamps(ctx: Context) -> None:
    def one(name: str, _task: Task, played: Played) -> None:
        stamp = played.score.stamp
        missing = [k for k in STAMP_FIELDS if not isinstance(stamp.get(k), str) or not stamp[k]]
        if missing:
            fail(f"policy {name}: the score's version stamp lacks {', '.join(missing)}")

    _each_play(ctx, one)


def check_replayable(ctx: Context) -> None:
    """A policy that sees only what an agent sees makes the same calls when replayed."""
    if not ctx.replay:
        return
    for task in ctx.tasks:
        for name, policy in ctx.policies.items():
            if not policy_sees_truth(policy):
                _check_replay(ctx, name, task, ctx.play(name, task).recorder)


def _check_replay(ctx: Context, name: str, task: Task, rec: Recorder) -> None:
    ep = ctx.fresh(task)
    try:
        system_prompt, prompt, specs = ep.system_prompt, ep.prompt, ep.tool_specs
    finally:
        ep.close()
    policy = ctx.env.policies()[name]
    # Checking every prefix is quadratic; a handful of prefixes catches hidden state.
    points = sorted({0, len(rec.calls) // 3, len(rec.calls) // 2, len(rec.calls)})
    for k in points:
        try:
            nxt = next_tool_call(policy, system_prompt, prompt, specs, rec.results[:k])
        except Exception as exc:
            raise ConformanceError(
                f"policy {name} is not replayable at call {k}: it raised "
                f"{type(exc).__name__}: {exc} (does it read hidden state?)"
            ) from exc
        expected = rec.calls[k] if k < len(rec.calls) else None
        if nxt != expected:
            fail(
                f"policy {name} is not replayable at call {k}: "
                f"expected {expected}, replay gave {nxt} (does it read hidden state?)"
            )


CHECKS: tuple[tuple[str, Check], ...] = (
    ("weights sum to 1", check_weights),
    ("the reference policy exists", check_reference_exists),
    ("tasks are deterministic", check_tasks_deterministic),
    ("splits are disjoint", check_splits_disjoint),
    ("tool schemas are valid", check_tool_schemas),
    ("every declared tool has a handler", check_handlers),
    ("prompts are not empty", check_prompts),
    ("no credit without a submission", check_no_credit_without_submission),
    ("bad input is refused and changes nothing", check_bad_input),
    ("refused calls keep bounded data in the log", check_refusals_bounded),
    ("close is safe twice", check_close_twice),
    ("results share no state with the world", check_results_unshared),
    ("policies are deterministic", check_policies_deterministic),
    ("results survive JSON", check_results_json),
    ("scores are in [0, 1] and weighted", check_scores),
    ("the action log chain is intact", check_log_chain),
    ("the reference policy scores 1.0", check_reference_scores_one),
    ("every score carries a version stamp", check_version_stamps),
    ("policies see only what an agent sees", check_replayable),
)

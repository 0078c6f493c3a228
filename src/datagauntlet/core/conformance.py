"""`check_env`: the conformance check every registered environment must pass.

It checks what DESIGN.md promises of every env: deterministic tasks and episodes, valid tool
schemas, bad input answered with an error and no change to the world, scores inside [0, 1]
with weights summing to 1, no credit without a submission, a reference policy at 1.0, and
policies that see only what an agent sees (they replay exactly from their own results).
"""

from __future__ import annotations

import json
import math
from typing import Any

from datagauntlet.core.action_log import canonical_json
from datagauntlet.core.env import Environment, policy_sees_truth
from datagauntlet.core.episode import Episode, Task
from datagauntlet.core.replay import ToolCall, next_tool_call
from datagauntlet.core.tools import check_tool_schema


class ConformanceError(AssertionError):
    pass


class _Recorder:
    """Wraps an episode and records every call and result a policy makes."""

    def __init__(self, ep: Episode) -> None:
        self._ep = ep
        self.calls: list[ToolCall] = []
        self.results: list[dict[str, Any]] = []

    def __getattr__(self, name: str) -> Any:
        return getattr(self._ep, name)

    def call(self, name: str, args: dict[str, Any] | None = None) -> dict[str, Any]:
        result = self._ep.call(name, args)
        self.calls.append(ToolCall(name, dict(args or {})))
        self.results.append(result)
        return result


def _record(env: Environment, policy_name: str, task: Task) -> tuple[_Recorder, Any]:
    ep = env.episode(task)
    rec = _Recorder(ep)
    env.policies()[policy_name](rec)  # type: ignore[arg-type]
    return rec, ep.score()


def _bad_inputs(ep: Episode) -> list[tuple[Any, Any]]:
    first = ep.tools[0]
    calls: list[tuple[Any, Any]] = [
        ("no_such_tool", {}),
        (None, {}),
        (first.name, "{not json"),
        (first.name, [1, 2]),
        (first.name, {"__unexpected__": 1}),
    ]
    for tool in ep.tools:
        tprops = tool.parameters.get("properties", {})
        required = tool.parameters.get("required", [])
        if required:
            calls.append((tool.name, {}))  # missing arguments
        for name in tprops:
            calls.append((tool.name, {name: {"nested": ["object"]}}))
            calls.append((tool.name, {name: float("inf")}))
    return calls


def check_env(env: Environment, n_tasks: int = 3, replay: bool = True) -> None:
    """Raise ConformanceError with a clear message on the first broken promise."""

    def fail(msg: str) -> None:
        raise ConformanceError(f"{env.id}: {msg}")

    # weights and policies
    if not math.isclose(sum(env.weights.values()), 1.0, abs_tol=1e-9):
        fail("weights do not sum to 1")
    policies = env.policies()
    if env.reference not in policies:
        fail(f"reference policy {env.reference!r} is not among {sorted(policies)}")

    # tasks: deterministic, splits disjoint
    tasks = env.tasks("eval", n_tasks)
    if [t.as_dict() for t in tasks] != [t.as_dict() for t in env.tasks("eval", n_tasks)]:
        fail("tasks are not deterministic")
    train, eval_, test = ({t.seed for t in env.tasks(s, 20)} for s in ("train", "eval", "test"))
    if train & eval_ or eval_ & test or train & test:
        fail("splits share task seeds")

    for task in tasks:
        ep = env.episode(task)
        problems = [p for tool in ep.tools for p in check_tool_schema(tool)]
        if problems:
            fail("; ".join(problems))
        if not ep.system_prompt.strip() or not ep.prompt.strip():
            fail("empty system prompt or prompt")
        json.dumps(ep.tool_specs)

        # no credit without a submission
        if ep.score().reward != 0.0:
            fail(f"an episode with no calls scored {ep.score().reward}, not 0")

        # bad input: an error, no exception, no change to the world
        before = ep.fingerprint()
        for name, args in _bad_inputs(ep):
            out = ep.call(name, args)
            if not isinstance(out, dict) or "error" not in out:
                fail(f"bad call {name!r} {args!r} was not answered with an error: {out!r}")
            if ep.fingerprint() != before:
                fail(f"bad call {name!r} {args!r} changed the world")
        if not ep.log.chain_intact():
            fail("action log chain broken after refused calls")
        if any(e.executed for e in ep.log.entries):
            fail("a refused call was logged as executed")

        # every policy: deterministic, JSON results, scores in range; reference at 1.0
        for name, policy in policies.items():
            rec1, s1 = _record(env, name, task)
            rec2, s2 = _record(env, name, task)
            if canonical_json(s1.as_dict()) != canonical_json(s2.as_dict()):
                fail(f"policy {name} scored differently on a replay of the same task")
            if canonical_json(rec1.results) != canonical_json(rec2.results):
                fail(f"policy {name} saw different results on a replay of the same task")
            for result in rec1.results:
                if json.loads(json.dumps(result)) != result:
                    fail(f"a result of policy {name} does not survive JSON: {result!r}")
            if not 0.0 <= s1.reward <= 1.0:
                fail(f"policy {name} reward {s1.reward} outside [0, 1]")
            total = sum(c["value"] * c["weight"] for c in s1.components.values())
            if not math.isclose(total, s1.reward, abs_tol=1e-5):
                fail(f"policy {name}: reward is not the weighted sum of its components")
            if set(s1.components) != set(env.weights):
                fail(f"policy {name}: components differ from the env's weights")
            if not rec1._ep.log.chain_intact():
                fail(f"policy {name}: action log chain broken")
            if name == env.reference and s1.reward != 1.0:
                fail(f"reference policy {name} scored {s1.reward} on task {task.id}")
            if replay and not policy_sees_truth(policy):
                _check_replay(env, name, task, rec1)


def _check_replay(env: Environment, name: str, task: Task, rec: _Recorder) -> None:
    """A policy that sees only what an agent sees makes the same calls when replayed."""
    ep = env.episode(task)
    policy = env.policies()[name]
    # Checking every prefix is quadratic; a handful of prefixes catches hidden state.
    points = sorted({0, len(rec.calls) // 3, len(rec.calls) // 2, len(rec.calls)})
    for k in points:
        try:
            nxt = next_tool_call(
                policy, ep.system_prompt, ep.prompt, ep.tool_specs, rec.results[:k]
            )
        except Exception as exc:
            raise ConformanceError(
                f"{env.id}: policy {name} is not replayable at call {k}: it raised "
                f"{type(exc).__name__}: {exc} (does it read hidden state?)"
            ) from exc
        expected = rec.calls[k] if k < len(rec.calls) else None
        if nxt != expected:
            raise ConformanceError(
                f"{env.id}: policy {name} is not replayable at call {k}: "
                f"expected {expected}, replay gave {nxt} (does it read hidden state?)"
            )

"""The named conformance checks `check_env` runs, one promise of DESIGN.md each.

Each check is a function of a `Context` that returns nothing or raises `ConformanceError` with
a message saying what broke. They share the context's recordings, so a policy is played once
per task however many checks read its trajectory.
"""

from __future__ import annotations

import inspect
import json
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from datagauntlet.core.action_log import canonical_json
from datagauntlet.core.env import Environment, Policy, policy_sees_truth
from datagauntlet.core.episode import REFUSED_ARGS_CHARS, Episode, Task
from datagauntlet.core.replay import ToolCall, next_tool_call
from datagauntlet.core.score import STAMP_FIELDS, Score
from datagauntlet.core.tools import check_tool_schema


class ConformanceError(AssertionError):
    pass


class _Recorder:
    """Wraps an episode and records every call and result a policy makes."""

    def __init__(self, ep: Episode[Any]) -> None:
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


@dataclass
class Played:
    recorder: _Recorder
    score: Score
    episode: Episode[Any]


@dataclass
class Context:
    env: Environment[Any]
    tasks: list[Task]
    replay: bool
    policies: dict[str, Policy] = field(default_factory=dict)
    _played: dict[tuple[str, str, int], Played] = field(default_factory=dict)

    def play(self, policy: str, task: Task, attempt: int = 0) -> Played:
        """The policy's recorded play of a task (attempt 1 is an independent replay)."""
        key = (policy, task.id, attempt)
        if key not in self._played:
            ep = self.env.episode(task)
            rec = _Recorder(ep)
            try:
                self.env.policies()[policy](rec)  # type: ignore[arg-type]
                score = ep.score()
            finally:
                ep.close()
            self._played[key] = Played(rec, score, ep)
        return self._played[key]

    def fresh(self, task: Task) -> Episode[Any]:
        return self.env.episode(task)


Check = Callable[[Context], None]


def _fail(message: str) -> None:
    raise ConformanceError(message)


# --- the env as a whole ------------------------------------------------------------------------
def check_weights(ctx: Context) -> None:
    if not math.isclose(sum(ctx.env.weights.values()), 1.0, abs_tol=1e-9):
        _fail("weights do not sum to 1")


def check_reference_exists(ctx: Context) -> None:
    if ctx.env.reference not in ctx.policies:
        _fail(f"reference policy {ctx.env.reference!r} is not among {sorted(ctx.policies)}")


def check_tasks_deterministic(ctx: Context) -> None:
    n = len(ctx.tasks)
    if [t.as_dict() for t in ctx.tasks] != [t.as_dict() for t in ctx.env.tasks("eval", n)]:
        _fail("tasks are not deterministic")


def check_splits_disjoint(ctx: Context) -> None:
    train, eval_, test = ({t.seed for t in ctx.env.tasks(s, 20)} for s in ("train", "eval", "test"))
    if train & eval_ or eval_ & test or train & test:
        _fail("splits share task seeds")


# --- one fresh episode per task --------------------------------------------------------------
def _each_fresh(ctx: Context, check: Callable[[Episode[Any], Task], None]) -> None:
    for task in ctx.tasks:
        ep = ctx.fresh(task)
        try:
            check(ep, task)
        finally:
            ep.close()


def check_tool_schemas(ctx: Context) -> None:
    def one(ep: Episode[Any], _task: Task) -> None:
        problems = [p for tool in ep.tools for p in check_tool_schema(tool)]
        if problems:
            _fail("; ".join(problems))
        if not ep.tools:
            _fail("the episode declares no tools")
        json.dumps(ep.tool_specs)

    _each_fresh(ctx, one)


def check_handlers(ctx: Context) -> None:
    """Every declared tool has a handler that accepts exactly its declared arguments."""

    def one(ep: Episode[Any], _task: Task) -> None:
        legacy = getattr(type(ep), "TOOLS", None)
        if legacy:
            names = [getattr(t, "name", t) for t in legacy]
            _fail(f"TOOLS {names} are declarations without handlers: declare them with @tool")
        for tool in ep.tools:
            bound = ep.bound_tool(tool.name)
            if bound is None or not callable(bound.handler):
                _fail(f"tool {tool.name} has no handler")
                return
            problem = _signature_problem(bound.handler, tool.parameters)
            if problem:
                _fail(f"tool {tool.name}: {problem}")

    _each_fresh(ctx, one)


def _signature_problem(handler: Callable[..., Any], schema: dict[str, Any]) -> str | None:
    params = inspect.signature(handler).parameters
    if any(p.kind is p.VAR_KEYWORD for p in params.values()):
        return None
    declared = set(schema.get("properties", {}))
    required = set(schema.get("required", []))
    missing = sorted(declared - set(params))
    if missing:
        return f"the handler takes no argument {missing[0]!r}"
    for name, p in params.items():
        if p.default is p.empty and name not in required:
            return f"the handler needs {name!r}, which the schema does not require"
    return None


def check_prompts(ctx: Context) -> None:
    def one(ep: Episode[Any], _task: Task) -> None:
        if not ep.system_prompt.strip() or not ep.prompt.strip():
            _fail("empty system prompt or prompt")

    _each_fresh(ctx, one)


def check_no_credit_without_submission(ctx: Context) -> None:
    def one(ep: Episode[Any], _task: Task) -> None:
        reward = ep.score().reward
        if reward != 0.0:
            _fail(f"an episode with no calls scored {reward}, not 0")

    _each_fresh(ctx, one)


def bad_inputs(ep: Episode[Any]) -> list[tuple[Any, Any]]:
    first = ep.tools[0]
    calls: list[tuple[Any, Any]] = [
        ("no_such_tool", {}),
        (None, {}),
        (first.name, "{not json"),
        (first.name, [1, 2]),
        (first.name, {"__unexpected__": 1}),
    ]
    for tool in ep.tools:
        props = tool.parameters.get("properties", {})
        if tool.parameters.get("required", []):
            calls.append((tool.name, {}))  # missing arguments
        for name in props:
            calls.append((tool.name, {name: {"nested": ["object"]}}))
            calls.append((tool.name, {name: float("inf")}))
    return calls


def check_bad_input(ctx: Context) -> None:
    """Bad input is answered with an error and changes nothing."""

    def one(ep: Episode[Any], _task: Task) -> None:
        before = ep.fingerprint()
        for name, args in bad_inputs(ep):
            out = ep.call(name, args)
            if not isinstance(out, dict) or "error" not in out:
                _fail(f"bad call {name!r} {args!r} was not answered with an error: {out!r}")
            if ep.fingerprint() != before:
                _fail(f"bad call {name!r} {args!r} changed the world")
        if not ep.log.chain_intact():
            _fail("action log chain broken after refused calls")
        if any(e.executed for e in ep.log.entries):
            _fail("a refused call was logged as executed")

    _each_fresh(ctx, one)


def check_refusals_bounded(ctx: Context) -> None:
    """A refused call keeps a bounded amount of data in the log, however large it was."""
    huge = "x" * (50 * REFUSED_ARGS_CHARS)

    def one(ep: Episode[Any], _task: Task) -> None:
        first = ep.tools[0].name
        for name, args in [
            ("no_such_tool", {"blob": huge}),
            (first, {"__unexpected__": huge}),
            (first, "{" + huge),
            (huge, {}),
        ]:
            ep.call(name, args)
        for entry in ep.log.entries:
            size = len(canonical_json(entry.args)) + len(entry.tool) + len(entry.summary)
            if size > 4 * REFUSED_ARGS_CHARS:
                _fail(f"a refused call kept {size:,} characters in the log")

    _each_fresh(ctx, one)


def check_close_twice(ctx: Context) -> None:
    """close() is safe twice, and a closed episode refuses calls without changing."""
    task = ctx.tasks[0]
    ep = ctx.fresh(task)
    try:
        ctx.policies[ctx.env.reference](ep)
        score = ep.score()
    finally:
        ep.close()
    ep.close()
    before = len(ep.log)
    out = ep.call(ep.tools[0].name, {})
    if not isinstance(out, dict) or "error" not in out:
        _fail(f"a closed episode answered a call: {out!r}")
    if len(ep.log) != before:
        _fail("a call to a closed episode was logged")
    if ep.score() != score:
        _fail("a closed episode's score changed")


def _scramble(value: Any) -> None:
    """Overwrite every container inside `value`, in place."""
    if isinstance(value, dict):
        for key in list(value):
            _scramble(value[key])
            value[key] = "<scrambled>"
        value["__scrambled__"] = True
    elif isinstance(value, list):
        for item in value:
            _scramble(item)
        value[:] = ["<scrambled>"] * (len(value) + 1)


def check_results_unshared(ctx: Context) -> None:
    """Changing a returned result changes nothing: not the world, not another episode."""
    task = ctx.tasks[0]
    reference = ctx.play(ctx.env.reference, task)
    calls = reference.recorder.calls
    editor = ctx.fresh(task)
    try:
        seen = []
        for call in calls:
            result = editor.call(call.name, call.arguments)
            seen.append(canonical_json(result))
            _scramble(result)
        edited_score = canonical_json(editor.score().as_dict())
    finally:
        editor.close()
    expected = [
        canonical_json(r) for r in ctx.play(ctx.env.reference, task, attempt=1).recorder.results
    ]
    if seen != expected:
        _fail("editing a result changed what later calls returned")
    if edited_score != canonical_json(reference.score.as_dict()):
        _fail("editing a result changed the score")
    after = ctx.play(ctx.env.reference, task, attempt=2)
    if [canonical_json(r) for r in after.recorder.results] != expected:
        _fail("editing a result changed what another episode of the task returns")
    specs = ctx.fresh(task)
    try:
        _scramble(specs.tool_specs)
        if any(s.get("__scrambled__") for s in specs.tool_specs):
            _fail("tool_specs hands out the episode's own objects")
    finally:
        specs.close()


# --- every policy on every task ----------------------------------------------------------------
def _each_play(ctx: Context, check: Callable[[str, Task, Played], None]) -> None:
    for task in ctx.tasks:
        for name in ctx.policies:
            check(name, task, ctx.play(name, task))


def check_policies_deterministic(ctx: Context) -> None:
    def one(name: str, task: Task, first: Played) -> None:
        again = ctx.play(name, task, attempt=1)
        if canonical_json(first.score.as_dict()) != canonical_json(again.score.as_dict()):
            _fail(f"policy {name} scored differently on a replay of the same task")
        if canonical_json(first.recorder.results) != canonical_json(again.recorder.results):
            _fail(f"policy {name} saw different results on a replay of the same task")

    _each_play(ctx, one)


def check_results_json(ctx: Context) -> None:
    def one(name: str, _task: Task, played: Played) -> None:
        for result in played.recorder.results:
            if json.loads(json.dumps(result)) != result:
                _fail(f"a result of policy {name} does not survive JSON: {result!r}")

    _each_play(ctx, one)


def check_scores(ctx: Context) -> None:
    """Scores lie in [0, 1] and are the weighted sum of the env's components."""

    def one(name: str, _task: Task, played: Played) -> None:
        s = played.score
        if not 0.0 <= s.reward <= 1.0:
            _fail(f"policy {name} reward {s.reward} outside [0, 1]")
        total = sum(c["value"] * c["weight"] for c in s.components.values())
        if not math.isclose(total, s.reward, abs_tol=1e-5):
            _fail(f"policy {name}: reward is not the weighted sum of its components")
        if set(s.components) != set(ctx.env.weights):
            _fail(f"policy {name}: components differ from the env's weights")

    _each_play(ctx, one)


def check_log_chain(ctx: Context) -> None:
    def one(name: str, _task: Task, played: Played) -> None:
        if not played.episode.log.chain_intact():
            _fail(f"policy {name}: action log chain broken")

    _each_play(ctx, one)


def check_reference_scores_one(ctx: Context) -> None:
    for task in ctx.tasks:
        reward = ctx.play(ctx.env.reference, task).score.reward
        if reward != 1.0:
            _fail(f"reference policy {ctx.env.reference} scored {reward} on task {task.id}")


def check_version_stamps(ctx: Context) -> None:
    def one(name: str, _task: Task, played: Played) -> None:
        stamp = played.score.stamp
        missing = [k for k in STAMP_FIELDS if not isinstance(stamp.get(k), str) or not stamp[k]]
        if missing:
            _fail(f"policy {name}: the score's version stamp lacks {', '.join(missing)}")

    _each_play(ctx, one)


def check_replayable(ctx: Context) -> None:
    """A policy that sees only what an agent sees makes the same calls when replayed."""
    if not ctx.replay:
        return
    for task in ctx.tasks:
        for name, policy in ctx.policies.items():
            if not policy_sees_truth(policy):
                _check_replay(ctx, name, task, ctx.play(name, task).recorder)


def _check_replay(ctx: Context, name: str, task: Task, rec: _Recorder) -> None:
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
            _fail(
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

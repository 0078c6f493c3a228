"""The conformance checks that open a fresh episode of every task: schemas, handlers,
prompts, bad input, bounded refusals, closing twice, results unshared with the world."""

from __future__ import annotations

import inspect
import json
from collections.abc import Callable
from typing import Any

from datagauntlet.core.action_log import canonical_json
from datagauntlet.core.call_text import REFUSED_ARGS_CHARS
from datagauntlet.core.check_context import Context, fail
from datagauntlet.core.episode import Episode, Task
from datagauntlet.core.tools import check_tool_schema


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
            fail("; ".join(problems))
        if not ep.tools:
            fail("the episode declares no tools")
        json.dumps(ep.tool_specs)

    _each_fresh(ctx, one)


def check_handlers(ctx: Context) -> None:
    """Every declared tool has a handler that accepts exactly its declared arguments."""

    def one(ep: Episode[Any], _task: Task) -> None:
        legacy = getattr(type(ep), "TOOLS", None)
        if legacy:
            names = [getattr(t, "name", t) for t in legacy]
            fail(f"TOOLS {names} are declarations without handlers: declare them with @tool")
        for tool in ep.tools:
            bound = ep.bound_tool(tool.name)
            if bound is None or not callable(bound.handler):
                fail(f"tool {tool.name} has no handler")
                return
            problem = _signature_problem(bound.handler, tool.parameters)
            if problem:
                fail(f"tool {tool.name}: {problem}")

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
            fail("empty system prompt or prompt")

    _each_fresh(ctx, one)


def check_no_credit_without_submission(ctx: Context) -> None:
    def one(ep: Episode[Any], _task: Task) -> None:
        reward = ep.score().reward
        if reward != 0.0:
            fail(f"an episode with no calls scored {reward}, not 0")

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
                fail(f"bad call {name!r} {args!r} was not answered with an error: {out!r}")
            if ep.fingerprint() != before:
                fail(f"bad call {name!r} {args!r} changed the world")
        if not ep.log.chain_intact():
            fail("action log chain broken after refused calls")
        if any(e.executed for e in ep.log.entries):
            fail("a refused call was logged as executed")

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
                fail(f"a refused call kept {size:,} characters in the log")

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
        fail(f"a closed episode answered a call: {out!r}")
    if len(ep.log) != before:
        fail("a call to a closed episode was logged")
    if ep.score() != score:
        fail("a closed episode's score changed")


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
        fail("editing a result changed what later calls returned")
    if edited_score != canonical_json(reference.score.as_dict()):
        fail("editing a result changed the score")
    after = ctx.play(ctx.env.reference, task, attempt=2)
    if [canonical_json(r) for r in after.recorder.results] != expected:
        fail("editing a result changed what another episode of the task returns")
    specs = ctx.fresh(task)
    try:
        _scramble(specs.tool_specs)
        if any(s.get("__scrambled__") for s in specs.tool_specs):
            fail("tool_specs hands out the episode's own objects")
    finally:
        specs.close()

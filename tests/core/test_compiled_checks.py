"""The compiled argument checks accept exactly what the schema interpreter accepts.

`check_arguments` decides with `Tool.accepts` (compiled once per tool) and builds its message
with the interpreter only on failure; a compiled check that let one value through that the
interpreter refuses would be a skipped check. Both are run on the same values here: values
made from each schema, then broken one field at a time, plus a pool of awkward values.
"""

from __future__ import annotations

import copy
import math
import pickle
from typing import Any

import pytest

import datagauntlet as dg
from datagauntlet.core.seeding import Keyed
from datagauntlet.core.tools import (
    Tool,
    check_arguments,
    check_object,
    check_value,
    compile_check,
    params,
)

AWKWARD: list[Any] = [
    None, True, False, 0, 1, -1, 7, 10**20, 0.0, 2.5, -3.5, math.nan, math.inf, -math.inf,
    "", "a", "x" * 300, [], [1], [1, "a"], [None] * 5, list(range(30)), {}, {"a": 1},
    {"query": "select 1"}, {"cursor": None}, {"records": []}, {"extra": 1, "query": "q"},
]  # fmt: skip

SYNTHETIC: list[dict[str, Any]] = [
    {"type": "integer", "minimum": 0, "maximum": 10},
    {"type": "number", "minimum": -1.5},
    {"type": ["string", "null"], "maxLength": 3},
    {"type": ["integer", "boolean"]},
    {"enum": ["a", 1, None]},
    {"type": "string", "enum": ["x", "y"]},
    {"minimum": 0},  # no type: only numbers are bounded
    {"maxLength": 2},
    {"type": "array", "maxItems": 3, "items": {"type": "integer", "maximum": 5}},
    {"type": "array", "items": {}},
    {"type": "array", "items": {"description": "anything"}},
    {"properties": {"a": {}, "b": {"description": "free"}}, "required": ["b"]},
    params({"n": {"type": "number", "minimum": 0}, "k": {"enum": [1, "1", True]}}, ["k"]),
    {"type": "array", "items": {"type": "array", "items": {"type": ["integer", "null"]}}},
    {"maximum": math.nan},
    {"type": "object", "required": ["a"]},
    {"type": "object", "properties": {"a": {"type": "string"}}, "additionalProperties": True},
    params({"a": {"type": "integer"}, "b": {"type": ["string", "null"]}}, required=["a"]),
    params(
        {
            "rows": {
                "type": "array",
                "maxItems": 4,
                "items": params({"id": {"type": "string", "maxLength": 5}, "n": {}}, ["id"]),
            }
        }
    ),
    # One named type: the compiled check leaves out the type guards its type test implies.
    {"type": ["string"], "maxLength": 2},
    {"type": ["array"], "maxItems": 2, "items": {"type": ["object"], "required": ["a"]}},
    {
        "type": "object",
        "properties": {"a": {"type": "object", "properties": {"b": {"maxLength": 1}}}},
        "required": ["a"],
    },
    {"type": ["object", "null"], "properties": {"a": {"type": "integer"}}, "required": ["a"]},
    # bounds and item rules on a type that is one of several, or on no type at all
    {"type": ["array", "null"], "maxItems": 1, "items": {"type": "string", "maxLength": 1}},
    {"type": ["array", "string"], "maxItems": 2, "maxLength": 2},
    {"maxItems": 1},
    {"items": {"type": "integer"}},
    {"type": ["string", "integer"], "maxLength": 2, "maximum": 3},
    {"type": "array", "items": params({"a": {"type": "array", "maxItems": 1}}, ["a"])},
    {"type": ["object", "null"], "required": []},  # an object rule with nothing to check
    {"type": ("string",)},  # shapes the compiler hands to the interpreter
    {"enum": ("a",)},
    {"type": "object", "properties": {"a": {"type": "integer"}}, "minLength": 3},
    {"maximum": "10"},  # a bound that is not a number: the interpreter's own handling
    {"type": "array", "maxItems": "2"},
]


def _all_tool_schemas() -> list[dict[str, Any]]:
    schemas = []
    for env_id in ("bad-batch-gate", "dataclean", "dirty-integration", "event-recon"):
        env = dg.make(env_id)
        with env.episode(env.tasks("eval", 1)[0]) as ep:
            schemas += [t.parameters for t in ep.tools]
    return schemas


def _instance(schema: Any, keyed: Keyed, label: str, depth: int = 0) -> Any:
    """A value made to fit `schema` (roughly), broken at random places."""
    if keyed.chance(label + "/break", depth, 0.15) or not isinstance(schema, dict):
        return keyed.choice(label + "/awkward", depth, AWKWARD)
    if "enum" in schema:
        return keyed.choice(label + "/enum", depth, list(schema["enum"]))
    types = schema.get("type", "string")
    kind = types if isinstance(types, str) else keyed.choice(label + "/t", depth, list(types))
    if kind == "object" or "properties" in schema:
        props = schema.get("properties", {})
        out = {}
        for name, sub in props.items():
            if keyed.chance(f"{label}/{name}/skip", depth, 0.8):
                out[name] = _instance(sub, keyed, f"{label}/{name}", depth + 1)
        if keyed.chance(label + "/extra", depth, 0.1):
            out["unexpected"] = 1
        return out
    if kind == "array":
        n = keyed.randint(label + "/n", depth, 0, 6)
        return [_instance(schema.get("items"), keyed, f"{label}[{i}]", depth + 1) for i in range(n)]
    if kind == "string":
        return "s" * keyed.randint(label + "/len", depth, 0, 6)
    if kind in ("integer", "number"):
        return keyed.randint(label + "/int", depth, -20, 20) / (2 if kind == "number" else 1)
    return keyed.choice(label + "/awkward", depth, AWKWARD)


def _agree(schema: dict[str, Any], value: Any) -> None:
    try:
        expected = check_value(value, schema, "x") is None
    except Exception as exc:  # a broken schema: the compiled check must fail the same way
        with pytest.raises(type(exc)):
            compile_check(schema)(value)
        return
    assert compile_check(schema)(value) is expected, (schema, value)


@pytest.mark.parametrize("index", range(len(SYNTHETIC)))
def test_compiled_value_checks_match_the_interpreter(index: int) -> None:
    schema = SYNTHETIC[index]
    keyed = Keyed(index)
    values = AWKWARD + [_instance(schema, keyed, "v", 0) for _ in range(1)]
    values += [_instance(schema, Keyed(f"{index}-{i}"), "v") for i in range(200)]
    for value in values:
        _agree(schema, value)


def test_every_declared_tool_accepts_exactly_what_the_interpreter_accepts() -> None:
    seen = {True: 0, False: 0}
    for n, schema in enumerate(_all_tool_schemas()):
        tool = Tool(f"t{n}", "d", schema)
        values = [v for v in AWKWARD if isinstance(v, dict)]
        values += [_instance(schema, Keyed(f"tool-{n}-{i}"), "a") for i in range(300)]
        for value in values:
            if not isinstance(value, dict):
                continue
            expected = check_object(value, schema, "") is None
            assert tool.accepts(value) is expected, (schema, value)
            assert (check_arguments(tool, value) is None) is expected
            seen[expected] += 1
    assert seen[True] > 100 and seen[False] > 100  # both outcomes were exercised


def test_refusal_messages_still_name_the_field() -> None:
    schema = params({"rows": {"type": "array", "items": params({"n": {"type": "integer"}})}})
    tool = Tool("t", "d", schema)
    assert check_arguments(tool, {"rows": [{"n": 1}, {"n": "2"}]}) == (
        "rows[1].n must be integer, got string"
    )
    assert check_arguments(tool, {"rows": [{"n": 1}]}) is None


def test_a_tool_with_its_compiled_check_still_pickles_and_copies() -> None:
    tool = Tool("t", "d", params({"n": {"type": "integer", "maximum": 3}}))
    assert tool.accepts({"n": 2})
    for clone in (pickle.loads(pickle.dumps(tool)), copy.deepcopy(tool), copy.copy(tool)):
        assert clone == tool
        assert clone.accepts({"n": 3}) and not clone.accepts({"n": 4})


# The shapes it knows, the compiler checks without the interpreter (one generated function
# per schema); only the shapes it does not know are handed to the interpreter.
HANDED_OVER = [
    {"type": ("string",)},
    {"enum": ("a",)},
    {"type": []},
    {"type": "date"},
    {"type": ["string", 5]},
    {"maxLength": "3"},
    {"minimum": True},
    {"properties": [("a", {})]},
    {"type": "object", "required": "a"},
    "not a schema",
]


def test_only_shapes_the_compiler_does_not_know_reach_the_interpreter(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from datagauntlet.core import tools

    calls = []

    def interpreter(value: Any, schema: Any, path: str) -> str | None:
        calls.append(schema)
        return None

    monkeypatch.setattr(tools, "check_value", interpreter)
    monkeypatch.setattr(tools, "check_object", interpreter)
    known = [s for s in SYNTHETIC if s not in SYNTHETIC[-5:]] + _all_tool_schemas()
    for schema in known:
        for value in AWKWARD:
            tools.compile_check(schema)(value)
        tools.compile_check(schema, top=True)({})
    assert calls == []
    for schema in HANDED_OVER:
        calls.clear()
        assert tools.compile_check(schema)(1) is True  # what the interpreter said
        assert calls == [schema], schema


def test_tools_with_the_same_schema_share_one_compiled_check() -> None:
    """A tool whose schema is a function of its owner is a new Tool every episode: its check
    is compiled once per schema, not once per episode, and a different schema gets its own."""
    env = dg.make("bad-batch-gate")
    tasks = env.tasks("eval", 2)
    checks = []
    for task in tasks:
        ep = env.episode(task)
        tool = ep.bound_tool("run_sql").tool
        checks.append(tool.accepts)
        ep.close()
    assert checks[0] is checks[1]
    schema = params({"query": {"type": "string", "maxLength": 5, "description": "q"}})
    other = params({"query": {"type": "string", "maxLength": 6, "description": "q"}})
    short, longer = Tool("t", "d", schema).accepts, Tool("t", "d", other).accepts
    assert short is not longer
    assert not short({"query": "abcdef"}) and longer({"query": "abcdef"})
    assert Tool("u", "e", copy.deepcopy(schema)).accepts is short  # equal text, one check


def test_a_schema_that_is_not_plain_json_is_compiled_on_its_own() -> None:
    # A set where JSON has a list: no canonical text to share a check under.
    odd = {"type": "object", "properties": {"k": {"enum": {"a", "b"}}}, "required": ["k"]}
    first, second = Tool("t", "d", odd).accepts, Tool("t", "d", copy.deepcopy(odd)).accepts
    assert first is not second
    assert first({"k": "a"}) and second({"k": "a"})
    assert not first({"k": "c"}) and not second({"k": "c"})


def test_a_top_level_check_refuses_what_is_not_an_object() -> None:
    for schema in [*_all_tool_schemas(), params({"a": {}}), {"properties": {}}]:
        compiled = compile_check(schema, top=True)
        for value in AWKWARD:  # arguments are an object: anything else is never accepted
            expected = isinstance(value, dict) and check_object(value, schema, "") is None
            assert compiled(value) is expected, (schema, value)


def test_a_top_level_shape_the_compiler_hands_over_is_checked_as_an_object() -> None:
    shapes = [s for s in HANDED_OVER if isinstance(s, dict)]
    shapes += [{"type": ("object",), "additionalProperties": False}]
    for schema in shapes:
        compiled = compile_check(schema, top=True)
        for value in [v for v in AWKWARD if isinstance(v, dict)]:
            try:
                expected = check_object(value, schema, "") is None
            except Exception as exc:  # the same broken schema fails the same way
                with pytest.raises(type(exc)):
                    compiled(value)
                continue
            assert compiled(value) is expected, (schema, value)


def test_params_is_a_closed_object_schema_and_spec_is_the_function_calling_form() -> None:
    props = {"q": {"type": "string"}, "n": {"type": "integer"}}
    assert params(props) == {
        "type": "object", "properties": props, "required": ["q", "n"],
        "additionalProperties": False,
    }  # fmt: skip
    assert params(props, required=["n"])["required"] == ["n"]
    assert params(props, required=[])["required"] == []
    tool = Tool("find", "Find things.", params(props))
    assert tool.spec() == {
        "type": "function",
        "function": {"name": "find", "description": "Find things.", "parameters": params(props)},
    }

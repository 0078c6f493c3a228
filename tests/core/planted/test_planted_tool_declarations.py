"""Declaring tools: the defaults of `@tool`, the schema checks rule by rule, and a name
declared twice (rules that survived planted bugs and mutants, docs/mutation/)."""

from __future__ import annotations

from typing import Any

import pytest
from planted_envs import GuessConfig, TickEnv, TickEpisode

from datagauntlet.core.episode import Task
from datagauntlet.core.toolset import Toolset, params, tool


def test_a_tool_declared_with_defaults_takes_no_arguments_and_does_not_mutate() -> None:
    class Box(Toolset):
        @tool("Look in the box.")
        def look(self) -> dict[str, Any]:
            return {"seen": True}

        @tool("Put a thing in.", params({"thing": {"type": "string"}}), mutates=True)
        def put(self, thing: str) -> dict[str, Any]:
            return {"put": thing}

        @tool("Only sometimes.", when=lambda self: False)
        def hidden(self) -> dict[str, Any]:
            return {}

    box = Box()
    tools = {b.tool.name: b.tool for b in box.tools()}
    assert set(tools) == {"look", "put"}  # `when` leaves hidden out
    look, put = tools["look"], tools["put"]
    assert look.description == "Look in the box." and not look.mutates
    assert look.parameters == params({})
    assert look.spec()["function"]["parameters"]["properties"] == {}
    assert put.mutates and put.parameters["properties"] == {"thing": {"type": "string"}}
    assert Box().state_digest() == ""  # a toolset without state has nothing to digest


def _schema(**properties: dict[str, Any]) -> dict[str, Any]:
    return {"type": "object", "properties": properties}


@pytest.mark.parametrize(
    ("name", "description", "parameters", "problems"),
    [
        ("look_up", "Look.", _schema(), []),
        ("x" * 64, "Look.", _schema(), []),
        ("x" * 65, "Look.", _schema(), [f"tool name {'x' * 65!r} is not a valid function name"]),
        ("look-up", "Look.", _schema(), ["tool name 'look-up' is not a valid function name"]),
        ("_", "Look.", _schema(), ["tool name '_' is not a valid function name"]),
        ("look", "  ", _schema(), ["tool look has no description"]),
        (
            "look",
            "Look.",
            {"type": "array", "properties": {}},
            ["tool look: parameters must be an object schema with properties"],
        ),
        (
            "look",
            "Look.",
            {"type": "object"},
            ["tool look: parameters must be an object schema with properties"],
        ),
        (
            "look",
            "Look.",
            {**_schema(q={"type": "string", "description": "q"}), "required": ["q", "r"]},
            ["tool look: required 'r' is not a property"],
        ),
        (
            "look",
            "Look.",
            _schema(q={"description": "q"}, r={"type": "string"}),
            ["tool look: property 'q' has no type", "tool look: property 'r' has no description"],
        ),
    ],
)
def test_a_tool_declaration_is_checked_rule_by_rule(
    name: str, description: str, parameters: dict[str, Any], problems: list[str]
) -> None:
    from datagauntlet.core.tools import Tool, check_tool_schema

    assert check_tool_schema(Tool(name, description, parameters)) == problems


def test_a_tool_declared_twice_is_refused_naming_who_declared_it_again() -> None:
    class Twice(Toolset):
        @tool("Tick once.", params({"n": {"type": "integer"}}), mutates=False)
        def tick(self, n: int) -> dict[str, Any]:
            return {}

    class TwiceEpisode(TickEpisode):
        def toolsets(self) -> list[Toolset]:
            return [Twice()]

    class TwiceEnv(TickEnv):
        def episode(self, task: Task) -> TwiceEpisode:  # type: ignore[override]
            return TwiceEpisode(self, task)

    env = TwiceEnv(GuessConfig())
    with pytest.raises(TypeError) as caught:
        env.episode(env.tasks("eval", 1)[0])
    assert str(caught.value) == "tool 'tick' is declared twice (again by TwiceEpisode)"

    class TwoToolsets(TwiceEpisode):
        def toolsets(self) -> list[Toolset]:
            return [Twice(), Twice()]

    class TwoToolsetsEnv(TickEnv):
        def episode(self, task: Task) -> TwoToolsets:  # type: ignore[override]
            return TwoToolsets(self, task)

    env = TwoToolsetsEnv(GuessConfig())
    with pytest.raises(TypeError) as caught:
        env.episode(env.tasks("eval", 1)[0])
    assert str(caught.value) == "tool 'tick' is declared twice (again by Twice)"

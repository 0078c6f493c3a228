"""Config validation and tool-argument checks answer nonsense with clear errors."""

import pytest

import datagauntlet as dg
from datagauntlet.core.tools import Tool, check_arguments, params

TOOL = Tool(
    "t",
    "a tool",
    params(
        {
            "n": {"type": "integer", "description": "n", "minimum": 0},
            "s": {"type": ["string", "null"], "description": "s", "maxLength": 3},
            "xs": {
                "type": "array",
                "description": "xs",
                "items": {"type": "number"},
                "maxItems": 2,
            },
        },
        required=["n"],
    ),
)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ({}, "missing required argument 'n'"),
        ({"n": "1"}, "n must be integer, got string"),
        ({"n": True}, "n must be integer, got boolean"),
        ({"n": 1.0}, "n must be integer, got number"),
        ({"n": -1}, "n must be >= 0"),
        ({"n": 1, "s": "long"}, "longer than 3"),
        ({"n": 1, "xs": [1, "a"]}, "xs[1] must be number"),
        ({"n": 1, "xs": [1, 2, 3]}, "more than 2 items"),
        ({"n": 1, "xs": [float("nan")]}, "xs[0] must be number"),
        ({"n": 1, "zz": 1}, "unexpected argument 'zz'"),
        ([1], "must be a JSON object"),
    ],
)
def test_bad_arguments_are_named(args: object, message: str) -> None:
    problem = check_arguments(TOOL, args)
    assert problem is not None and message in problem


def test_good_arguments_pass() -> None:
    assert check_arguments(TOOL, {"n": 0, "s": None, "xs": [1, 2.5]}) is None


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"profile": "nightmare"}, "must be one of clean, realistic, hostile"),
        ({"num_records": 0}, "num_records must be in"),
        ({"num_records": "40"}, "must be int"),
        ({"page_size": True}, "must be int"),
        ({"colour": "red"}, "unknown config field 'colour'"),
    ],
)
def test_bad_config_is_a_clear_value_error(kwargs: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        dg.make("dirty-integration", **kwargs)


def test_unknown_env_is_a_clear_value_error() -> None:
    with pytest.raises(ValueError, match="unknown environment 'nope'; registered: "):
        dg.make("nope")


def test_config_from_command_line_text() -> None:
    cls = dg.make("dirty-integration").config_cls
    cfg = cls.from_strings(
        {"profile": "hostile", "num_records": "200", "http_timeout_seconds": "0.5"}
    )
    assert (cfg.profile, cfg.num_records, cfg.http_timeout_seconds) == ("hostile", 200, 0.5)
    with pytest.raises(ValueError, match="must be int"):
        cls.from_strings({"num_records": "many"})


# Refusal wording, type by type and path by path (the full mutation run found it untested).
_NESTED = Tool(
    "t",
    "",
    {
        "type": "object",
        "properties": {
            "a": {"type": ["integer", "null"]},
            "mode": {"enum": ["x", "y"]},
            "inner": {
                "type": "object",
                "properties": {"k": {"type": "string"}},
                "required": ["k"],
                "additionalProperties": False,
            },
        },
        "required": ["a"],
        "additionalProperties": False,
    },
)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ([1, 2], "arguments to t must be a JSON object, got array"),
        (None, "arguments to t must be a JSON object, got null"),
        ("x", "arguments to t must be a JSON object, got string"),
        ({}, "missing required argument 'a'"),
        ({"a": "s"}, "a must be integer or null, got string"),
        ({"a": 1.5}, "a must be integer or null, got number"),
        ({"a": True}, "a must be integer or null, got boolean"),
        ({"a": {}}, "a must be integer or null, got object"),
        ({"a": [3]}, "a must be integer or null, got array"),
        ({"a": (3,)}, "a must be integer or null, got tuple"),
        ({"a": 1, "mode": "z"}, "mode must be one of 'x', 'y'"),
        ({"a": 1, "inner": {}}, "missing required argument 'inner.k'"),
        ({"a": 1, "inner": {"k": 5}}, "inner.k must be string, got integer"),
        (
            {"a": 1, "inner": {"k": "v", "zz": 1}},
            "unexpected argument 'inner.zz'; allowed: ['k']",
        ),
        ({"a": None, "b": 2}, "unexpected argument 'b'; allowed: ['a', 'inner', 'mode']"),
    ],
)
def test_a_refusal_names_the_argument_its_type_and_what_was_sent(
    args: object, message: str
) -> None:
    assert check_arguments(_NESTED, args) == message
    assert check_arguments(_NESTED, {"a": None, "mode": "y", "inner": {"k": "v"}}) is None

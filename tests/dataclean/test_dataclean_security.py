"""A battery of hostile programs: each is rejected with a clear error, fast, and nothing crashes.

Each payload goes through the validator (as parsed JSON or as JSON text) and through the
episode's submit tool, where it must score 0 and leave a readable reason.
"""

from __future__ import annotations

import json
import math
import time
from typing import Any

import pytest

import datagauntlet as dg
from datagauntlet.envs.dataclean.tool.program import (
    ProgramError,
    Schema,
    parse_program_text,
    validate_program,
)

MB = 1_000_000
BOUND_SECONDS = 0.1  # generous: a rejection takes about a millisecond
# Through the tool door the arguments are also logged and hashed: cost grows with their size
# (about 0.08 s for a 200,000-entry map, a 4 MB payload), so this bound is looser, with room
# for a loaded CI machine: it guards against blow-ups, not small slowdowns.
DOOR_BOUND_SECONDS = 2.0
# Both bounds are on this process's CPU time: a blow-up is work done, and wall time on a shared
# machine (a niced suite at load 9 took 7-8 s here) measures the neighbours instead.
cpu_seconds = time.process_time


def nested(depth: int) -> Any:
    value: Any = "name"
    for _ in range(depth):
        value = [value]
    return value


def strip(*columns: Any) -> list[dict[str, Any]]:
    return [{"op": "strip", "columns": list(columns)}]


def remap(mapping: Any, column: Any = "segment") -> list[dict[str, Any]]:
    return [{"op": "map", "column": column, "mapping": mapping}]


# (label, payload, expected fragment of the error). A str payload is JSON text.
BATTERY: list[tuple[str, Any, str]] = [
    ("deeply nested JSON text", "[" * 200_000 + "]" * 200_000, "nested too deeply"),
    ("deeply nested columns", [{"op": "strip", "columns": nested(500)}], "must be a string"),
    ("megabyte column name", strip("n" * MB), "characters long; at most 64"),
    ("megabyte op name", [{"op": "x" * MB, "columns": ["name"]}], "characters long"),
    ("megabyte map key", remap({"k" * MB: "vip"}), "characters long; at most 200"),
    ("megabyte map value", remap({"Std": "v" * MB}), "characters long; at most 200"),
    ("huge map", remap({f"alias{i}": "vip" for i in range(200_000)}), "got 200000"),
    ("huge column list", strip(*(["name"] * 200_000)), "got 200000"),
    ("huge program", strip("name") * 200_000, "at most 40"),
    (
        "huge token list",
        [{"op": "replace_missing", "columns": ["email"], "tokens": ["x"] * 100_000}],
        "got 100000",
    ),
    ("regex map key", remap({"^V.*P$": "vip"}), "looks like a pattern"),
    (
        "regex token",
        [{"op": "replace_missing", "columns": ["email"], "tokens": ["N/A|null"]}],
        "looks like a pattern",
    ),
    ("regex column name", strip("na.*"), "unknown column 'na.*'"),
    ("fullwidth op name", [{"op": "ｓｔｒｉｐ", "columns": ["name"]}], "unknown operation"),
    ("homoglyph column", strip("nаme"), r"unknown column 'n\u0430me'"),
    ("zero-width column", strip("na\u200bme"), "invisible or control character U+200B"),
    ("bidi override value", remap({"Std": "\u202evip"}), "character U+202E"),
    (
        "NUL in token",
        '[{"op":"replace_missing","columns":["email"],"tokens":["N/A\\u0000"]}]',
        "U+0000",
    ),
    ("lone surrogate", '[{"op":"strip","columns":["\\ud800"]}]', "U+D800"),
    ("op is a number", [{"op": 7, "columns": ["name"]}], '"op" must be a string, got number'),
    ("op is null", [{"op": None}], '"op" must be a string, got null'),
    ("operation is an array", [["strip", "name"]], "must be an object"),
    ("columns is a string", [{"op": "strip", "columns": "name"}], "columns must be an array"),
    ("column is a boolean", strip(True), "columns[0] must be a string, got boolean"),
    ("column is an object", strip({"$ref": "name"}), "columns[0] must be a string, got object"),
    ("mapping is an array", remap([["Std", "standard"]]), "mapping must be an object"),
    ("mapping value is a number", remap({"Std": 1}), "must be a string, got number"),
    ("map column is a list", remap({"Std": "standard"}, ["segment"]), "column must be a string"),
    (
        "tokens is an object",
        [{"op": "replace_missing", "columns": ["email"], "tokens": {}}],
        "tokens must be an array",
    ),
    ("keys is a string", [{"op": "dedupe", "keys": "record_id"}], "keys must be an array"),
    ("protected notes", [{"op": "lower", "columns": ["notes"]}], "'notes' is protected"),
    ("protected record_id", remap({"a": "b"}, "record_id"), "'record_id' is protected"),
    ("protected customer_id", strip("customer_id"), "'customer_id' is protected"),
    (
        "dedupe on a free-text column",
        [{"op": "dedupe", "keys": ["name"]}],
        "not a supported dedupe key",
    ),
    (
        "duplicate keys",
        '[{"op":"strip","columns":["name"],"columns":["notes"]}]',
        "duplicate key 'columns'",
    ),
    ("NaN literal", '[{"op":"strip","columns":[NaN]}]', "NaN is not a JSON number"),
    ("Infinity literal", '[{"op":"map","column":"segment","mapping":{"a":Infinity}}]', "Infinity"),
    ("NaN value", remap({"Std": math.nan}), "must be a string, got number"),
    ("infinite value", strip(math.inf), "columns[0] must be a string, got number"),
    (
        "python code",
        [{"op": "python", "code": "__import__('os').system('id')"}],
        "unknown operation 'python'",
    ),
    ("sql", [{"op": "sql", "query": "DROP TABLE t"}], "unknown operation 'sql'"),
    ("dunder op", [{"op": "__class__", "columns": ["name"]}], "unknown operation '__class__'"),
    (
        "code smuggled in a field",
        [{"op": "strip", "columns": ["name"], "lambda": "x: x"}],
        "unexpected field 'lambda'",
    ),
    ("empty operation", [{}], 'has no "op" field'),
]

SCHEMA = Schema(
    ("record_id", "customer_id", "name", "email", "segment", "notes"),
    frozenset({"record_id", "customer_id", "notes"}),
    ("record_id", "customer_id", "email"),
)


def test_the_battery_is_large_enough() -> None:
    assert len(BATTERY) >= 20


def _reject(payload: Any) -> str:
    with pytest.raises(ProgramError) as info:
        raw = parse_program_text(payload) if isinstance(payload, str) else payload
        validate_program(raw, SCHEMA)
    return str(info.value)


@pytest.mark.parametrize(("label", "payload", "fragment"), BATTERY, ids=[b[0] for b in BATTERY])
def test_hostile_program_is_rejected_quickly_with_a_clear_error(
    label: str, payload: Any, fragment: str
) -> None:
    start = cpu_seconds()
    message = _reject(payload)
    elapsed = cpu_seconds() - start
    assert fragment in message, message
    assert len(message) < 600, "errors stay readable: no echo of megabyte inputs"
    assert elapsed < BOUND_SECONDS, f"{label}: {elapsed:.3f}s"


@pytest.fixture(scope="module")
def crm() -> dg.Environment:
    return dg.make("dataclean", family="crm")


@pytest.mark.parametrize(("label", "payload", "fragment"), BATTERY, ids=[b[0] for b in BATTERY])
def test_hostile_program_submitted_to_an_episode_scores_zero(
    crm: dg.Environment, label: str, payload: Any, fragment: str
) -> None:
    ep = crm.episode(crm.tasks("eval", 1)[0])
    args: Any = (
        '{"operations": ' + payload + "}" if isinstance(payload, str) else {"operations": payload}
    )
    start = cpu_seconds()
    out = ep.call("submit_program", args)
    assert cpu_seconds() - start < DOOR_BOUND_SECONDS
    assert "error" in out
    json.dumps(out)  # the answer is plain JSON
    assert ep.score().reward == 0.0
    assert ep.log.chain_intact()
    if ep.done:  # the program was judged: the reason is kept for the record
        assert fragment in ep.score().metrics["invalid_reason"]
    else:  # refused at the door (not JSON): nothing changed, a good program is still accepted
        assert fragment.split()[0] in out["error"] or "JSON" in out["error"]
        assert "error" not in ep.call("submit_program", {"operations": []})

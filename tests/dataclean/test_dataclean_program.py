"""Program validation: deny by default, and every error names the operation and the reason."""

from __future__ import annotations

from typing import Any

import pytest

from datagauntlet.envs.dataclean.tool.program import (
    MAX_MAP_ENTRIES,
    MAX_OPERATIONS,
    Operation,
    ProgramError,
    Schema,
    parse_program_text,
    validate_program,
)

SCHEMA = Schema(
    ("record_id", "customer_id", "name", "email", "segment", "notes"),
    frozenset({"record_id", "customer_id", "notes"}),
    ("record_id", "customer_id", "email"),
)


def error(program: Any) -> str:
    with pytest.raises(ProgramError) as info:
        validate_program(program, SCHEMA)
    return str(info.value)


def test_a_valid_program_becomes_operations() -> None:
    program = [
        {"op": "strip", "columns": ["name", "email"]},
        {"op": "replace_missing", "columns": ["email"], "tokens": ["N/A", ""]},
        {"op": "map", "column": "segment", "mapping": {"Std": "standard", "gone": None}},
        {"op": "dedupe", "keys": ["record_id"]},
    ]
    ops = validate_program(program, SCHEMA)
    assert [o.op for o in ops] == ["strip", "replace_missing", "map", "dedupe"]
    assert ops[1].tokens == frozenset({"N/A", ""})
    assert [o.as_dict() for o in ops] == [
        program[0],
        {"op": "replace_missing", "columns": ["email"], "tokens": ["", "N/A"]},
        program[2],
        program[3],
    ]
    assert validate_program([], SCHEMA) == []


@pytest.mark.parametrize(
    ("program", "message"),
    [
        ({"op": "strip"}, "the program must be an array of operations, got object"),
        ([{"op": "strip", "columns": ["name"]}] * (MAX_OPERATIONS + 1), "at most 40"),
        (["strip"], "operations[0]: must be an object"),
        ([{"columns": ["name"]}], 'operations[0]: has no "op" field'),
        ([{"op": "eval", "columns": ["name"]}], "operations[0] (eval): unknown operation 'eval'"),
        ([{"op": 3}], 'operations[0]: "op" must be a string, got number'),
        (
            [{"op": "strip", "columns": ["name"], "where": "x"}],
            "operations[0] (strip): unexpected field 'where'; strip takes op, columns",
        ),
        ([{"op": "map", "column": "segment"}], "missing field 'mapping'"),
        ([{"op": "strip", "columns": ["nme"]}], "unknown column 'nme'; columns: record_id"),
        ([{"op": "lower", "columns": ["notes"]}], "column 'notes' is protected"),
        ([{"op": "upper", "columns": ["record_id"]}], "column 'record_id' is protected"),
        (
            [{"op": "map", "column": "customer_id", "mapping": {"a": "b"}}],
            "column 'customer_id' is protected",
        ),
        ([{"op": "strip", "columns": []}], "columns must list 1 to 64 names, got 0"),
        ([{"op": "strip", "columns": "name"}], "columns must be an array of column names"),
        ([{"op": "strip", "columns": ["name", "name"]}], "columns lists a column twice"),
        ([{"op": "strip", "columns": [7]}], "columns[0] must be a string, got number"),
        ([{"op": "map", "column": "segment", "mapping": {}}], "mapping must have 1 to 500"),
        ([{"op": "map", "column": "segment", "mapping": ["a"]}], "mapping must be an object"),
        (
            [{"op": "map", "column": "segment", "mapping": {"a": 1}}],
            "mapping['a'] must be a string, got number (or null for missing)",
        ),
        (
            [{"op": "map", "column": "segment", "mapping": {"^V.*": "vip"}}],
            "looks like a pattern",
        ),
        (
            [{"op": "replace_missing", "columns": ["email"], "tokens": "N/A"}],
            "tokens must be an array of strings",
        ),
        (
            [{"op": "replace_missing", "columns": ["email"], "tokens": [None]}],
            "tokens[0] must be a string, got null",
        ),
        ([{"op": "dedupe", "keys": ["name"]}], "'name' is not a supported dedupe key"),
        ([{"op": "dedupe", "keys": []}], "keys must list 1 to 4 columns, got 0"),
        ([{"op": "dedupe", "keys": ["email", "email"]}], "keys lists a column twice"),
    ],
)
def test_invalid_programs_name_the_operation_and_the_reason(program: Any, message: str) -> None:
    assert message in error(program)


def test_the_error_names_the_failing_operation_index() -> None:
    program = [{"op": "strip", "columns": ["name"]}] * 3 + [{"op": "lower", "columns": ["notes"]}]
    assert error(program).startswith("operations[3] (lower): ")


def test_dedupe_may_key_on_a_protected_column_but_nothing_may_change_one() -> None:
    assert validate_program([{"op": "dedupe", "keys": ["record_id", "customer_id"]}], SCHEMA)
    for op in ("strip", "lower", "upper", "phone_us", "date_us", "decimal2", "integer"):
        assert "protected" in error([{"op": op, "columns": ["customer_id"]}])


def test_a_map_at_the_size_bound_is_accepted_and_one_more_entry_is_not() -> None:
    mapping = {f"k{i}": "v" for i in range(MAX_MAP_ENTRIES)}
    assert validate_program([{"op": "map", "column": "segment", "mapping": mapping}], SCHEMA)
    mapping["one-more"] = "v"
    assert "mapping must have 1 to 500 entries, got 501" in error(
        [{"op": "map", "column": "segment", "mapping": mapping}]
    )


def test_parse_program_text_accepts_an_array_or_an_operations_object() -> None:
    ops = '[{"op": "strip", "columns": ["name"]}]'
    assert parse_program_text(ops) == parse_program_text('{"operations": ' + ops + "}")
    assert isinstance(validate_program(parse_program_text(ops), SCHEMA)[0], Operation)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('{"operations": [], "run": "rm -rf /"}', "unexpected 'run'"),
        ("{}", 'exactly one field, "operations"'),
        ('[{"op": "strip", "op": "python", "columns": ["name"]}]', "duplicate key 'op'"),
        ('[{"op": "map", "column": "segment", "mapping": {"a": NaN}}]', "NaN is not a JSON"),
        ("[Infinity]", "Infinity is not a JSON number"),
        ("[" * 100_000 + "]" * 100_000, "nested too deeply"),
        ("[{'op': 'strip'}]", "not valid JSON"),
        (" " * 1_000_001, "at most 1000000"),
    ],
)
def test_parse_program_text_is_strict(text: str, message: str) -> None:
    with pytest.raises(ProgramError) as info:
        parse_program_text(text)
    assert message in str(info.value)

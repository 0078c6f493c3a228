"""The operations: each repairs what it recognises, leaves everything else, in program order."""

from __future__ import annotations

import pytest

from datagauntlet.envs.dataclean.tool.engine import (
    Table,
    date_eu,
    date_us,
    decimal2,
    integer,
    phone_us,
    run_program,
)
from datagauntlet.envs.dataclean.tool.program import Operation


def table(**columns: list[str | None]) -> Table:
    return Table(tuple(columns), {k: list(v) for k, v in columns.items()})


def run(t: Table, *ops: Operation) -> Table:
    return run_program(t, list(ops))[0]


def test_strip_removes_unicode_whitespace_but_not_inner_spaces() -> None:
    t = table(a=[" Zoë  Müller\t", "\u00a0José\u3000", "x", None])
    assert run(t, Operation("strip", ("a",))).data["a"] == ["Zoë  Müller", "José", "x", None]


def test_lower_and_upper_change_case_and_skip_missing() -> None:
    t = table(a=["ÄBC@X.COM", None], b=["sku-3fa9c1", None])
    out = run(t, Operation("lower", ("a",)), Operation("upper", ("b",)))
    assert out.data == {"a": ["äbc@x.com", None], "b": ["SKU-3FA9C1", None]}


def test_map_matches_whole_values_exactly_and_can_set_missing() -> None:
    t = table(a=["Std", "Std ", "std", "XStd", "gone", None])
    out = run(t, Operation("map", ("a",), {"Std": "standard", "gone": None}))
    assert out.data["a"] == ["standard", "Std ", "std", "XStd", None, None]


def test_replace_missing_is_exact_and_keeps_zero() -> None:
    t = table(a=["N/A", "n/a ", "", "0", "-", "-5", None])
    out = run(t, Operation("replace_missing", ("a",), tokens=frozenset({"N/A", "", "-"})))
    assert out.data["a"] == [None, "n/a ", None, "0", None, "-5", None]


@pytest.mark.parametrize(
    ("raw", "clean"),
    [
        ("(415) 555-0132", "415-555-0132"),
        ("415.555.0132", "415-555-0132"),
        ("+1 415 555 0132", "415-555-0132"),
        ("4155550132", "415-555-0132"),
        ("1-415-555-0132", "415-555-0132"),
        ("415-555-0132", "415-555-0132"),
        ("555-0132", "555-0132"),  # 7 digits: not a full number, left alone
        ("2-415-555-0132", "2-415-555-0132"),  # 11 digits not starting with 1
        ("call 4155550132", "call 4155550132"),  # words: not a bare number
        ("N/A", "N/A"),
    ],
)
def test_phone_us(raw: str, clean: str) -> None:
    assert phone_us(raw) == clean


@pytest.mark.parametrize(
    ("raw", "us", "eu"),
    [
        ("03/07/2024", "2024-03-07", "2024-07-03"),
        ("3/7/2024", "2024-03-07", "2024-07-03"),
        ("03-07-2024", "2024-03-07", "2024-07-03"),
        ("3.7.2024", "2024-03-07", "2024-07-03"),
        ("25/03/2024", "25/03/2024", "2024-03-25"),  # no month 25: left for a human
        ("12/31/2024", "2024-12-31", "12/31/2024"),
        ("02/30/2024", "02/30/2024", "02/30/2024"),  # not a real date either way
        ("2024-03-07", "2024-03-07", "2024-03-07"),  # already ISO
        ("03/07/24", "03/07/24", "03/07/24"),  # two-digit years are ambiguous: untouched
        ("soon", "soon", "soon"),
    ],
)
def test_dates(raw: str, us: str, eu: str) -> None:
    assert (date_us(raw), date_eu(raw)) == (us, eu)


@pytest.mark.parametrize(
    ("raw", "clean"),
    [
        ("$1,234.50", "1234.50"),
        ("1234.5", "1234.50"),
        ("1,234.5", "1234.50"),
        ("USD 1234.50", "1234.50"),
        ("1234.50 USD", "1234.50"),
        ("-$45.00", "-45.00"),
        ("($45.00)", "-45.00"),
        ("-45", "-45.00"),
        ("0", "0.00"),
        ("0.00", "0.00"),  # a real zero survives
        ("-45.00", "-45.00"),  # a real negative survives
        ("-0.00", "0.00"),
        ("0.005", "0.01"),  # half up
        ("12,34", "12,34"),  # not a thousands grouping: left alone
        ("1e5", "1e5"),
        ("N/A", "N/A"),
        ("--5", "--5"),
        ("9" * 40, "9" * 40),  # beyond decimal precision: left alone, no crash
    ],
)
def test_decimal2(raw: str, clean: str) -> None:
    assert decimal2(raw) == clean


@pytest.mark.parametrize(
    ("raw", "clean"),
    [
        ("12.0", "12"),
        ("12.00", "12"),
        ("+12", "12"),
        ("1,200", "1200"),
        (" 7 ", "7"),
        ("-3.0", "-3"),
        ("0", "0"),
        ("-0", "0"),
        ("12.5", "12.5"),  # a real fraction is not a count: left alone
        ("$12", "$12"),  # money is not a count
        ("abc", "abc"),
    ],
)
def test_integer(raw: str, clean: str) -> None:
    assert integer(raw) == clean


def test_dedupe_keeps_first_occurrence_and_rows_without_key() -> None:
    t = table(k=["a", "b", "a", None, None, "b"], v=["1", "2", "3", "4", "5", "6"])
    out, reports = run_program(t, [Operation("dedupe", keys=("k",))])
    assert out.data == {"k": ["a", "b", None, None], "v": ["1", "2", "4", "5"]}
    assert reports[0].rows_removed == 2


def test_dedupe_on_two_keys() -> None:
    t = table(k=["a", "a", "a"], j=["x", "y", "x"])
    out = run(t, Operation("dedupe", keys=("k", "j")))
    assert out.data == {"k": ["a", "a"], "j": ["x", "y"]}


def test_operations_apply_in_order() -> None:
    t = table(a=[" VIP "])
    mapping = Operation("map", ("a",), {"VIP": "vip-code"})
    lower, strip = Operation("lower", ("a",)), Operation("strip", ("a",))
    assert run(t, strip, mapping, lower).data["a"] == ["vip-code"]
    assert run(t, strip, lower, mapping).data["a"] == ["vip"]  # the key no longer matches
    assert run(t, mapping, strip).data["a"] == ["VIP"]  # the padded value never matched


def test_reports_count_changed_cells_per_operation() -> None:
    t = table(a=[" x", "y", " z "], b=["A", "b", None])
    _, reports = run_program(
        t, [Operation("strip", ("a", "b")), Operation("lower", ("b",)), Operation("upper", ("a",))]
    )
    assert [r.cells_changed for r in reports] == [2, 1, 3]
    assert reports[0].as_dict() == {"index": 0, "op": "strip", "cells_changed": 2}


def test_input_table_is_not_modified() -> None:
    t = table(a=[" x "], k=["1"])
    run(t, Operation("strip", ("a",)), Operation("dedupe", keys=("k",)))
    assert t.data == {"a": [" x "], "k": ["1"]}


def test_every_cell_operation_passes_missing_through() -> None:
    t = table(a=[None, "x"])
    for op in ("strip", "lower", "upper", "phone_us", "date_us", "date_eu", "decimal2", "integer"):
        assert run(t, Operation(op, ("a",))).data["a"][0] is None


def test_hostile_cells_cost_linear_time() -> None:
    """Cells built to make a backtracking pattern explode are answered at once, unchanged."""
    import time

    pads = [" " * 20_000, " " * 30, "\t " * 15]
    hostile = [f"({p}-{p}$" + p + "x" for p in pads]
    hostile += [f"$ {p}-{p}1{p}x" for p in pads] + ["1,000" * 5_000 + "x", "1" * 20_000 + "."]
    for cell in hostile:
        for fn in (decimal2, integer, phone_us, date_us, date_eu):
            start = time.process_time()  # CPU time: wall time on a busy machine is the neighbours'
            assert fn(cell) == cell
            assert time.process_time() - start < 0.05, (fn.__name__, cell[:20])


# Found by the full mutation run (docs/mutation/survivors.md).
def test_every_cell_operation_runs_on_a_column_with_no_missing_value() -> None:
    t = table(a=["12", "12", "3"])
    for op in ("phone_us", "date_us", "date_eu", "decimal2", "integer"):
        out = run(t, Operation(op, ("a",))).data["a"]
        assert len(out) == 3 and out[0] == out[1], op
    assert run(t, Operation("integer", ("a",))).data["a"] == ["12", "12", "3"]
    assert run(t, Operation("decimal2", ("a",))).data["a"] == ["12.00", "12.00", "3.00"]


def test_a_table_from_rows_or_records_has_its_columns_in_order_and_its_length() -> None:
    rows = Table.from_rows(["b", "a"], [["1", "x"], ["2", None]])
    assert rows.columns == ("b", "a") and rows.data == {"b": ["1", "2"], "a": ["x", None]}
    assert len(rows) == 2 and rows.rows() == [["1", "x"], ["2", None]]
    records = Table.from_records(["b", "a"], [{"a": "x", "b": "1"}, {"b": "2"}])
    assert records.columns == ("b", "a") and records.data == rows.data
    assert records.records() == [{"b": "1", "a": "x"}, {"b": "2", "a": None}]
    assert len(Table.from_records(iter(["k"]), [])) == 0
    assert len(Table((), {})) == 0  # no column: no rows

"""Rules that survived planted bugs until these tests existed (issue: tests that catch bugs)."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from datagauntlet.envs.dataclean.grading.grader import grade
from datagauntlet.envs.dataclean.tool.engine import (
    MAX_CELL,
    MAX_DIGITS,
    Table,
    date_eu,
    date_us,
    decimal2,
    integer,
    phone_us,
    run_program,
)
from datagauntlet.envs.dataclean.tool.program import Operation


@pytest.mark.parametrize(
    ("convert", "impossible", "leap"),
    [
        (date_us, "02/29/2023", ("02/29/2024", "2024-02-29")),
        (date_eu, "29/02/1900", ("29/02/2000", "2000-02-29")),
        (date_us, "02/29/2100", ("02/29/2400", "2400-02-29")),
        (date_eu, "31/04/2024", ("30/04/2024", "2024-04-30")),
    ],
)
def test_impossible_dates_are_left_unchanged(convert, impossible: str, leap) -> None:
    assert convert(impossible) == impossible
    assert convert(leap[0]) == leap[1]


def test_a_table_whose_every_cell_arrived_wrong_and_is_repaired_keeps_preservation() -> None:
    """No cell arrived right, so nothing could be damaged: preservation is 1.0, not 0/0 -> 0."""
    columns = ("record_id", "a")
    truth = Table.from_rows(columns, [["r1", "x"], ["r2", "y"]])
    before = Table.from_rows(columns, [["r1", " x"], ["r2", "Y "]])
    s = grade(truth, before, truth.copy(), "record_id", ("a",), 1)
    values = {k: c["value"] for k, c in s.components.items()}
    assert values == {"repair_recall": 1.0, "preservation": 1.0, "row_integrity": 1.0}
    assert s.reward == 1.0


def test_an_invalid_program_repairs_and_damages_nothing() -> None:
    columns = ("record_id", "a")
    truth = Table.from_rows(columns, [["r1", "x"]])
    before = Table.from_rows(columns, [["r1", " x"]])
    s = grade(truth, before, None, "record_id", ("a",), 0, "not a program")
    assert s.reward == 0.0
    assert s.metrics["cells_damaged"] == 0 and s.metrics["cells_repaired"] == 0
    assert s.metrics["invalid_reason"] == "not a program"


# Found by mutation testing (docs/mutation/).
def test_rows_and_records_slice_by_start_and_stop() -> None:
    t = Table(("id", "v"), {"id": ["a", "b", "c", "d"], "v": ["1", None, "3", "4"]})
    assert t.rows() == [["a", "1"], ["b", None], ["c", "3"], ["d", "4"]]
    assert t.rows(1, 3) == [["b", None], ["c", "3"]]
    assert t.rows(2) == [["c", "3"], ["d", "4"]]
    assert t.records(1, 3) == [{"id": "b", "v": None}, {"id": "c", "v": "3"}]
    assert t.records(3) == [{"id": "d", "v": "4"}]
    assert t.records() == [dict(zip(t.columns, r, strict=True)) for r in t.rows()]


@pytest.mark.parametrize(
    ("raw", "clean"),
    [
        (".5", "0.50"),  # no whole part, short fraction
        (".125", "0.13"),  # no whole part, rounded half up
        ("12.345", "12.35"),  # a whole part and a fraction to round
        ("-7.005", "-7.01"),
        ("1" * MAX_DIGITS + ".5", "1" * MAX_DIGITS + ".50"),  # the longest number rewritten
        ("1" * (MAX_DIGITS + 1) + ".5", "1" * (MAX_DIGITS + 1) + ".5"),  # one digit more: left
        ("12.5".ljust(MAX_CELL), "12.50"),  # the longest cell read
        ("12.5".ljust(MAX_CELL + 1), "12.5".ljust(MAX_CELL + 1)),  # one more: left alone
        ("12.50".ljust(MAX_CELL + 1), "12.50".ljust(MAX_CELL + 1)),
    ],
)
def test_decimal2_bounds_and_rounding(raw: str, clean: str) -> None:
    assert decimal2(raw) == clean


def test_a_dedupe_report_names_its_place_and_rows_removed_and_the_program_goes_on() -> None:
    t = Table(("id", "v"), {"id": ["a", "a", "b"], "v": ["x ", "x ", "y "]})
    out, reports = run_program(t, [Operation("dedupe", keys=("id",)), Operation("strip", ("v",))])
    assert out.data == {"id": ["a", "b"], "v": ["x", "y"]}
    assert [r.as_dict() for r in reports] == [
        {"index": 0, "op": "dedupe", "cells_changed": 0, "rows_removed": 1},
        {"index": 1, "op": "strip", "cells_changed": 2},
    ]


def test_a_row_with_a_missing_part_of_a_composite_key_is_nobodys_duplicate() -> None:
    t = Table(("a", "b"), {"a": [None, None, "x", "x"], "b": ["k", "k", None, None]})
    out, [report] = run_program(t, [Operation("dedupe", keys=("a", "b"))])
    assert report.rows_removed == 0 and len(out) == 4
    full = Table(("a", "b"), {"a": ["x", "x"], "b": ["k", "k"]})
    assert run_program(full, [Operation("dedupe", keys=("a", "b"))])[1][0].rows_removed == 1


def test_every_metric_of_an_invalid_submission_starts_at_zero() -> None:
    t = Table(("id", "v"), {"id": ["a"], "v": ["1"]})
    s = grade(t, t, None, "id", ("v",), 0)
    assert s.metrics == {
        "cells_repaired": 0,
        "cells_damaged": 0,
        "rows_extra": 0,
        "rows_missing": 0,
        "invalid_reason": "",
        "program_length": 0,
    }


@pytest.mark.parametrize(
    ("fn", "raw", "clean"),
    [
        (date_us, "01/01/2024", "2024-01-01"),  # the first month and the first day are dates
        (date_eu, "01/01/2024", "2024-01-01"),
        (date_us, "12/31/0001", "0001-12-31"),  # year 1 is the first year
        (date_us, "01/01/0000", "01/01/0000"),  # year 0 is not
        (date_us, "13/01/2024", "13/01/2024"),  # no month 13
        (date_us, "01/02/2024".ljust(MAX_CELL), "2024-01-02"),  # the longest cell read
        (date_us, "01/02/2024".ljust(MAX_CELL + 1), "01/02/2024".ljust(MAX_CELL + 1)),
        (integer, "12".ljust(MAX_CELL), "12"),
        (integer, "12".ljust(MAX_CELL + 1), "12".ljust(MAX_CELL + 1)),
        (integer, "+" + "1" * MAX_DIGITS, "1" * MAX_DIGITS),  # the longest count rewritten
        (integer, "+" + "1" * (MAX_DIGITS + 1), "+" + "1" * (MAX_DIGITS + 1)),
        (phone_us, "555 123 4567".ljust(MAX_CELL), "555-123-4567"),
        (phone_us, "555 123 4567".ljust(MAX_CELL + 1), "555 123 4567".ljust(MAX_CELL + 1)),
        (phone_us, "(555) 123-456a", "(555) 123-456a"),  # a letter: not a phone number
        (phone_us, "(555) 123-456\u0661", "(555) 123-456\u0661"),  # a digit, not an ASCII one
    ],
)
def test_cell_functions_read_only_what_they_recognise(
    fn: Callable[[str], str | None], raw: str, clean: str
) -> None:
    assert fn(raw) == clean

"""Rules that survived planted bugs until these tests existed (issue: tests that catch bugs)."""

from __future__ import annotations

import pytest

from datagauntlet.envs.dataclean.engine import Table, date_eu, date_us
from datagauntlet.envs.dataclean.grader import grade


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

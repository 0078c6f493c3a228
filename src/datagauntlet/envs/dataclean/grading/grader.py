"""Score a cleaned table against the clean truth, rows aligned by primary key.

reward = 0.60 repair recall + 0.20 preservation + 0.20 row integrity, where
- repair recall: cells that arrived wrong and are now right / cells that arrived wrong
  (1.0 when nothing arrived wrong); a missing value left as "N/A" is not repaired;
- preservation: cells that arrived right and are still right / cells that arrived right;
- row integrity: 1 - (extra + missing row occurrences) / max(1, submitted + expected rows).
Only editable columns count (protected ones cannot change). A record's cells are read from
its first occurrence; a record missing from the output has every cell wrong.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from operator import eq, itemgetter
from typing import Any

from datagauntlet.core.score import Score
from datagauntlet.envs.dataclean.tool.engine import Cell, Table

WEIGHTS = {"repair_recall": 0.6, "preservation": 0.2, "row_integrity": 0.2}
METRICS = (
    "cells_repaired",
    "cells_damaged",
    "rows_extra",
    "rows_missing",
    "invalid_reason",
    "program_length",
)
_ABSENT = object()  # the cell of a record that is not in the output


@dataclass(frozen=True)
class Tally:
    corrupted: int
    repaired: int
    correct: int
    preserved: int
    rows_extra: int
    rows_missing: int
    rows_submitted: int
    rows_expected: int

    @property
    def values(self) -> dict[str, float]:
        recall = self.repaired / self.corrupted if self.corrupted else 1.0
        preservation = self.preserved / self.correct if self.correct else 1.0
        wrong_rows = self.rows_extra + self.rows_missing
        integrity = 1.0 - wrong_rows / max(1, self.rows_submitted + self.rows_expected)
        return {"repair_recall": recall, "preservation": preservation, "row_integrity": integrity}


def _first_positions(ids: Sequence[Cell]) -> dict[Cell, int]:
    # Filled from the end, so each id keeps the position of its first occurrence.
    return dict(zip(reversed(ids), range(len(ids) - 1, -1, -1), strict=True))


def arrived_right(
    truth: Table, before: Table, key: str, columns: Sequence[str]
) -> dict[str, bytes]:
    """Per column, one byte a truth record: 1 where `before` (its first occurrence) already
    held the right value. A pure function of the task, so a generator that still has its
    columns aligned can make it without any lookup (`CleaningTask.arrived_right`)."""
    in_before = _first_positions(before.data[key])
    take = _getter(list(map(in_before.__getitem__, truth.data[key])))
    return {col: bytes(map(eq, truth.data[col], take(before.data[col]))) for col in columns}


def _getter(at: Sequence[int]) -> Callable[[Sequence[Any]], Sequence[Any]]:
    """`lambda values: [values[i] for i in at]`, by C-level indexing (built once, used per
    column)."""
    if len(at) < 2:
        return lambda values: [values[i] for i in at]
    return itemgetter(*at)


def tally(
    truth: Table,
    before: Table,
    after: Table,
    key: str,
    columns: Sequence[str],
    right_before: Mapping[str, bytes] | None = None,
) -> Tally:
    """Count repairs and damage of `after` (the cleaned `before`) against `truth`.

    `right_before` is `arrived_right(truth, before, key, columns)` when the caller has it
    (the generated task does); else it is worked out here."""
    if not right_before:
        right_before = arrived_right(truth, before, key, columns)
    expected = truth.data[key]
    in_after = _first_positions(after.data[key])
    at_after: list[int | None] = list(map(in_after.get, expected))
    n_after = len(after)
    absent = None in at_after
    if absent:  # a record missing from the output reads one cell past its end: _ABSENT
        at_after = [n_after if i is None else i for i in at_after]
    take = _getter(at_after)  # type: ignore[arg-type]
    corrupted = repaired = correct = preserved = 0
    for col in columns:
        a_col = after.data[col]
        was_right = right_before[col]
        is_right = bytes(map(eq, truth.data[col], take([*a_col, _ABSENT] if absent else a_col)))
        n_right_before = was_right.count(1)
        both = int.from_bytes(was_right, "little") & int.from_bytes(is_right, "little")
        n_kept = both.bit_count()
        correct += n_right_before
        preserved += n_kept
        corrupted += len(is_right) - n_right_before
        repaired += is_right.count(1) - n_kept
    truth_ids = set(expected)
    if len(truth_ids) == len(expected):  # one row a record (generated truth): no set algebra
        present = len(expected) - (at_after.count(n_after) if absent else 0)
    else:
        present = len(truth_ids.intersection(in_after))
    extra = len(after.data[key]) - present  # every occurrence but a truth record's first
    missing = len(truth_ids) - present
    return Tally(corrupted, repaired, correct, preserved, extra, missing, n_after, len(truth))


def grade(
    truth: Table,
    before: Table,
    after: Table | None,
    key: str,
    columns: Sequence[str],
    program_length: int,
    invalid_reason: str = "",
    right_before: Mapping[str, bytes] | None = None,
) -> Score:
    """The score of one submission; `after` is None when the program was invalid or absent.
    `right_before`: see `tally`."""
    metrics: dict[str, Any] = {
        "cells_repaired": 0,
        "cells_damaged": 0,
        "rows_extra": 0,
        "rows_missing": 0,
        "invalid_reason": invalid_reason,
        "program_length": program_length,
    }
    if after is None:
        return Score.zero(WEIGHTS, metrics)
    t = tally(truth, before, after, key, columns, right_before)
    metrics.update(
        cells_repaired=t.repaired,
        cells_damaged=t.correct - t.preserved,
        rows_extra=t.rows_extra,
        rows_missing=t.rows_missing,
    )
    return Score.build(WEIGHTS, t.values, metrics)

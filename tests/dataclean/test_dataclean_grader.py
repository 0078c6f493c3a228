"""The scoring formula, rule by rule, on small hand-made tables."""

from __future__ import annotations

import pytest

from datagauntlet.envs.dataclean.grading.grader import METRICS, WEIGHTS, grade, tally
from datagauntlet.envs.dataclean.tool.engine import Cell, Table

COLUMNS = ("record_id", "a", "b")
EDITABLE = ("a", "b")
TRUTH = [["r1", "x", "1"], ["r2", "y", None], ["r3", "z", "3"]]
# r1.a and r2.b arrive wrong; the other four cells arrive right.
BEFORE = [["r1", " x", "1"], ["r2", "y", "N/A"], ["r3", "z", "3"], ["r3", "z", "3"]]


def t(rows: list[list[Cell]]) -> Table:
    return Table.from_rows(COLUMNS, rows)


def score(after: list[list[Cell]] | None, **kw: object) -> dict[str, float]:
    s = grade(t(TRUTH), t(BEFORE), None if after is None else t(after), "record_id", EDITABLE, 3)
    return {"reward": s.reward, **{k: c["value"] for k, c in s.components.items()}, **s.metrics}


def test_weights_are_the_seed_formula() -> None:
    assert WEIGHTS == {"repair_recall": 0.6, "preservation": 0.2, "row_integrity": 0.2}


def test_a_fully_correct_table_earns_exactly_one() -> None:
    s = score(TRUTH)
    assert s["reward"] == 1.0
    assert (s["cells_repaired"], s["cells_damaged"], s["rows_extra"], s["rows_missing"]) == (
        2,
        0,
        0,
        0,
    )


def test_doing_nothing_keeps_preservation_but_repairs_nothing() -> None:
    s = score(BEFORE)
    assert s["repair_recall"] == 0.0 and s["preservation"] == 1.0
    # one extra occurrence (the duplicate of r3) over 4 submitted + 3 expected rows
    assert s["row_integrity"] == pytest.approx(1 - 1 / 7, abs=1e-6)
    assert s["reward"] == pytest.approx(0.2 + 0.2 * (1 - 1 / 7), abs=1e-6)
    assert s["rows_extra"] == 1


def test_repair_recall_counts_repaired_corrupted_cells() -> None:
    s = score([["r1", "x", "1"], ["r2", "y", "N/A"], ["r3", "z", "3"]])
    assert s["repair_recall"] == 0.5 and s["cells_repaired"] == 1


def test_a_missing_value_left_as_a_marker_or_blank_is_not_repaired() -> None:
    for left in ("N/A", "", "null"):
        s = score([["r1", "x", "1"], ["r2", "y", left], ["r3", "z", "3"]])
        assert s["repair_recall"] == 0.5


def test_an_edit_to_a_correct_cell_costs_preservation() -> None:
    s = score([["r1", "x", "1"], ["r2", "Y", None], ["r3", "z", "3.00"]])
    assert s["preservation"] == 0.5 and s["cells_damaged"] == 2
    assert s["repair_recall"] == 1.0


def test_row_order_does_not_matter() -> None:
    assert score(list(reversed(TRUTH)))["reward"] == 1.0


def test_a_dropped_record_is_missing_and_all_its_cells_are_wrong() -> None:
    s = score([["r1", "x", "1"], ["r3", "z", "3"]])
    assert s["rows_missing"] == 1
    assert s["row_integrity"] == pytest.approx(1 - 1 / 5, abs=1e-6)
    assert s["repair_recall"] == 0.5  # r2.b was corrupted and is gone
    assert s["preservation"] == 0.75  # r2.a was right and is gone


def test_an_invented_record_counts_as_extra() -> None:
    s = score([*TRUTH, ["r9", "q", "9"]])
    assert s["rows_extra"] == 1 and s["row_integrity"] == pytest.approx(1 - 1 / 7, abs=1e-6)


def test_a_record_is_graded_on_its_first_occurrence() -> None:
    s = score([["r1", "wrong", "1"], ["r1", "x", "1"], ["r2", "y", None], ["r3", "z", "3"]])
    assert s["repair_recall"] == 0.5 and s["rows_extra"] == 1


def test_recall_is_one_when_nothing_arrived_corrupted() -> None:
    clean = tally(t(TRUTH), t(TRUTH), t(TRUTH), "record_id", EDITABLE)
    assert clean.corrupted == 0 and clean.values["repair_recall"] == 1.0


def test_protected_columns_are_not_counted() -> None:
    tl = tally(t(TRUTH), t(BEFORE), t(TRUTH), "record_id", EDITABLE)
    assert tl.corrupted + tl.correct == len(TRUTH) * len(EDITABLE)


def test_an_invalid_or_missing_program_scores_zero_with_its_reason() -> None:
    s = grade(t(TRUTH), t(BEFORE), None, "record_id", EDITABLE, 2, "operations[1]: bad")
    assert s.reward == 0.0 and all(c["value"] == 0.0 for c in s.components.values())
    assert s.metrics["invalid_reason"] == "operations[1]: bad"
    assert s.metrics["program_length"] == 2
    assert tuple(s.metrics) == METRICS


def _tally_counts(truth: list, before: list, after: list) -> tuple:
    """The grader's tally of these rows, as the counts `reference_tally` gives."""
    got = tally(t(truth), t(before), t(after), "record_id", EDITABLE)
    return (
        got.corrupted, got.repaired, got.correct, got.preserved,
        got.rows_extra, got.rows_missing, got.rows_submitted, got.rows_expected,
    )  # fmt: skip


def reference_tally(truth: Table, before: Table, after: Table, columns: tuple[str, ...]) -> tuple:
    """The formula read literally, one record at a time (what `tally` computes in bulk)."""

    def first(table: Table) -> dict[Cell, dict[str, Cell]]:
        out: dict[Cell, dict[str, Cell]] = {}
        for rec in table.records():
            out.setdefault(rec["record_id"], rec)
        return out

    b, a = first(before), first(after)
    counts = [0, 0, 0, 0]  # corrupted, repaired, correct, preserved
    for rec in truth.records():
        for col in columns:
            right_before = b[rec["record_id"]][col] == rec[col]
            right_after = rec["record_id"] in a and a[rec["record_id"]][col] == rec[col]
            counts[0 if not right_before else 2] += 1
            counts[1] += right_after and not right_before
            counts[3] += right_after and right_before
    ids = after.data["record_id"]
    truth_ids = set(truth.data["record_id"])
    extra = sum(ids.count(r) - 1 if r in truth_ids else ids.count(r) for r in set(ids))
    missing = sum(1 for r in truth_ids if r not in ids)
    return (*counts, extra, missing, len(after), len(truth))


@pytest.mark.parametrize("seed", range(12))
def test_tally_equals_the_record_by_record_formula(seed: int) -> None:
    from datagauntlet.core.seeding import Keyed

    k = Keyed(seed).stream("tables")
    values = ["x", "y", " x", "N/A", None, "1"]
    n = 1 + k.randint(0, 30)
    truth = [[f"r{i}", k.choice(values), k.choice(values)] for i in range(n)]
    before = [[r[0], *(c if k.chance(0.6) else k.choice(values) for c in r[1:])] for r in truth]
    before += [list(before[k.randint(0, n - 1)]) for _ in range(k.randint(0, 3))]
    after = [[r[0], *(c if k.chance(0.5) else k.choice(values) for c in r[1:])] for r in before]
    after = [r for r in after if not k.chance(0.2)]  # dropped records
    after += [[k.choice(["r0", "new", None]), "x", "y"] for _ in range(k.randint(0, 3))]
    after = k.shuffled(after)
    assert _tally_counts(truth, before, after) == reference_tally(
        t(truth), t(before), t(after), EDITABLE
    )


def test_truth_with_a_repeated_id_counts_each_record_once() -> None:
    """The set-algebra branch (truth ids not unique): same counts as the literal formula."""
    truth = [["r1", "x", "1"], ["r1", "x", "1"], ["r2", "y", "2"]]
    before = [["r1", " x", "1"], ["r2", "y", "2"]]
    for after in ([["r1", "x", "1"]], [["r2", "y", "2"], ["r1", "x", "1"], ["r9", "x", "1"]]):
        assert _tally_counts(truth, before, after) == reference_tally(
            t(truth), t(before), t(after), EDITABLE
        )


def _generated_cases() -> list[tuple[str, str, int | None]]:
    families = ("crm", "orders", "inventory", "odd", "orders-copy")
    return [(f"{f}:{rows}", f, rows) for f in families for rows in (None, 1, 3, 300)]


@pytest.mark.parametrize(("name", "family", "rows"), _generated_cases())
def test_a_generated_task_carries_the_arrived_right_masks_the_grader_would_work_out(
    name: str, family: str, rows: int | None
) -> None:
    """Episodes score with the masks the generator made; they must equal the general path's
    for every table a submission could be, or a reward would move."""
    import sys
    from pathlib import Path

    from datagauntlet.core.seeding import Keyed
    from datagauntlet.envs.dataclean.config import DatacleanConfig
    from datagauntlet.envs.dataclean.grading.grader import arrived_right
    from datagauntlet.envs.dataclean.world import families as fam
    from datagauntlet.envs.dataclean.world.generator import generate

    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "scripts"))
    import dataclean_golden as golden

    config = DatacleanConfig(family=family, rows=rows)  # type: ignore[arg-type]
    w = generate(7, config, (golden.odd_layout(), golden.orders_like()))
    editable = [c.name for c in w.family.editable]
    assert w.arrived_right == arrived_right(w.truth, w.dirty, fam.PRIMARY_KEY, editable)
    k = Keyed(name).stream("mangle")
    rows_, truth_rows = w.dirty.rows(), w.truth.rows()
    outs = [
        rows_,
        truth_rows,
        k.shuffled(truth_rows[1:] + rows_[:2]),
        [[c if k.chance(0.7) else "N/A" for c in r] for r in rows_ if not k.chance(0.3)],
    ]
    for out in outs:
        after = Table.from_rows(w.dirty.columns, out)
        args = (w.truth, w.dirty, after, fam.PRIMARY_KEY, editable, 1, "")
        assert grade(*args, w.arrived_right) == grade(*args)
    if rows == 300:  # the masks are not trivially all ones: some cells arrived wrong
        assert any(0 in mask for mask in w.arrived_right.values())

"""What event-recon reads from the database a graded script left (remediation.inspect), on
hand-made databases: which partners and tables changed, what is unreadable and why, and the
status the graded run ended with."""

from __future__ import annotations

from pathlib import Path

import pytest
from er_hand_made_truth import P, truth

from datagauntlet.envs.event_recon.grading.grader import Outcome


def _ledger_db(path: Path) -> Path:
    import sqlite3

    db = sqlite3.connect(path)
    db.execute("CREATE TABLE ledger_entries (partner_id TEXT, period TEXT, amount INT, memo TEXT)")
    db.execute("CREATE TABLE payouts (partner_id TEXT, amount INT)")
    base = [("p1", "2026-01", 130, "a"), ("p3", "2026-02", 7, "b")]
    db.executemany("INSERT INTO ledger_entries VALUES (?, ?, ?, ?)", base)
    db.execute("INSERT INTO payouts VALUES ('p1', 130)")
    db.commit()
    db.close()
    return path


def _project(path: Path) -> dict[str, dict[str, int]]:
    import sqlite3

    db = sqlite3.connect(path)
    try:
        out: dict[str, dict[str, int]] = {p: {} for p in P}
        for partner, period, amount in db.execute(
            "SELECT partner_id, period, sum(amount) FROM ledger_entries GROUP BY 1, 2"
        ):
            out.setdefault(partner, {})[period] = amount
        return out
    finally:
        db.close()


def _inspect(tmp_path: Path, change: str) -> Outcome:
    import shutil
    import sqlite3

    from datagauntlet.envs.event_recon.grading.remediation import inspect
    from datagauntlet.kits.sandbox import WALLS, SandboxResult

    pristine = _ledger_db(tmp_path / "pristine.sqlite")
    after = tmp_path / "after.sqlite"
    shutil.copy(pristine, after)
    db = sqlite3.connect(after)
    db.executescript(change)
    db.commit()
    db.close()
    run = SandboxResult(0, "", "", 0.1, 0.1, (), WALLS)
    graded = truth()
    return inspect(pristine, after, graded, run, change.encode())


def test_a_row_edited_in_a_column_the_projection_ignores_still_counts_as_changed(
    tmp_path: Path,
) -> None:
    out = _inspect(tmp_path, "UPDATE ledger_entries SET memo = 'edited' WHERE partner_id = 'p3'")
    assert out.changed_partners == frozenset({"p3"}) and out.db_changed
    assert out.projection == _project(tmp_path / "pristine.sqlite")
    assert not out.payouts_changed


def test_a_table_whose_name_holds_a_quote_is_read_not_refused(tmp_path: Path) -> None:
    out = _inspect(tmp_path, 'CREATE TABLE "odd""name" (x); INSERT INTO "odd""name" VALUES (1);')
    assert out.projection is not None and out.db_changed
    assert "unreadable" not in out.detail


def test_a_change_to_the_schema_alone_is_a_change(tmp_path: Path) -> None:
    out = _inspect(tmp_path, "ALTER TABLE payouts RENAME COLUMN amount TO paid")
    assert out.db_changed and not out.payouts_changed and out.changed_partners == frozenset()


def test_reading_the_left_database_is_bounded_by_the_readers_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from datagauntlet.envs.event_recon.grading import remediation

    pad = (
        "CREATE TABLE pad (x); WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n "
        "WHERE i < 20000) INSERT INTO pad SELECT i FROM n;"
    )
    fine = _inspect(tmp_path, pad)
    assert fine.projection is not None and fine.db_changed and "unreadable" not in fine.detail
    assert fine.refusal is None
    # the reader is a sandboxed process under READ_LIMITS: past its deadline it is killed
    monkeypatch.setattr(remediation, "READ_LIMITS", remediation.READ_LIMITS.with_(timeout_s=0.01))
    (tmp_path / "late").mkdir()
    late = _inspect(tmp_path / "late", pad)
    assert late.refusal == "db_read_limit" and "timeout" in late.detail["unreadable"]
    assert late.projection is None and late.payouts_changed and late.db_changed


def test_a_ledger_without_its_partner_column_is_unreadable_by_name(tmp_path: Path) -> None:
    out = _inspect(tmp_path, "ALTER TABLE ledger_entries RENAME COLUMN partner_id TO pid")
    assert out.projection is None
    assert out.detail == {"unreadable": "ledger_entries has no column partner_id"}


# --- the graded run's reading, rule by rule (survivors of the full mutation run) -------------
def _run(exit_code: int = 0, timed_out: bool = False, events: tuple[str, ...] = ()):  # type: ignore[no-untyped-def]
    from datagauntlet.kits.sandbox import WALLS, SandboxResult
    from datagauntlet.kits.sandbox.result import Violation

    violations = tuple(Violation("audit" if e == "open" else "rlimits", e, "x") for e in events)
    return SandboxResult(exit_code, "", "", 0.1, 0.1, violations, WALLS, timed_out=timed_out)


@pytest.mark.parametrize(
    ("run", "status"),
    [
        ({}, "ok"),
        ({"exit_code": 1}, "error"),
        ({"exit_code": -9}, "error"),
        ({"timed_out": True}, "timeout"),
        ({"exit_code": -24, "events": ("cpu",)}, "timeout"),
        ({"exit_code": -9, "events": ("timeout",)}, "timeout"),
        ({"exit_code": 1, "events": ("open",)}, "violation"),
        ({"events": ("open", "cpu")}, "timeout"),
    ],
)
def test_the_graded_run_status_names_why_it_ended(run: dict, status: str) -> None:  # type: ignore[type-arg]
    from datagauntlet.envs.event_recon.grading.remediation import _status

    assert _status(_run(**run)) == status


def test_the_outcome_counts_the_script_lines_whatever_its_last_line_ends_with(
    tmp_path: Path,
) -> None:
    from datagauntlet.envs.event_recon.grading.remediation import inspect

    pristine = _ledger_db(tmp_path / "pristine.sqlite")
    graded = truth()
    for script, lines in ((b"", 0), (b"a\n", 1), (b"a\nb", 2), (b"a\nb\n", 2), (b"\n\n", 2)):
        out = inspect(pristine, pristine, graded, _run(), script)
        assert (out.script_lines, out.script_bytes) == (lines, len(script)), script


def test_a_database_left_as_it_was_is_not_a_change(tmp_path: Path) -> None:
    out = _inspect(tmp_path, "SELECT 1")
    assert not out.db_changed and not out.payouts_changed
    assert out.changed_partners == frozenset() and out.status == "ok"


def test_a_payout_edited_in_place_is_a_payouts_change(tmp_path: Path) -> None:
    out = _inspect(tmp_path, "UPDATE payouts SET amount = 1 WHERE partner_id = 'p1'")
    assert out.payouts_changed and out.db_changed and out.changed_partners == frozenset()


def test_a_partner_whose_rows_are_all_deleted_or_all_new_is_changed(tmp_path: Path) -> None:
    gone = _inspect(tmp_path, "DELETE FROM ledger_entries WHERE partner_id = 'p3'")
    assert gone.changed_partners == frozenset({"p3"})
    (tmp_path / "new").mkdir()
    new = _inspect(tmp_path / "new", "INSERT INTO ledger_entries VALUES ('p4', '2026-03', 1, '')")
    assert new.changed_partners == frozenset({"p4"})


def _left_behind(tmp_path: Path, make: str) -> Outcome:
    import os

    from datagauntlet.envs.event_recon.grading.remediation import inspect

    pristine = _ledger_db(tmp_path / "pristine.sqlite")
    after = tmp_path / "db.sqlite"
    if make == "symlink to a good copy":
        os.symlink(_ledger_db(tmp_path / "copy.sqlite"), after)
    graded = truth()
    return inspect(pristine, after, graded, _run(exit_code=1), b"x")


@pytest.mark.parametrize("make", ["missing", "symlink to a good copy"])
def test_a_database_missing_or_swapped_for_a_link_is_unreadable_by_name(
    tmp_path: Path, make: str
) -> None:
    out = _left_behind(tmp_path, make)
    why = "db.sqlite is missing" if make == "missing" else "db.sqlite is not a plain file"
    assert out.detail["unreadable"].startswith(why) and out.refusal == "db_unreadable"
    assert out.projection is None and out.status == "error"
    # unreadable: every partner counts as changed, and so do the payouts and the database
    assert out.changed_partners == frozenset(P) and out.payouts_changed and out.db_changed


def test_a_dropped_payouts_table_is_unreadable_by_name(tmp_path: Path) -> None:
    out = _inspect(tmp_path, "DROP TABLE payouts")
    assert out.detail == {"unreadable": "table payouts is gone"} and out.status == "ok"

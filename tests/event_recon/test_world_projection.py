"""`project_ledger`: the contract's balance projection of whatever a db.sqlite now holds,
with a clear ValueError (never a traceback) for a file it cannot read a projection from."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from world_helpers import SAMPLE_INDICES, sample_world

from datagauntlet.envs.event_recon.grading.projection import project_ledger
from datagauntlet.envs.event_recon.world.workspace import materialize


@pytest.fixture()
def db(tmp_path: Path) -> tuple[Path, object]:
    world = sample_world(SAMPLE_INDICES[5])
    materialize(world, tmp_path)
    return tmp_path / "db.sqlite", world


def test_projection_follows_the_rows_whatever_their_shape(db) -> None:
    path, world = db
    assert project_ledger(path, world.schema, world.partner_ids) == world.shipped
    partner = world.broken_partners[0]
    col, per = world.schema.amount_column, world.schema.period_column
    with sqlite3.connect(path) as conn:  # replace the partner's rows by one row per period
        conn.execute("DELETE FROM ledger_entries WHERE partner_id = ?", (partner,))
        for i, (period, amount) in enumerate(world.correct[partner].items()):
            conn.execute(
                f"INSERT INTO ledger_entries (entry_id, partner_id, program_id, kind, {per}, "
                f"{col}, currency) VALUES (?, ?, 'p', 'adjustment', ?, ?, 'X')",
                (f"fix{i}", partner, period, amount),
            )
    after = project_ledger(path, world.schema, world.partner_ids)
    assert after[partner] == world.correct[partner]
    assert all(after[p] == world.shipped[p] for p in world.partner_ids if p != partner)


@pytest.mark.parametrize(
    "sql",
    [
        "DROP TABLE ledger_entries",
        "ALTER TABLE ledger_entries RENAME TO old_entries",
        "UPDATE ledger_entries SET {amount} = 1.5",
        "UPDATE ledger_entries SET {amount} = 'lots'",
    ],
)
def test_an_unreadable_ledger_is_a_value_error(db, sql: str) -> None:
    path, world = db
    with sqlite3.connect(path) as conn:
        conn.execute(sql.format(amount=world.schema.amount_column))
    with pytest.raises(ValueError, match=r"ledger_entries|cannot read"):
        project_ledger(path, world.schema, world.partner_ids)


def test_a_partner_off_the_roster_shows_up_for_the_grader(db) -> None:
    path, world = db
    with sqlite3.connect(path) as conn:
        conn.execute("UPDATE ledger_entries SET partner_id = 'prt_nobody' WHERE rowid = 1")
    assert "prt_nobody" in project_ledger(path, world.schema, world.partner_ids)


def test_missing_and_garbage_files_are_value_errors(tmp_path: Path) -> None:
    schema = sample_world(SAMPLE_INDICES[0]).schema
    with pytest.raises(ValueError, match="no database"):
        project_ledger(tmp_path / "absent.sqlite", schema)
    junk = tmp_path / "db.sqlite"
    junk.write_bytes(b"not a database at all" * 100)
    with pytest.raises(ValueError):
        project_ledger(junk, schema)

"""The balance projection of whatever a `db.sqlite` holds now (the contract's definition).

The grader applies it after the remediation script has run, inside the sandboxed reader
(`ledger_reader.projection`, the one definition of the query and its checks); here it is
opened read-only on a trusted file and answers a clear ValueError when it cannot be read.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable
from pathlib import Path

from datagauntlet.envs.event_recon.grading import ledger_reader
from datagauntlet.envs.event_recon.world.records import Projection, Schema


def projection_of(rows: Iterable[tuple[str, str, int]], partners: Iterable[str] = ()) -> Projection:
    """{partner_id: {period: sum}} from nonzero (partner, period, sum) rows, sorted; every
    partner in `partners` gets a key even when it has no rows."""
    out: dict[str, dict[str, int]] = {p: {} for p in partners}
    for partner, period, total in rows:
        out.setdefault(partner, {})[period] = total
    return {p: dict(sorted(v.items())) for p, v in sorted(out.items())}


def project_ledger(db_path: str | Path, schema: Schema, partners: Iterable[str] = ()) -> Projection:
    """The projection over `ledger_entries` of a database file."""
    path = Path(db_path)
    if not path.is_file():
        raise ValueError(f"no database at {path}")
    spec = {
        "ledger_table": "ledger_entries",
        "period_column": schema.period_column,
        "amount_column": schema.amount_column,
        "bounds": ledger_reader.BOUNDS,
    }
    try:
        conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    except sqlite3.Error as exc:
        raise ValueError(f"cannot open {path.name}: {exc}") from None
    try:
        rows = ledger_reader.projection(conn, spec)
    except (sqlite3.Error, ledger_reader.Unreadable, ledger_reader.Refused) as exc:
        raise ValueError(f"cannot read the ledger projection from {path.name}: {exc}") from None
    finally:
        conn.close()
    return projection_of(((p, period, total) for p, period, total in rows), partners)

"""The balance projection of whatever a `db.sqlite` holds now (the contract's definition).

The grader applies it after the remediation script has run, so it trusts nothing about the
file: it opens it read-only and answers a clear ValueError when it cannot read a projection.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable
from pathlib import Path

from datagauntlet.envs.event_recon.records import Projection, Schema


def project_ledger(db_path: str | Path, schema: Schema, partners: Iterable[str] = ()) -> Projection:
    """{partner_id: {period: sum}} over `ledger_entries`, zero sums dropped; every partner in
    `partners` gets a key even when it has no rows."""
    path = Path(db_path)
    if not path.is_file():
        raise ValueError(f"no database at {path}")
    query = (
        f'SELECT partner_id, "{schema.period_column}", SUM("{schema.amount_column}") '
        f'FROM ledger_entries GROUP BY partner_id, "{schema.period_column}"'
    )
    try:
        conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    except sqlite3.Error as exc:
        raise ValueError(f"cannot open {path.name}: {exc}") from None
    try:
        rows = conn.execute(query).fetchall()
    except sqlite3.Error as exc:
        raise ValueError(f"cannot read the ledger projection from {path.name}: {exc}") from None
    finally:
        conn.close()
    out: dict[str, dict[str, int]] = {p: {} for p in partners}
    for partner, period, total in rows:
        if not isinstance(partner, str) or not isinstance(period, str):
            raise ValueError("ledger_entries holds a non-text partner_id or period")
        if not isinstance(total, int) or isinstance(total, bool):
            raise ValueError(f"ledger_entries holds a non-integer amount for {partner!r}")
        if total:
            out.setdefault(partner, {})[period] = total
    return {p: dict(sorted(v.items())) for p, v in sorted(out.items())}

"""The warehouse of one case: in-memory SQLite with wh_customers, wh_orders and one all-text
staging table per batch, plus the loader, which loads whatever it is given.

The loader is the quiet failure: no foreign keys, no uniqueness, a blank amount becomes 0,
and it reports every load as clean. The revenue mart is the join of the two warehouse
tables, so a re-added customer counts each of their orders twice and an orphan drops out.
"""

from __future__ import annotations

import math
import re
import sqlite3
from collections import Counter
from dataclasses import dataclass
from typing import Any

from datagauntlet.envs.bad_batch_gate.world.cases import Batch, Case
from datagauntlet.envs.bad_batch_gate.world.contract import COLUMNS, CUSTOMER_COLUMNS, ORDER_COLUMNS

TOP_VALUES = 8
MART_SQL = (
    "SELECT ROUND(COALESCE(SUM(o.amount), 0), 2) FROM wh_orders o "
    "JOIN wh_customers c ON c.customer_id = o.customer_id"
)


def staging_table(batch_id: str) -> str:
    return "stg_" + re.sub(r"[^a-z0-9_]", "_", batch_id.lower())


def loaded_amount(text: str) -> float | str:
    """What the loader stores: a blank amount becomes 0.0; anything unparseable stays text."""
    stripped = text.strip()
    if not stripped:
        return 0.0
    try:
        return float(stripped)
    except ValueError:
        return text


@dataclass(frozen=True)
class LoadResult:
    rows_loaded: tuple[int, ...]  # staging rowids
    orphan_rows: tuple[int, ...]  # order rows whose customer was not in the warehouse


class Warehouse:
    def __init__(self, case: Case) -> None:
        self.case = case
        self.batches: dict[str, Batch] = {b.batch_id: b for b in case.batches}
        self.tables = {b.batch_id: staging_table(b.batch_id) for b in case.batches}
        conn = sqlite3.connect(":memory:", isolation_level=None, check_same_thread=False)
        self.conn = conn
        conn.execute("BEGIN")
        conn.execute(
            "CREATE TABLE wh_customers (customer_id TEXT, email TEXT, country TEXT, "
            "signup_date TEXT)"
        )
        conn.execute(
            "CREATE TABLE wh_orders (order_id TEXT, customer_id TEXT, amount REAL, "
            "currency TEXT, status TEXT, order_date TEXT)"
        )
        self._insert("wh_customers", CUSTOMER_COLUMNS, case.customers, convert=False)
        self._insert("wh_orders", ORDER_COLUMNS, case.orders, convert=True)
        for b in case.batches:
            cols = COLUMNS[b.table]
            table = self.tables[b.batch_id]
            conn.execute(f"CREATE TABLE {table} ({', '.join(c + ' TEXT' for c in cols)})")
            conn.executemany(
                f"INSERT INTO {table} VALUES ({', '.join('?' * len(cols))})",
                [tuple(r.get(c, "") for c in cols) for r in b.rows],
            )
        conn.execute("COMMIT")

    def _insert(self, table: str, cols: tuple[str, ...], rows: Any, convert: bool) -> None:
        values = []
        for r in rows:
            row = [r.get(c, "") for c in cols]
            if convert:
                row[cols.index("amount")] = loaded_amount(row[cols.index("amount")])
            values.append(tuple(row))
        self.conn.executemany(f"INSERT INTO {table} VALUES ({', '.join('?' * len(cols))})", values)

    # --- what agents can reach ------------------------------------------------------------------
    def listing(self) -> list[dict[str, Any]]:
        return [
            {
                "batch_id": b.batch_id,
                "table": b.table,
                "rows": len(b.rows),
                "staging_table": self.tables[b.batch_id],
                "source": b.source,
            }
            for b in self.case.batches
        ]

    def profile(self, batch_id: str) -> dict[str, Any]:
        b = self.batches[batch_id]
        columns = {}
        for col in COLUMNS[b.table]:
            values = [r.get(col) for r in b.rows]
            present = [v for v in values if v is not None]
            numbers = [x for x in (_number(v) for v in present) if x is not None]
            counts = Counter(present)
            top = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:TOP_VALUES]
            columns[col] = {
                "n_null": len(values) - len(present),
                "n_blank": sum(1 for v in present if not v.strip()),
                "n_distinct": len(counts),
                "min": min(present) if present else None,
                "max": max(present) if present else None,
                "numeric_min": min(numbers) if numbers else None,
                "numeric_max": max(numbers) if numbers else None,
                "top_values": [[v, n] for v, n in top],
            }
        return {"batch_id": b.batch_id, "table": b.table, "rows": len(b.rows), "columns": columns}

    # --- the loader -----------------------------------------------------------------------------
    def load(self, batch_id: str, hold_back: frozenset[int] = frozenset()) -> LoadResult:
        b = self.batches[batch_id]
        cols = COLUMNS[b.table]
        rowids = [i for i in range(1, len(b.rows) + 1) if i not in hold_back]
        orphans: list[int] = []
        if b.table == "orders":
            known = {r[0] for r in self.conn.execute("SELECT customer_id FROM wh_customers")}
            orphans = [i for i in rowids if b.rows[i - 1].get("customer_id") not in known]
        rows = [b.rows[i - 1] for i in rowids]
        self.conn.execute("BEGIN")
        target = "wh_orders" if b.table == "orders" else "wh_customers"
        self._insert(target, cols, rows, convert=b.table == "orders")
        self.conn.execute("COMMIT")
        return LoadResult(tuple(rowids), tuple(orphans))

    # --- what graders read -------------------------------------------------------------------
    def mart(self) -> float:
        return float(self.conn.execute(MART_SQL).fetchone()[0])

    def correct_mart(self) -> float:
        """The mart if every batch were handled as the contract says (a pure function of the
        case: clean rows in, bad rows and quarantined batches out)."""
        customers = Counter(r["customer_id"] for r in self.case.customers)
        orders = [r for r in self.case.orders]
        for b in self.case.batches:
            if b.truth.action == "quarantine":
                continue
            bad = set(b.truth.bad_rows)
            keep = [r for i, r in enumerate(b.rows, start=1) if i not in bad]
            if b.table == "customers":
                customers.update(r["customer_id"] for r in keep)
            else:
                orders.extend(keep)
        parts = []
        for r in orders:
            amount = loaded_amount(r["amount"])
            if isinstance(amount, float):
                parts.append(amount * customers[r["customer_id"]])
        return round(math.fsum(parts), 2)

    def snapshot(self) -> bytes:
        return self.conn.serialize()

    def close(self) -> None:
        self.conn.close()


def _number(text: str) -> float | None:
    if not text.strip():
        return None
    try:
        value = float(text)
    except ValueError:
        return None
    return value if math.isfinite(value) else None

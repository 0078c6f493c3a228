"""Read a database a remediation script left, under bounds, into a small summary.

Standard library only: grading runs this module's source inside the sandbox (its own process,
behind the walls, under CPU, memory and wall-clock limits), so nothing in the agent-made
file, however crafted, runs in or swells the trainer's process. Inside, each bound is also
checked as it is reached, so a refusal has a name rather than a kill:
- only plain tables are read: a view, trigger or index is never evaluated, and a generated
  column (VIRTUAL is computed on every read) or a virtual table is refused;
- SQLite's length limit bounds any one value and every row is bounded in bytes; the number of
  tables, the rows and the bytes read in all are bounded too.
Rows are compared as sorted multisets of their digests (never kept whole), so memory grows by
a digest per row.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import sys
from typing import Any

# The bounds (the grader passes them; these are the defaults its tests read).
BOUNDS = {
    "max_row_bytes": 1 << 20,  # one row, as its repr: every value is under this too
    "max_rows": 1_000_000,  # rows in all the tables of one database
    "max_bytes": 256 << 20,  # bytes of rows read from one database
    "max_tables": 200,
    "max_groups": 50_000,  # (partner, period) pairs in the balance projection
}
# What the summary's "code" names, and the grader's failure labels for them.
REFUSED = "refused"  # a bound or a refused construct: the reading stopped on purpose
UNREADABLE = "unreadable"  # not a database of the contract's shape


class Refused(Exception):
    """The database holds something grading does not read (a bound, a generated column)."""


class Unreadable(Exception):
    """The database cannot be read as a ledger."""


def quoted(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def connect(path: str, bounds: dict[str, int]) -> sqlite3.Connection:
    conn = sqlite3.connect(path, isolation_level=None)
    conn.setlimit(sqlite3.SQLITE_LIMIT_LENGTH, bounds["max_row_bytes"])
    # functions a crafted schema names run nowhere but in a generated column, which is refused
    # before any read; this keeps them from running at all
    conn.execute("PRAGMA trusted_schema = OFF")
    conn.execute("PRAGMA query_only = ON")
    return conn


def tables(conn: sqlite3.Connection, bounds: dict[str, int]) -> dict[str, str]:
    """Every plain table by name, with its CREATE text; refuses what is not plain data."""
    (count,) = conn.execute("SELECT count(*) FROM sqlite_master WHERE type = 'table'").fetchone()
    if count > bounds["max_tables"]:
        raise Refused(f"{count} tables, over the bound of {bounds['max_tables']}")
    rows = conn.execute("SELECT name, sql FROM sqlite_master WHERE type = 'table'").fetchall()
    out: dict[str, str] = {}
    for name, sql in rows:
        if not isinstance(name, str):
            raise Unreadable("a table without a text name")
        text = sql if isinstance(sql, str) else ""
        if text[:30].upper().replace(" ", "").startswith("CREATEVIRTUALTABLE"):
            raise Refused(f"table {name[:60]!r} is a virtual table")
        for column in conn.execute(f"PRAGMA table_xinfo({quoted(name)})"):
            if column[6] in (2, 3):  # hidden: 2 VIRTUAL, 3 STORED generated column
                kind = "VIRTUAL" if column[6] == 2 else "STORED"
                raise Refused(f"table {name[:60]!r} has a {kind} generated column {column[1]!r}")
        out[name] = text
    return out


class Budget:
    """Rows and bytes read so far from one database, against its bounds."""

    def __init__(self, bounds: dict[str, int]) -> None:
        self.bounds = bounds
        self.rows = 0
        self.bytes = 0

    def row(self, table: str, row: tuple[Any, ...]) -> bytes:
        """The row's key as bytes, counted against the bounds."""
        key = repr(row).encode("utf-8", "surrogatepass")
        self.rows += 1
        self.bytes += len(key)
        b = self.bounds
        if len(key) > b["max_row_bytes"]:
            raise Refused(f"a row of {table[:60]!r} is over {b['max_row_bytes']:,} bytes")
        if self.rows > b["max_rows"]:
            raise Refused(f"more than {b['max_rows']:,} rows")
        if self.bytes > b["max_bytes"]:
            raise Refused(f"more than {b['max_bytes']:,} bytes of rows")
        return key


def multiset(keys: list[bytes]) -> str:
    """One digest of a multiset of row keys (order-free: the keys are sorted first)."""
    h = hashlib.sha256()
    for k in sorted(keys):
        h.update(k)
    return h.hexdigest()


def _digest(key: bytes) -> bytes:
    return hashlib.sha256(key).digest()


def read_tables(conn: sqlite3.Connection, spec: dict[str, Any]) -> dict[str, Any]:
    """The digest of every table, the payouts' digest, and each partner's ledger rows' digest."""
    bounds = spec["bounds"]
    found = tables(conn, bounds)
    for needed in (spec["ledger_table"], spec["payouts_table"]):
        if needed not in found:
            raise Unreadable(f"table {needed} is gone")
    budget = Budget(bounds)
    whole = hashlib.sha256()
    payouts = ""
    partners: dict[str, list[bytes]] = {}
    for name, sql in sorted(found.items()):
        cur = conn.execute(f"SELECT * FROM {quoted(name)}")
        column = None
        if name == spec["ledger_table"]:
            columns = [d[0] for d in cur.description]
            if spec["partner_column"] not in columns:
                raise Unreadable(f"{name} has no column {spec['partner_column']}")
            column = columns.index(spec["partner_column"])
        keys = []
        for row in cur:
            key = _digest(budget.row(name, row))
            keys.append(key)
            if column is not None:
                partners.setdefault(str(row[column]), []).append(key)
        whole.update(f"{name}\n{sql}\n".encode("utf-8", "surrogatepass"))
        whole.update(multiset(keys).encode())
        if name == spec["payouts_table"]:
            payouts = multiset(keys)
    if len(partners) > bounds["max_groups"]:
        raise Refused(f"more than {bounds['max_groups']:,} partners in {spec['ledger_table']}")
    return {
        "digest": whole.hexdigest(),
        "payouts": payouts,
        "partners": {p: multiset(k) for p, k in partners.items()},
    }


def projection(conn: sqlite3.Connection, spec: dict[str, Any]) -> list[list[Any]]:
    """The contract's balance projection: [partner, period, sum] for every nonzero sum over
    the ledger table, each checked to be text, text and an integer."""
    period, amount = quoted(spec["period_column"]), quoted(spec["amount_column"])
    query = (
        f"SELECT partner_id, {period}, SUM({amount}) FROM {quoted(spec['ledger_table'])} "
        f"GROUP BY partner_id, {period}"
    )
    out = []
    for partner, when, total in conn.execute(query):
        if not isinstance(partner, str) or not isinstance(when, str):
            raise Unreadable(f"{spec['ledger_table']} holds a non-text partner_id or period")
        if not isinstance(total, int) or isinstance(total, bool):
            raise Unreadable(f"{spec['ledger_table']} holds a non-integer amount for {partner!r}")
        if total:
            out.append([partner, when, total])
            if len(out) > spec["bounds"]["max_groups"]:
                raise Refused(f"more than {spec['bounds']['max_groups']:,} balance groups")
    return out


def summarize(path: str, spec: dict[str, Any], project: bool = True) -> dict[str, Any]:
    """The summary of one database, or {"code": REFUSED | UNREADABLE, "detail": why}."""
    try:
        conn = connect(path, spec["bounds"])
        try:
            out = read_tables(conn, spec)
            if project:
                out["projection"] = projection(conn, spec)
            return out
        finally:
            conn.close()
    except Refused as exc:
        return {"code": REFUSED, "detail": str(exc)}
    except Unreadable as exc:
        return {"code": UNREADABLE, "detail": str(exc)}
    except sqlite3.DataError as exc:  # a value over the length limit
        return {"code": REFUSED, "detail": f"a value is over the bound: {exc}"}
    except (sqlite3.Error, ValueError, OverflowError, UnicodeError) as exc:
        return {"code": UNREADABLE, "detail": f"{type(exc).__name__}: {exc}"}


def main(spec: dict[str, Any]) -> None:
    """The sandboxed entry point: one JSON line with each database's summary."""
    out = {name: summarize(path, spec, name != "pristine") for name, path in spec["files"]}
    text = json.dumps(out, separators=(",", ":"))
    if len(text) > spec["bounds"]["max_summary_bytes"]:  # long partner ids or periods
        detail = f"the summary is over {spec['bounds']['max_summary_bytes']:,} bytes"
        out["remediated"] = {"code": REFUSED, "detail": detail}
        text = json.dumps(out, separators=(",", ":"))
    sys.stdout.write(text + "\n")

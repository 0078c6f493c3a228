"""The SQL sandbox narrows SQLite's limits only while an agent's query runs."""

from __future__ import annotations

import contextlib
import sqlite3

import pytest

from datagauntlet.kits.sql.sandbox import SandboxLimits, SqlRefused, SqlSandbox

CODES = (
    sqlite3.SQLITE_LIMIT_LENGTH,
    sqlite3.SQLITE_LIMIT_LIKE_PATTERN_LENGTH,
    sqlite3.SQLITE_LIMIT_COLUMN,
    sqlite3.SQLITE_LIMIT_SQL_LENGTH,
)


@pytest.mark.parametrize(
    "query",
    [
        "SELECT v FROM t",  # answered
        "DELETE FROM t",  # refused by the authorizer
        "SELECT zeroblob(100000)",  # refused by the narrowed length limit
        "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n) SELECT max(i) FROM n",
    ],
)
def test_limits_are_restored_after_each_agent_query(conn: sqlite3.Connection, query: str) -> None:
    before = {code: conn.getlimit(code) for code in CODES}
    sandbox = SqlSandbox(conn, SandboxLimits(max_seconds=0.2, max_value_length=1_000))
    with contextlib.suppress(SqlRefused):
        sandbox.query(query)
    assert {code: conn.getlimit(code) for code in CODES} == before
    # The owner's own statement is not bound by the agent's narrowed limits.
    conn.execute("INSERT INTO t VALUES (?)", ("y" * 50_000,))
    assert conn.execute("SELECT max(length(v)) FROM t").fetchone() == (50_000,)

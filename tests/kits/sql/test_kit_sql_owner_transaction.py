"""An agent's query leaves the owner's own transaction on the same connection as it was."""

from __future__ import annotations

import contextlib
import sqlite3

import pytest

from datagauntlet.kits.sql.sandbox import SandboxLimits, SqlRefused, SqlSandbox


@pytest.mark.parametrize(
    "query",
    [
        "SELECT v FROM t",  # answered
        "DELETE FROM t",  # refused by the authorizer
        "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n) SELECT max(i) FROM n",
    ],
)
def test_the_owners_uncommitted_writes_survive_an_agent_query(
    conn: sqlite3.Connection, query: str
) -> None:
    sandbox = SqlSandbox(conn, SandboxLimits(max_seconds=0.2))
    conn.execute("INSERT INTO t VALUES ('pending')")  # the owner's write, not yet committed
    assert conn.in_transaction
    with contextlib.suppress(SqlRefused):
        sandbox.query(query)
    assert conn.in_transaction
    conn.commit()
    assert sorted(v for (v,) in conn.execute("SELECT v FROM t")) == ["pending", "x"]


def test_an_agent_query_leaves_no_transaction_open(conn: sqlite3.Connection) -> None:
    sandbox = SqlSandbox(conn)
    assert sandbox.query("SELECT v FROM t").rows == [["x"]]
    assert not conn.in_transaction

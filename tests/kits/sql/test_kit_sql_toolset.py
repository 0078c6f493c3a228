"""The SQL kit as a toolset: run_sql over a borrowed or an owned connection."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from datagauntlet.core.toolset import ToolError
from datagauntlet.kits.sql import SandboxLimits, SqlToolset


def _fill(conn: sqlite3.Connection) -> None:
    conn.execute("CREATE TABLE orders(id TEXT, amount REAL)")
    conn.execute("CREATE TABLE secrets(id TEXT)")
    conn.executemany("INSERT INTO orders VALUES (?, ?)", [(f"o{i}", i) for i in range(80)])
    conn.commit()


@pytest.fixture
def conn() -> sqlite3.Connection:
    c = sqlite3.connect(":memory:", isolation_level=None)
    _fill(c)
    return c


def test_run_sql_reads_and_notes_the_tables_really_read(conn: sqlite3.Connection) -> None:
    notes: list[dict[str, object]] = []
    sql = SqlToolset(conn, SandboxLimits(max_rows=5))
    sql.attach(lambda **d: notes.append(d))
    sql.open()
    out = sql.run_sql("SELECT id /* FROM secrets */, 'secrets' FROM orders ORDER BY amount")
    assert out["columns"] == ["id", "'secrets'"] and len(out["rows"]) == 5 and out["truncated"]
    assert notes == [{"tables_read": ["orders"]}]  # names in comments or strings do not count


def test_writes_are_refused_as_tool_errors_and_change_nothing(conn: sqlite3.Connection) -> None:
    sql = SqlToolset(conn)
    sql.open()
    before = conn.serialize()
    for query in ("DELETE FROM orders", "SELECT 1; DROP TABLE orders", "PRAGMA writable_schema=1"):
        with pytest.raises(ToolError, match=r"read-only|one statement"):
            sql.run_sql(query)
    assert conn.serialize() == before


def test_the_declared_schema_follows_the_limits(conn: sqlite3.Connection) -> None:
    sql = SqlToolset(conn, SandboxLimits(max_query_chars=300), description="Query the shop.")
    (bound,) = sql.tools()
    assert bound.tool.name == "run_sql" and bound.tool.description == "Query the shop."
    assert bound.tool.parameters["properties"]["query"] == {
        "type": "string", "maxLength": 300, "description": "one SQLite SELECT statement"
    }  # fmt: skip
    assert bound.tool.parameters["required"] == ["query"]
    assert not bound.tool.mutates


def test_a_toolset_never_opened_answers_that_its_connection_is_closed(
    conn: sqlite3.Connection,
) -> None:
    with pytest.raises(ToolError) as refused:
        SqlToolset(conn).run_sql("SELECT 1")
    assert str(refused.value) == "the SQL connection is closed"


def test_an_owned_connection_answers_from_another_thread(tmp_path: Path) -> None:
    # Front doors open an episode in one thread and may serve its calls from another.
    import threading

    path = tmp_path / "shop.db"
    setup = sqlite3.connect(path)
    _fill(setup)
    setup.close()
    sql = SqlToolset(path)
    sql.open()
    answers: list[object] = []
    worker = threading.Thread(
        target=lambda: answers.append(sql.run_sql("SELECT count(*) FROM orders"))
    )
    worker.start()
    worker.join(10)
    sql.close()
    assert len(answers) == 1 and answers[0]["rows"] == [[80]]  # type: ignore[index]


def test_a_borrowed_connection_stays_open_and_writable_after_close(
    conn: sqlite3.Connection,
) -> None:
    sql = SqlToolset(conn)
    sql.open()
    sql.close()
    sql.close()
    conn.execute("INSERT INTO orders VALUES ('new', 1)")  # the authorizer is gone
    with pytest.raises(ToolError) as refused:
        sql.run_sql("SELECT 1")
    assert str(refused.value) == "the SQL connection is closed"  # the words an agent reads


def test_an_owned_file_connection_is_read_only_and_closed(tmp_path: Path) -> None:
    path = tmp_path / "shop.db"
    setup = sqlite3.connect(path)
    _fill(setup)
    setup.close()
    sql = SqlToolset(path)
    sql.open()
    assert sql.run_sql("SELECT count(*) FROM orders")["rows"] == [[80]]
    conn = sql.conn
    assert conn is not None
    conn.set_authorizer(None)  # even without the sandbox, the connection itself is read-only
    with pytest.raises(sqlite3.OperationalError, match="readonly"):
        conn.execute("DELETE FROM orders")
    sql.close()
    sql.close()
    with pytest.raises(sqlite3.ProgrammingError):
        conn.execute("SELECT 1")

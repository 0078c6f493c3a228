"""SQL sandbox rules that mutation testing showed had no test of their own (docs/mutation/):
how a refused table-valued function is named, and where a cell is cut."""

from __future__ import annotations

import sqlite3

import pytest

from datagauntlet.kits.sql.sandbox import CUT_MARK, SandboxLimits, SqlRefused, SqlSandbox


@pytest.fixture
def db() -> sqlite3.Connection:
    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE TABLE t(a TEXT, b BLOB)")
    conn.execute("INSERT INTO t VALUES ('x', x'00')")
    conn.commit()
    return conn


def _refusal(db: sqlite3.Connection, query: str) -> str:
    with pytest.raises(SqlRefused) as caught:
        SqlSandbox(db).query(query)
    return str(caught.value)


def test_the_refusal_names_the_first_call_that_is_not_an_allowed_function(
    db: sqlite3.Connection,
) -> None:
    message = _refusal(db, "SELECT count(*), upper('a') FROM json_each('[1]')")
    assert "table-valued function json_each() is not allowed" in message


def test_a_long_name_in_a_refusal_is_cut_to_sixty_characters(db: sqlite3.Connection) -> None:
    called = _refusal(
        db, f"SELECT * FROM t WHERE a = '{'g' * 70}(' OR 1 IN (SELECT value FROM json_each('[1]'))"
    )
    assert f"table-valued function {'g' * 60}() is not allowed" in called
    worded = _refusal(
        db,
        f"SELECT a, b FROM t WHERE a = 'pragma_{'w' * 70}' "
        "UNION SELECT name, file FROM pragma_database_list",
    )
    assert f"table-valued function pragma_{'w' * 53}() is not allowed" in worded


def test_a_table_valued_function_named_without_a_call_is_still_refused(
    db: sqlite3.Connection,
) -> None:
    assert "table-valued function Pragma_Database_List()" in _refusal(
        db, "SELECT * FROM Pragma_Database_List"
    )
    assert _refusal(db, "SELECT * FROM dbstat") == (
        "run_sql is read-only: a table-valued function is not allowed (SELECT only)"
    )


def test_cells_are_cut_past_the_limit_only(db: sqlite3.Connection) -> None:
    lim = SandboxLimits(max_cell_chars=6, max_blob_bytes_shown=2)
    sandbox = SqlSandbox(db, lim)
    res = sandbox.query("SELECT 'abcdef', 'abcdefg', x'0102', x'010203', 7")
    assert res.rows == [["abcdef", "abcdef" + CUT_MARK, "0x0102", "0x0102" + CUT_MARK, 7]]
    assert res.cells_cut == 2
    # a blob cut to its shown bytes and then past the character limit is counted once
    res = SqlSandbox(db, SandboxLimits(max_cell_chars=4, max_blob_bytes_shown=3)).query(
        "SELECT x'01020304'"
    )
    assert res.rows == [["0x01" + CUT_MARK]] and res.cells_cut == 1
    assert SqlSandbox(db, lim).query("SELECT 'ab'").cells_cut == 0


@pytest.mark.parametrize(
    ("query", "message"),
    [
        ("SELECT 1; SELECT 2", "one statement per call: stacked statements are refused"),
        (
            "SELECT * FROM t WHERE a LIKE 'aaaaaaaaaa'",
            "query refused: LIKE/GLOB pattern longer than 5",
        ),
        (
            "INSERT INTO t VALUES ('y', NULL)",
            "run_sql is read-only: INSERT is not allowed (SELECT only)",
        ),
        (
            "SELECT load_extension('x')",
            "run_sql: function load_extension() is not allowed; plain SELECTs over the tables only",
        ),
        (
            "SELECT * FROM json_each('[1]')",
            "run_sql: table-valued function json_each() is not allowed; plain SELECTs over the "
            "tables only",
        ),
        ("SELECT * FROM nope", "SQL error: no such table: nope"),
    ],
)
def test_each_refusal_says_why_in_one_line(
    db: sqlite3.Connection, query: str, message: str
) -> None:
    with pytest.raises(SqlRefused) as caught:
        SqlSandbox(db, SandboxLimits(max_like_pattern=5)).query(query)
    assert str(caught.value) == message

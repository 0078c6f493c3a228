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
    # the count is over every row shown, and only those (no byte bound: the one-fetch path)
    rows = "SELECT 'abcdefg', 'x' UNION ALL SELECT 'abcdefgh', 'abcdefgh'"
    assert sandbox.query(rows).cells_cut == 3
    one_row = SandboxLimits(max_cell_chars=6, max_rows=1)
    assert SqlSandbox(db, one_row).query(rows).cells_cut == 1


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


# --- rules the full mutation run found untested (docs/mutation/survivors.md) ---------------
@pytest.mark.parametrize(
    ("query", "message"),
    [
        ("  ;  ", "empty query: send one SELECT statement"),
        ("", "empty query: send one SELECT statement"),
        ("SELECT 1\x00", "query contains a NUL character"),
        ("SELECT '\ud800'", "query is not valid UTF-8 text"),
        ("(SELECT 1)", "run_sql is read-only: (nothing) is not allowed (SELECT only)"),
        ("SELECT x FROM t", "SQL error: no such column: x"),
        ("SELECT * FROM t WHERE", "SQL error: incomplete input"),
    ],
)
def test_what_is_not_one_query_is_refused_with_its_reason(
    db: sqlite3.Connection, query: str, message: str
) -> None:
    assert _refusal(db, query) == message


def test_a_query_at_the_length_bound_is_run_and_one_past_it_is_refused(
    db: sqlite3.Connection,
) -> None:
    lim = SandboxLimits(max_query_chars=40)
    at_bound = "SELECT " + "1" * 33  # 40 characters
    assert SqlSandbox(db, lim).query(at_bound).columns == ["1" * 33]
    assert SqlSandbox(db, lim).query(at_bound + "  ;  ").columns == ["1" * 33]
    with pytest.raises(SqlRefused) as caught:
        SqlSandbox(db, lim).query(at_bound + "1")
    assert str(caught.value) == "query longer than 40 characters"


def test_a_trailing_semicolon_is_dropped_and_nothing_else(db: sqlite3.Connection) -> None:
    assert SqlSandbox(db).query("SELECT 12;").rows == [[12]]
    assert SqlSandbox(db).query("SELECT 'a;' ;").rows == [["a;"]]


def test_a_long_query_within_budget_answers_and_a_runaway_one_is_stopped_by_steps(
    db: sqlite3.Connection,
) -> None:
    count = (
        "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < {}) "
        "SELECT count(*) FROM n"
    )
    # far more SQLite steps than one progress check: the check must let it go on
    assert SqlSandbox(db).query(count.format(20_000)).rows == [[20_000]]
    sandbox = SqlSandbox(db)
    assert sandbox.query(count.format(20_000)).rows == sandbox.query(count.format(20_000)).rows
    # a step budget far below the query's: stopped by steps, long before the time budget
    tight = SandboxLimits(max_steps=20_000, max_seconds=60.0)
    with pytest.raises(SqlRefused) as caught:
        SqlSandbox(db, tight).query(count.format(10**7))
    assert str(caught.value).startswith("query stopped: it went over the sandbox budget")


def test_a_query_may_use_exactly_its_step_budget_and_not_one_check_more(
    db: sqlite3.Connection,
) -> None:
    query = (
        "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 3000) "
        "SELECT count(*) FROM n"
    )
    per_check = 100
    checks = 0

    def count() -> int:
        nonlocal checks
        checks += 1
        return 0

    probe = sqlite3.connect(":memory:")  # the same SQLite counts the same steps
    probe.set_progress_handler(count, per_check)
    probe.execute(query).fetchall()
    probe.close()
    assert checks > 3
    exact = SandboxLimits(max_steps=checks * per_check, steps_per_check=per_check)
    assert SqlSandbox(db, exact).query(query).rows == [[3000]]  # the budget is not "over"
    short = SandboxLimits(max_steps=checks * per_check - 1, steps_per_check=per_check)
    with pytest.raises(SqlRefused, match="over the sandbox budget"):
        SqlSandbox(db, short).query(query)


def test_why_rows_stopped_short_is_named(db: sqlite3.Connection) -> None:
    db.executemany("INSERT INTO t VALUES (?, NULL)", [(f"r{i}",) for i in range(9)])
    db.commit()
    res = SqlSandbox(db, SandboxLimits(max_rows=3)).query("SELECT a FROM t")
    assert (len(res.rows), res.truncated, res.truncated_by) == (3, True, "rows")
    whole = SqlSandbox(db, SandboxLimits(max_rows=10)).query("SELECT a FROM t")
    assert (len(whole.rows), whole.truncated, whole.truncated_by) == (10, False, None)


def test_a_byte_bound_keeps_the_whole_rows_that_fit_it(db: sqlite3.Connection) -> None:
    db.executemany("INSERT INTO t VALUES (?, NULL)", [("abcdefghi",) for _ in range(9)])
    db.commit()
    # each row ["abcdefghi"] is 13 characters of JSON, plus one for its separator
    query = "SELECT a FROM t WHERE a = 'abcdefghi'"
    for budget, kept in ((13, 0), (14, 1), (27, 1), (28, 2), (55, 3), (56, 4)):
        res = SqlSandbox(db, SandboxLimits(max_response_bytes=budget)).query(query)
        assert res.rows == [["abcdefghi"]] * kept, budget
        assert (res.truncated, res.truncated_by) == (True, "bytes"), budget
    roomy = SqlSandbox(db, SandboxLimits(max_response_bytes=10_000)).query(query)
    assert (len(roomy.rows), roomy.truncated, roomy.truncated_by) == (9, False, None)
    capped = SqlSandbox(db, SandboxLimits(max_response_bytes=10_000, max_rows=4)).query(query)
    assert (len(capped.rows), capped.truncated_by) == (4, "rows")
    cut = SandboxLimits(max_response_bytes=10_000, max_cell_chars=3)
    res = SqlSandbox(db, cut).query(query)
    assert res.cells_cut == 9 and res.rows[0] == ["abc" + CUT_MARK]


@pytest.mark.parametrize(
    ("query", "first"),
    [
        ("SELECT 1", "select"),
        ("-- a note\nSELECT 1", "select"),
        ("-- one\n-- two\nWITH x AS (SELECT 1) SELECT * FROM x", "with"),
        ("-- a\nSELECT 1 -- b\n x", "select"),
        ("/* a */ VALUES (1)", "values"),
        ("/**/SELECT 1", "select"),
        ("/*/ DROP */ SELECT 1", "select"),
        ("/* a */ SELECT 1 /* b */", "select"),
        ("/* c */ ALTER TABLE t", "alter"),
        ("/* c */ pragma_x", "pragma_x"),
        ("/* never closed SELECT", ""),
        ("-- only a comment", ""),
    ],
)
def test_the_first_word_is_read_past_every_comment(query: str, first: str) -> None:
    from datagauntlet.kits.sql.sandbox import _first_word

    assert _first_word(query) == first


def test_a_write_behind_a_with_is_refused_by_the_statement_it_is(db: sqlite3.Connection) -> None:
    for verb in ("INSERT INTO t SELECT 'y', NULL", "DELETE FROM t", "UPDATE t SET a = 'z'"):
        message = _refusal(db, f"WITH x AS (SELECT 1) {verb}")
        assert message == f"run_sql is read-only: {verb.split()[0]} is not allowed (SELECT only)"
    assert db.execute("SELECT count(*) FROM t").fetchone() == (1,)


def test_reading_the_schema_table_is_a_read_and_tables_read_names_it(
    db: sqlite3.Connection,
) -> None:
    res = SqlSandbox(db).query("SELECT name FROM sqlite_master")
    assert res.rows == [["t"]] and res.tables_read == ("sqlite_master",)
    narrowed = SqlSandbox(db, readable=lambda table: table == "t").query("SELECT a FROM t")
    assert narrowed.tables_read == ("t",)
    with pytest.raises(SqlRefused, match="reading table sqlite_master is not allowed"):
        SqlSandbox(db, readable=lambda table: table == "t").query("SELECT * FROM sqlite_master")


def test_numbers_are_shown_as_they_are_and_never_counted_as_cut(db: sqlite3.Connection) -> None:
    res = SqlSandbox(db).query("SELECT 2.5, 1e999, -1e999, 7, NULL")
    assert res.rows == [[2.5, "inf", "-inf", 7, None]] and res.cells_cut == 0

"""The shared read-only SQL sandbox: reads work, everything hostile is refused or stopped."""

from __future__ import annotations

import sqlite3
import time

import pytest

from datagauntlet.kits.sql.sandbox import CUT_MARK, SandboxLimits, SqlRefused, SqlSandbox

ROWS = 120


@pytest.fixture
def db() -> sqlite3.Connection:
    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE TABLE wh_orders(order_id TEXT, customer_id TEXT, amount REAL)")
    conn.execute("CREATE TABLE stg_b1(order_id TEXT, customer_id TEXT, amount TEXT)")
    conn.executemany(
        "INSERT INTO wh_orders VALUES (?, ?, ?)",
        [(f"O{i}", f"C{i % 7}", i * 1.25) for i in range(ROWS)],
    )
    conn.executemany(
        "INSERT INTO stg_b1 VALUES (?, ?, ?)", [(f"O{i}", "C1", f"{i}.00") for i in range(5)]
    )
    conn.commit()
    return conn


HOSTILE = {
    "delete": "DELETE FROM wh_orders",
    "update": "UPDATE wh_orders SET amount = 0",
    "insert": "INSERT INTO wh_orders VALUES ('x', 'y', 1)",
    "insert-select": "INSERT INTO wh_orders SELECT * FROM wh_orders",
    "replace": "REPLACE INTO wh_orders VALUES ('x', 'y', 1)",
    "drop": "DROP TABLE wh_orders",
    "create": "CREATE TABLE t(x)",
    "create-temp": "CREATE TEMP TABLE t AS SELECT * FROM wh_orders",
    "create-view": "CREATE TEMP VIEW v AS SELECT 1",
    "create-trigger": "CREATE TRIGGER t AFTER INSERT ON wh_orders BEGIN DELETE FROM wh_orders; END",
    "alter": "ALTER TABLE wh_orders ADD COLUMN x TEXT",
    "stacked": "SELECT 1; DROP TABLE wh_orders",
    "stacked-comment": "SELECT 1 /* hi */; DELETE FROM wh_orders",
    "pragma": "PRAGMA writable_schema = 1",
    "pragma-function": "SELECT * FROM pragma_table_info('wh_orders')",
    "attach": "ATTACH DATABASE ':memory:' AS other",
    "detach": "DETACH DATABASE main",
    "begin": "BEGIN IMMEDIATE",
    "savepoint": "SAVEPOINT s1",
    "vacuum": "VACUUM",
    "reindex": "REINDEX",
    "analyze": "ANALYZE",
    "with-delete": "WITH x AS (SELECT 1) DELETE FROM wh_orders",
    "comment-hides-write": "/* SELECT */ DELETE FROM wh_orders",
    "endless-cte": "WITH RECURSIVE r(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM r) "
    "SELECT count(*) FROM r",
    "cross-join-blowup": "SELECT count(*) FROM wh_orders a, wh_orders b, wh_orders c, wh_orders d",
    "zeroblob": "SELECT zeroblob(1000000000)",
    "zeroblob-hidden": "SELECT length(hex(ZEROBLOB(500000000)))",
    "randomblob": "SELECT randomblob(100000000)",
    "load-extension": "SELECT load_extension('/tmp/evil.so')",
    "string-doubling": "WITH RECURSIVE r(s) AS (SELECT 'ab' UNION ALL SELECT s || s FROM r) "
    "SELECT length(s) FROM r",
    "long-like": "SELECT count(*) FROM wh_orders WHERE order_id LIKE '" + "%a" * 150 + "'",
    "thousand-columns": "SELECT " + ", ".join(f"{i} AS c{i}" for i in range(1000)),
    "huge-literal": "SELECT '" + "x" * 25_000 + "'",
    "replace-blowup": "SELECT length(replace(printf('%.10000c', 'x'), 'x', "
    "printf('%.10000c', 'y')))",
    "nul-byte": "SELECT 'a\x00b'",
    "non-utf8": "SELECT '\udcff\udcfe'",
    "empty": "   ",
    "only-comment": "-- SELECT * FROM wh_orders",
}


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_hostile_query_is_refused_and_changes_nothing(db: sqlite3.Connection, name: str) -> None:
    sandbox = SqlSandbox(db)
    before = db.serialize()
    start = time.monotonic()
    with pytest.raises(SqlRefused) as info:
        sandbox.query(HOSTILE[name])
    assert time.monotonic() - start < sandbox.limits.max_seconds + 1.0
    message = str(info.value)
    assert message and "Traceback" not in message
    assert db.serialize() == before
    # the sandbox still answers afterwards, and the owner can still write
    assert sandbox.query("SELECT count(*) FROM wh_orders").rows == [[ROWS]]
    db.execute("INSERT INTO wh_orders VALUES ('owner', 'C1', 1)")


def test_battery_is_large_enough() -> None:
    assert len(HOSTILE) >= 25


@pytest.mark.parametrize(
    ("name", "phrase"),
    [
        ("delete", "read-only"),
        ("stacked", "one statement"),
        ("endless-cte", "budget"),
        ("zeroblob", "zeroblob"),
        ("string-doubling", "20,000"),
        ("long-like", "LIKE"),
        ("thousand-columns", "64"),
        ("pragma-function", r"table-valued function pragma_table_info\(\) is not allowed"),
    ],
)
def test_refusals_say_why(db: sqlite3.Connection, name: str, phrase: str) -> None:
    with pytest.raises(SqlRefused, match=phrase):
        SqlSandbox(db).query(HOSTILE[name])


def test_wall_time_budget_stops_a_slow_query(db: sqlite3.Connection) -> None:
    sandbox = SqlSandbox(db, SandboxLimits(max_steps=10**12, max_seconds=0.2))
    start = time.monotonic()
    with pytest.raises(SqlRefused, match="budget"):
        sandbox.query(HOSTILE["endless-cte"])
    assert time.monotonic() - start < 1.0


def test_rows_are_capped_and_say_so(db: sqlite3.Connection) -> None:
    out = SqlSandbox(db).query("SELECT order_id FROM wh_orders")
    assert len(out.rows) == 50 and out.truncated
    exact = SqlSandbox(db).query("SELECT order_id FROM wh_orders LIMIT 50")
    assert len(exact.rows) == 50 and not exact.truncated


def test_endless_cte_with_limit_streams(db: sqlite3.Connection) -> None:
    out = SqlSandbox(db).query(
        "WITH RECURSIVE r(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM r) SELECT x FROM r"
    )
    assert out.truncated and out.rows[-1] == [50]


def test_cells_are_cut_with_a_mark(db: sqlite3.Connection) -> None:
    out = SqlSandbox(db).query("SELECT substr(hex(x'00') || printf('%0300d', 1), 1, 300), 'ok'")
    assert out.rows[0][0].endswith(CUT_MARK) and len(out.rows[0][0]) == 200 + len(CUT_MARK)
    assert out.rows[0][1] == "ok" and out.cells_cut == 1


def test_blobs_and_non_finite_numbers_become_text(db: sqlite3.Connection) -> None:
    out = SqlSandbox(db).query("SELECT x'00ff', 1e999, -1e999")
    assert out.rows == [["0x00ff", "inf", "-inf"]]


def test_trailing_semicolon_and_leading_comment_are_fine(db: sqlite3.Connection) -> None:
    out = SqlSandbox(db).query("  -- count\n SELECT count(*) FROM stg_b1 ;  ")
    assert out.rows == [[5]]


def test_tables_read_are_the_resolved_ones(db: sqlite3.Connection) -> None:
    sandbox = SqlSandbox(db)
    assert sandbox.query("SELECT 1 -- FROM stg_b1").tables_read == ()
    assert sandbox.query("SELECT 'stg_b1'").tables_read == ()
    assert sandbox.query("SELECT count(*) FROM stg_b1").tables_read == ("stg_b1",)
    joined = sandbox.query(
        "SELECT s.order_id FROM stg_b1 s JOIN wh_orders w ON w.order_id = s.order_id WHERE 0"
    )
    assert joined.tables_read == ("stg_b1", "wh_orders")


def test_refused_query_records_no_tables(db: sqlite3.Connection) -> None:
    sandbox = SqlSandbox(db)
    with pytest.raises(SqlRefused):
        sandbox.query("SELECT * FROM stg_b1; DELETE FROM stg_b1")
    assert sandbox.query("SELECT 1").tables_read == ()


def test_readable_filter_denies_other_tables(db: sqlite3.Connection) -> None:
    sandbox = SqlSandbox(db, readable=lambda t: t.startswith("stg_"))
    assert sandbox.query("SELECT count(*) FROM stg_b1").rows == [[5]]
    with pytest.raises(SqlRefused, match="wh_orders"):
        sandbox.query("SELECT count(*) FROM wh_orders")


def test_limits_apply_only_while_a_query_runs(db: sqlite3.Connection) -> None:
    SqlSandbox(db)
    db.execute("INSERT INTO stg_b1 VALUES (?, 'C1', '1')", ("y" * 50_000,))
    assert db.execute("SELECT max(length(order_id)) FROM stg_b1").fetchone() == (50_000,)

"""The SQL sandbox allows a listed set of functions and refuses every other one by name.

`fts3_tokenizer` returns a heap pointer, and its two-argument form registers a pointer the
caller chooses (the classic SQLite code-execution primitive): a deny list missed it. Here the
list is of what is allowed, checked against every function this SQLite build has.
"""

from __future__ import annotations

import sqlite3

import pytest

from datagauntlet.kits.sql.sandbox import ALLOWED_FUNCTIONS, SqlRefused, SqlSandbox


@pytest.fixture
def db() -> sqlite3.Connection:
    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE TABLE t(a TEXT, b REAL)")
    conn.executemany("INSERT INTO t VALUES (?, ?)", [("x", 1.5), ("y", -2.0)])
    conn.commit()
    return conn


def _functions(conn: sqlite3.Connection) -> dict[str, int]:
    """Every SQL function of this build, with an argument count it accepts."""
    out: dict[str, int] = {}
    for name, narg in conn.execute("SELECT name, narg FROM pragma_function_list"):
        out.setdefault(name.lower(), max(narg, 0) if narg >= 0 else 1)
    return out


@pytest.mark.parametrize(
    "query",
    [
        "SELECT fts3_tokenizer('simple')",
        "SELECT hex(fts3_tokenizer('simple'))",
        "SELECT fts3_tokenizer('evil', x'4141414141414141')",
        "SELECT a FROM t WHERE length(FTS3_TOKENIZER('porter')) > 0",
    ],
)
def test_fts3_tokenizer_is_refused_by_name(db: sqlite3.Connection, query: str) -> None:
    with pytest.raises(SqlRefused, match="fts3_tokenizer"):
        SqlSandbox(db).query(query)


def test_every_function_outside_the_list_is_refused_by_name(db: sqlite3.Connection) -> None:
    functions = _functions(db)
    refused = sorted(set(functions) - ALLOWED_FUNCTIONS)
    assert "fts3_tokenizer" in refused and "load_extension" in refused
    sandbox = SqlSandbox(db)
    for name in refused:
        if not name.replace("_", "").isalnum():
            continue
        args = ", ".join(["NULL"] * functions[name])
        # current_date and friends are keywords: called without parentheses
        call = name if name.startswith("current_") else f"{name}({args})"
        with pytest.raises(SqlRefused) as err:
            sandbox.query(f"SELECT {call}")
        assert f"{name}()" in str(err.value), (name, str(err.value))


def test_listed_functions_work(db: sqlite3.Connection) -> None:
    result = SqlSandbox(db).query(
        "SELECT upper(a), round(b, 0), coalesce(NULL, a), count(*) OVER (), "
        "printf('%.2f', abs(b)), json_extract('{\"k\": 3}', '$.k'), date('2024-01-31', '+1 day') "
        "FROM t ORDER BY a"
    )
    assert result.rows[0] == ["X", 2.0, "x", 2, "1.50", 3, "2024-02-01"]


def test_the_list_names_only_functions_this_build_has_or_may_have() -> None:
    # a typo in the list would silently allow nothing; every entry is a known SQLite function
    conn = sqlite3.connect(":memory:")
    missing = ALLOWED_FUNCTIONS - set(_functions(conn))
    assert missing <= {"unhex", "octet_length", "concat", "concat_ws", "timediff"}, missing


@pytest.mark.parametrize(
    ("query", "name"),
    [
        ("SELECT * FROM pragma_table_info('t')", "pragma_table_info"),
        ("SELECT name FROM pragma_function_list", "pragma_function_list"),
        ("SELECT * FROM t, pragma_index_list('t')", "pragma_index_list"),
        ("SELECT * FROM PRAGMA_DATABASE_LIST", "pragma_database_list"),
        ("SELECT * FROM json_each('[1, 2]')", "json_each"),
    ],
)
def test_table_valued_functions_are_refused_by_name(
    db: sqlite3.Connection, query: str, name: str
) -> None:
    with pytest.raises(SqlRefused) as err:
        SqlSandbox(db).query(query)
    message = str(err.value)
    assert name in message.lower() and "UPDATE" not in message


def test_connection_state_does_not_leak(db: sqlite3.Connection) -> None:
    # how many rows the owner inserted is not the agent's to read
    for query in ("SELECT last_insert_rowid()", "SELECT changes()", "SELECT total_changes()"):
        with pytest.raises(SqlRefused, match=r"\(\) is not allowed"):
            SqlSandbox(db).query(query)

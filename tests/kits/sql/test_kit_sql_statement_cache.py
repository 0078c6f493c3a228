"""sqlite3 caches prepared statements by their text, and SQLite asks the authorizer only when
a statement is prepared: every agent query must be prepared under the sandbox's authorizer,
even when the same text ran before (the agent's own repeat, or the owner's statement on a
borrowed connection)."""

from __future__ import annotations

import sqlite3

import pytest

from datagauntlet.core.toolset import ToolError
from datagauntlet.kits.sql import SqlToolset


@pytest.fixture
def conn() -> sqlite3.Connection:
    c = sqlite3.connect(":memory:", isolation_level=None)
    c.execute("CREATE TABLE orders(id TEXT, amount REAL)")
    c.execute("CREATE TABLE secrets(id TEXT)")
    c.executemany("INSERT INTO orders VALUES (?, ?)", [(f"o{i}", i) for i in range(5)])
    c.execute("INSERT INTO secrets VALUES ('s1')")
    return c


def test_a_repeated_query_notes_its_tables_every_time(conn: sqlite3.Connection) -> None:
    notes: list[dict[str, object]] = []
    sql = SqlToolset(conn)
    sql.attach(lambda **d: notes.append(d))
    sql.open()
    for _ in range(3):
        sql.run_sql("SELECT COUNT(*) FROM orders")
    assert notes == [{"tables_read": ["orders"]}] * 3


def test_an_owner_statement_replayed_by_the_agent_still_meets_the_authorizer(
    conn: sqlite3.Connection,
) -> None:
    sql = SqlToolset(conn, readable=lambda table: table != "secrets")
    sql.open()
    query = "SELECT id FROM secrets"
    assert conn.execute(query).fetchall() == [("s1",)]  # the owner's own read, now cached
    with pytest.raises(ToolError, match="reading table secrets"):
        sql.run_sql(query)
    assert conn.execute(query).fetchall() == [("s1",)]  # the owner is free again afterwards


@pytest.mark.parametrize(
    ("query", "word"),
    [
        ("SELECT 1", "select"),
        ("with x as (select 1) select * from x", "with"),
        ("Sel\u00e9ct 1", "sel\u00e9ct"),  # a non-ASCII letter is part of the word
        ("SELECT_x FROM t", "select_x"),
        ("  -- note\n/* block */ values (1)", "values"),
        ("1select", ""),
        ("\u00f1select", "\u00f1select"),
        ("", ""),
    ],
)
def test_the_first_keyword_is_read_past_comments_and_whole_words(query: str, word: str) -> None:
    from datagauntlet.kits.sql.sandbox import _first_word

    assert _first_word(query) == word

"""Function output is bounded before it is built (issue 23, point 8).

SQLite's length limit refuses a value too long only after building it, and printf's `%.*c`
loops over its precision even after the limit refused the text: one call, one VM step, out of
the progress handler's reach. Each hostile query here must be refused with a clear message in
bounded CPU time (not wall time: it holds under load), leaving the database as it was; honest
printf formats still give SQLite's own text.
"""

from __future__ import annotations

import sqlite3
import time

import pytest

from datagauntlet.core.toolset import ToolError
from datagauntlet.kits.sql import SandboxLimits, SqlToolset
from datagauntlet.kits.sql.sandbox import SqlRefused, SqlSandbox

CPU_S = 0.25  # one refused query, in CPU seconds (the unguarded printf took 0.6 to 14 s)
DOUBLING = "WITH RECURSIVE r(s) AS (SELECT 'x' UNION ALL SELECT s || s FROM r) SELECT s FROM r"
ROWS = "WITH RECURSIVE r(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM r WHERE i < 100000) "
HOSTILE = [
    ("SELECT printf('%.*c', 1e8, 'x')", "printf width or precision of 100,000,000"),
    ("SELECT format('%.*c', 2147483647, 'x')", "printf width or precision of 2,147,483,647"),
    ("SELECT printf('%.*c', '100000000', 'x')", "printf width or precision of 100,000,000"),
    ("SELECT printf('%*.*c', 3, -2147483647, v) FROM t", "printf width or precision"),
    ("SELECT printf('%.1000000000c', 'x')", "printf width or precision of 1,000,000,000"),
    ("SELECT printf('%0100000000d', 1)", "printf width or precision of 100,000,000"),
    ("SELECT printf('%s%s', printf('%.*c', {half}, 'x'), printf('%.*c', {half}, 'y'))",
     "printf's text would exceed"),
    ("SELECT replace(printf('%.*c', {half}, 'x'), 'x', 'xxx')", "a value would exceed"),
    (DOUBLING, "a value would exceed"),
    (ROWS + "SELECT group_concat(printf('%.*c', 100, 'x')) FROM r", "a value would exceed"),
    ("SELECT zeroblob(1000000000)", "function zeroblob() is not allowed"),
    ("SELECT randomblob(1000000000)", "function randomblob() is not allowed"),
    ("SELECT json_patch('{{}}', '{{}}')", "function json_patch() is not allowed"),
]  # fmt: skip
# max_value_length: the kit's default and event-recon's (its sql_response_bytes).
LENGTHS = (SandboxLimits().max_value_length, 1_000_000)


def _dump(conn: sqlite3.Connection) -> list[str]:
    return list(conn.iterdump())


@pytest.mark.parametrize("length", LENGTHS)
@pytest.mark.parametrize(("query", "words"), HOSTILE)
def test_a_hostile_function_call_is_refused_clearly_in_bounded_cpu(
    conn: sqlite3.Connection, length: int, query: str, words: str
) -> None:
    before = _dump(conn)
    sandbox = SqlSandbox(conn, SandboxLimits(max_value_length=length))
    cpu = time.process_time()
    with pytest.raises(SqlRefused) as refused:
        sandbox.query(query.format(half=length // 2 + 1))
    spent = time.process_time() - cpu
    assert words in str(refused.value) and "\n" not in str(refused.value)
    assert spent < CPU_S, (query, spent)
    assert _dump(conn) == before
    sandbox.close()


FORMATS = [
    ("%d|%5d|%-5d|%05d|%+d|% d|%,d", (42, 42, 42, 42, 42, 42, 1234567)),
    ("%.2f|%10.3e|%g|%G|%!.3f|%.0f", (3.14159, 31415.9, 0.0001, 1e20, 2.5, 2.5)),
    ("%s|%.2s|%10s|%-10s|%q|%Q|%w", ("abc", "abc", "abc", "abc", "it's", "it's", 'a"b')),
    ("%c|%.3c|%5c|%x|%X|%o|%#x|%lld|%%", ("z", "z", "z", 255, 255, 8, 255, 2**40)),
    ("%*d|%-*d|%.*f|%*.*s|%.*c", (6, 7, -6, 7, 2, 3.14159, 8, 2, "abcdef", 3, "q")),
    ("%.*c|%.4294967301c|%*c", (2**32 + 3, "w", -4, "v")),  # SQLite's 32-bit truncation
    ("%d %s %d", (5,)),  # missing arguments read as 0 and ''
    ("%n|%r|%z|%y after an unknown conversion", (3, "z", 9)),
    ("%s", (b"blob",)),
    ("%s %d", (None, "12abc")),
]


@pytest.mark.parametrize(("fmt", "args"), FORMATS)
def test_honest_formats_give_sqlites_own_text(
    conn: sqlite3.Connection, fmt: str, args: tuple[object, ...]
) -> None:
    marks = ", ".join("?" * (1 + len(args)))
    plain = sqlite3.connect(":memory:")  # SQLite's own printf, unguarded
    (expected,) = plain.execute(f"SELECT printf({marks})", (fmt, *args)).fetchone()
    sandbox = SqlSandbox(conn)
    literal = ", ".join(_sql_literal(v) for v in (fmt, *args))
    for name in ("printf", "format"):
        assert sandbox.query(f"SELECT {name}({literal})").rows == [[expected]], name
    sandbox.close()


def _sql_literal(value: object) -> str:
    if value is None:
        return "NULL"
    if isinstance(value, bytes):
        return "x'" + value.hex() + "'"
    if isinstance(value, str):
        return "'" + value.replace("'", "''") + "'"
    return repr(value)


def test_the_owners_own_printf_is_not_bounded(conn: sqlite3.Connection) -> None:
    # the guard bounds agent queries only: the env's own SQL on a borrowed connection is free
    sandbox = SqlSandbox(conn)
    with pytest.raises(SqlRefused):
        sandbox.query("SELECT printf('%.*c', 30000, 'x')")
    (n,) = conn.execute("SELECT length(printf('%.*c', 30000, 'x'))").fetchone()
    assert n == 30000
    assert sandbox.query("SELECT length(printf('%.*c', 19999, 'x'))").rows == [[19999]]
    sandbox.close()


def test_run_sql_answers_a_hostile_printf_with_a_tool_error(tmp_path) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "db.sqlite"
    with sqlite3.connect(path) as c:
        c.execute("CREATE TABLE t (v TEXT)")
        c.execute("INSERT INTO t VALUES ('x')")
    before = path.read_bytes()
    ts = SqlToolset(path, SandboxLimits(max_value_length=1_000_000, max_seconds=2.0))
    ts.open()
    try:
        cpu = time.process_time()
        with pytest.raises(ToolError, match="printf width or precision"):
            ts.run_sql("SELECT printf('%.*c', 1e8, v) FROM t")
        assert time.process_time() - cpu < CPU_S
        assert ts.run_sql("SELECT printf('%5s', v) FROM t")["rows"] == [["    x"]]
    finally:
        ts.close()
    assert path.read_bytes() == before

"""instr, replace and two-argument trims cost time linear in their input.

SQLite's own versions compare the needle, or each character of the trim set, at every position
of the haystack, in one VM step the progress handler cannot stop: under event-recon's 1 MB value
limit one `trim` took 41 s of CPU against a 10 s budget. Each hostile call here must answer
(rightly) in bounded CPU time, and on every ordinary argument the guarded functions must give
exactly what SQLite's give.
"""

from __future__ import annotations

import itertools
import sqlite3
import time

import pytest

from datagauntlet.kits.sql import SandboxLimits
from datagauntlet.kits.sql.sandbox import SqlRefused, SqlSandbox

CPU_S = 0.5  # one hostile call, in CPU seconds (unguarded: 6 s to 41 s, and hours at 1 MB)
ER_LIMITS = SandboxLimits(max_value_length=1_000_000, max_seconds=10.0, max_steps=10**12)
A = "printf('%.*c', 900000, 'a')"
HOSTILE = [
    (f"SELECT length(trim({A}, printf('%.*c', 9000, 'b') || 'a'))", 0),
    (f"SELECT length(ltrim({A}, printf('%.*c', 90000, 'b') || 'a'))", 0),
    (f"SELECT length(rtrim({A}, printf('%.*c', 90000, 'b') || 'a'))", 0),
    (f"SELECT instr({A}, printf('%.*c', 450000, 'a') || 'b')", 0),
    (f"SELECT instr({A}, printf('%.*c', 450000, 'a'))", 1),
    (f"SELECT instr(CAST({A} AS BLOB), CAST(printf('%.*c', 450000, 'a') || 'b' AS BLOB))", 0),
    (f"SELECT length(replace({A}, printf('%.*c', 450000, 'a') || 'b', 'x'))", 900_000),
    (f"SELECT length(replace({A}, printf('%.*c', 450000, 'a'), 'x'))", 2),
]


@pytest.mark.parametrize(("query", "answer"), HOSTILE)
def test_a_quadratic_text_call_answers_in_bounded_cpu(
    conn: sqlite3.Connection, query: str, answer: int
) -> None:
    sandbox = SqlSandbox(conn, ER_LIMITS)
    cpu = time.process_time()
    result = sandbox.query(query)
    spent = time.process_time() - cpu
    assert result.rows == [[answer]]
    assert spent < CPU_S, (query, spent)
    sandbox.close()


def test_a_replace_past_the_value_limit_is_refused_before_it_is_built(
    conn: sqlite3.Connection,
) -> None:
    sandbox = SqlSandbox(conn, ER_LIMITS)
    with pytest.raises(SqlRefused, match="a value would exceed 1,000,000 bytes"):
        sandbox.query(f"SELECT replace({A}, 'a', 'aa')")
    sandbox.close()


VALUES = [
    None, "", "abc", "  padded  ", "xxabcxx", "héllo wörld", "日本語テキスト日本", "a\x00b\x00c",
    "\x00lead", 0, 12, -3.5, 1e20, 2.0, b"", b"abc", b"\x00\x01ab", b"xxabxx",
]  # fmt: skip
PATTERNS = [None, "", "x", "ab", "b", "ö", "日本", "\x00", "\x00b", "a\x00", 1, 2.0, b"ab", b"\x00"]


def _pairs() -> list[tuple[object, object]]:
    return list(itertools.product(VALUES, PATTERNS))


def _both(conn: sqlite3.Connection, sql: str, args: tuple[object, ...]) -> tuple[object, object]:
    """The same literal query on a plain connection (SQLite's own functions) and the sandbox."""
    text = sql.format(*map(_literal, args))
    plain = sqlite3.connect(":memory:")
    try:
        (want,) = plain.execute(text).fetchone()
    finally:
        plain.close()
    sandbox = SqlSandbox(conn)
    try:
        got = sandbox.query(text).rows[0][0]
    finally:
        sandbox.close()
    return want, got


def _literal(value: object) -> str:
    if value is None:
        return "NULL"
    if isinstance(value, bytes):
        return f"x'{value.hex()}'"
    if isinstance(value, str):
        if "\x00" in value:  # a literal cannot hold NUL: build it with char()
            parts = [f"'{p}'" if p else "''" for p in value.split("\x00")]
            return "(" + " || char(0) || ".join(parts) + ")"
        return "'" + value.replace("'", "''") + "'"
    return repr(value)


@pytest.mark.parametrize("name", ["instr", "trim", "ltrim", "rtrim"])
def test_the_two_argument_forms_give_sqlites_own_answers(
    conn: sqlite3.Connection, name: str
) -> None:
    wrong = []
    for value, pattern in _pairs():
        want, got = _both(conn, f"SELECT quote({name}({{}}, {{}}))", (value, pattern))
        if want != got:
            wrong.append((value, pattern, want, got))
    assert not wrong


def test_replace_gives_sqlites_own_answers(conn: sqlite3.Connection) -> None:
    wrong = []
    for (value, pattern), put in itertools.product(_pairs(), [None, "", "Z", "éé", 7, b"q"]):
        want, got = _both(conn, "SELECT quote(replace({}, {}, {}))", (value, pattern, put))
        if want != got:
            wrong.append((value, pattern, put, want, got))
    assert not wrong

"""A read-only SQL sandbox over a SQLite connection, for agent-written queries.

What an agent's query can do is bounded on every axis an untrusted query can abuse:
- an authorizer allows reads only (SELECT, READ, FUNCTION, RECURSIVE); every write, PRAGMA,
  ATTACH, transaction or schema change is denied, and a function runs only if it is in
  ALLOWED_FUNCTIONS (plain scalar, aggregate, window, date, math and JSON functions): every
  other one, a build's extras included (fts3_tokenizer, load_extension, zeroblob), is refused
  by name, and so are table-valued functions (pragma_*, json_each);
- a progress handler stops the query after a budget of VM steps or wall time;
- SQLite's own limits cap the length of any value, LIKE patterns and result columns while the
  query runs (they are restored afterwards, so the env's loader is not bound by them), and
  printf/format widths are bounded by the same length before any text is built
  (printf_guard.py), and instr, replace and two-argument trims run in linear time
  (text_guard.py);
- one statement per call; at most `max_rows` rows come back, long cells are cut, and the
  result says when either happened.
It records which tables SQLite really resolved the query against (not names in comments or
strings), so graders can tell whether an agent looked at a table before acting on it.
"""

from __future__ import annotations

import json
import math
import re
import sqlite3
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from datagauntlet.kits.sql.printf_guard import PrintfGuard
from datagauntlet.kits.sql.text_guard import TextGuard

CUT_MARK = "...[truncated]"
# Functions an agent's query may call. Anything else is refused by name: functions that hand
# out pointers or load code (fts3_tokenizer, load_extension), allocate at will (zeroblob,
# randomblob), read the connection's state (last_insert_rowid, changes: the owner's loads),
# break determinism (random) or expose the build (sqlite_compileoption_get), and json_patch,
# whose merge costs members x members in one VM step (two 40,000-member objects: 16 s of CPU)
# and whose JSON result a stand-in could not hand back as JSON.
ALLOWED_FUNCTIONS = frozenset(
    {
        # scalar
        "abs", "char", "coalesce", "format", "glob", "hex", "ifnull", "iif", "instr", "length",
        "like", "likelihood", "likely", "lower", "ltrim", "max", "min", "nullif", "printf",
        "quote", "replace", "round", "rtrim", "sign", "soundex", "substr", "substring", "trim",
        "typeof", "unicode", "unlikely", "upper", "unhex", "octet_length", "concat",
        "concat_ws",
        # aggregate
        "avg", "count", "group_concat", "sum", "total",
        # window
        "cume_dist", "dense_rank", "first_value", "lag", "last_value", "lead", "nth_value",
        "ntile", "percent_rank", "rank", "row_number",
        # date and time
        "date", "datetime", "julianday", "strftime", "time", "unixepoch", "timediff",
        # math
        "acos", "acosh", "asin", "asinh", "atan", "atan2", "atanh", "ceil", "ceiling", "cos",
        "cosh", "degrees", "exp", "floor", "ln", "log", "log10", "log2", "mod", "pi", "pow",
        "power", "radians", "sin", "sinh", "sqrt", "tan", "tanh", "trunc",
        # JSON (scalar and aggregate; the table-valued json_each/json_tree are not functions)
        "json", "json_array", "json_array_length", "json_extract", "json_group_array",
        "json_group_object", "json_insert", "json_object", "json_quote",
        "json_remove", "json_replace", "json_set", "json_type", "json_valid", "->", "->>",
    }
)  # fmt: skip
# Where a query names a table-valued function, SQLite first asks to UPDATE the schema table
# (building the virtual table); the refusal names the function it found in the query.
_SCHEMA_TABLES = frozenset({"sqlite_master", "sqlite_schema", "sqlite_temp_master"})
_CALL = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)\s*\(")
_ALLOWED_ACTIONS = frozenset(
    {sqlite3.SQLITE_SELECT, sqlite3.SQLITE_READ, sqlite3.SQLITE_FUNCTION, sqlite3.SQLITE_RECURSIVE}
)
# Authorizer action codes (their names in sqlite3 collide with result codes, so list them).
_ACTIONS = (
    "CREATE_INDEX", "CREATE_TABLE", "CREATE_TEMP_INDEX", "CREATE_TEMP_TABLE",
    "CREATE_TEMP_TRIGGER", "CREATE_TEMP_VIEW", "CREATE_TRIGGER", "CREATE_VIEW", "DELETE",
    "DROP_INDEX", "DROP_TABLE", "DROP_TEMP_INDEX", "DROP_TEMP_TABLE", "DROP_TEMP_TRIGGER",
    "DROP_TEMP_VIEW", "DROP_TRIGGER", "DROP_VIEW", "INSERT", "PRAGMA", "READ", "SELECT",
    "TRANSACTION", "UPDATE", "ATTACH", "DETACH", "ALTER_TABLE", "REINDEX", "ANALYZE",
    "CREATE_VTABLE", "DROP_VTABLE", "FUNCTION", "SAVEPOINT", "RECURSIVE",
)  # fmt: skip
_ACTION_NAMES = {code: name for code, name in enumerate(_ACTIONS, start=1)}
_READ_STARTS = ("select", "with", "values")
_OK, _READ = sqlite3.SQLITE_OK, sqlite3.SQLITE_READ


@dataclass(frozen=True)
class SandboxLimits:
    max_rows: int = 50
    max_cell_chars: int = 200
    max_blob_bytes_shown: int = 100
    max_steps: int = 2_000_000
    max_seconds: float = 2.0
    steps_per_check: int = 1_000
    max_value_length: int = 20_000
    max_like_pattern: int = 200
    max_columns: int = 64
    max_query_chars: int = 20_000
    # Bytes of JSON the rows may take (None: no bound). Rows are fetched one at a time, so a
    # query asking for huge cells stops at the bound instead of being built in memory first.
    max_response_bytes: int | None = None


class SqlRefused(Exception):
    """The query was refused or stopped; the message says why. Nothing was changed."""


@dataclass(slots=True)  # not frozen: a frozen dataclass costs more to build than a query
class QueryResult:
    columns: list[str]
    rows: list[list[Any]]
    truncated: bool
    cells_cut: int = 0
    tables_read: tuple[str, ...] = field(default_factory=tuple)
    # Why rows stopped short: "rows" (max_rows) or "bytes" (max_response_bytes); None if not.
    truncated_by: str | None = None

    def as_dict(self) -> dict[str, Any]:
        """The shape agents see: columns, rows and whether rows were cut off."""
        return {"columns": self.columns, "rows": self.rows, "truncated": self.truncated}


_LIMITS = (
    ("max_value_length", sqlite3.SQLITE_LIMIT_LENGTH),
    ("max_like_pattern", sqlite3.SQLITE_LIMIT_LIKE_PATTERN_LENGTH),
    ("max_columns", sqlite3.SQLITE_LIMIT_COLUMN),
    ("max_query_chars", sqlite3.SQLITE_LIMIT_SQL_LENGTH),
)


class SqlSandbox:
    """Runs agent SQL on `conn`, read-only. The authorizer is installed once and is active
    only while `query` runs, so the owner's own statements on the same connection are free.

    `readable(table)` may narrow which tables a query may read (default: all).
    """

    def __init__(
        self,
        conn: sqlite3.Connection,
        limits: SandboxLimits | None = None,
        readable: Callable[[str], bool] | None = None,
    ) -> None:
        self.conn = conn
        self.limits = limits or SandboxLimits()
        self._limit_values = [(code, getattr(self.limits, name)) for name, code in _LIMITS]
        self._readable = readable
        self._active = False
        self._tables: set[str] = set()
        self._denied: str | None = None
        self._text = ""
        self._steps = 0
        self._deadline = 0.0
        self._printf = PrintfGuard()  # printf/format widths bounded before the text is built
        self._printf.install(conn)
        self._searches = TextGuard()  # instr/replace/trim in linear time, one VM step each
        self._searches.install(conn)
        conn.set_authorizer(self._authorize)

    def close(self) -> None:
        self._printf.close()
        self._searches.close()

    # --- callbacks ---------------------------------------------------------------------------
    def _authorize(
        self, action: int, arg1: str | None, arg2: str | None, _db: str | None, _src: str | None
    ) -> int:
        if not self._active:
            return _OK
        if action == _READ and arg1 and self._readable is None:  # the usual call: one column
            self._tables.add(arg1)
            return _OK
        if action == sqlite3.SQLITE_UPDATE and (arg1 or "").lower() in _SCHEMA_TABLES:
            self._denied = self._denied or self._table_function()
            return sqlite3.SQLITE_DENY
        if action not in _ALLOWED_ACTIONS:
            self._denied = self._denied or _ACTION_NAMES.get(action, str(action))
            return sqlite3.SQLITE_DENY
        if action == sqlite3.SQLITE_FUNCTION and (arg2 or "").lower() not in ALLOWED_FUNCTIONS:
            self._denied = self._denied or f"function {(arg2 or '')[:60]}()"
            return sqlite3.SQLITE_DENY
        if action == sqlite3.SQLITE_READ and arg1:
            if self._readable is not None and not self._readable(arg1):
                self._denied = self._denied or f"reading table {arg1}"
                return sqlite3.SQLITE_DENY
            self._tables.add(arg1)
        return sqlite3.SQLITE_OK

    def _table_function(self) -> str:
        """The table-valued function a query names: the first call that is not an allowed
        function (the refusal is already decided; this only names it)."""
        for match in _CALL.finditer(self._text):
            name = match.group(1)
            if name.lower() not in ALLOWED_FUNCTIONS:
                return f"table-valued function {name[:60]}()"
        for word in re.findall(r"\bpragma_[A-Za-z0-9_]+|\bjson_(?:each|tree)\b", self._text, re.I):
            return f"table-valued function {word[:60]}()"
        return "a table-valued function"

    def _progress(self) -> int:
        self._steps += self.limits.steps_per_check
        if self._steps > self.limits.max_steps or time.monotonic() > self._deadline:
            return 1
        return 0

    # --- the query -----------------------------------------------------------------------------
    def _budget_message(self) -> str:
        lim = self.limits
        return (
            f"query stopped: it went over the sandbox budget ({lim.max_steps:,} SQLite steps or "
            f"{lim.max_seconds:g} s); add a LIMIT or a tighter WHERE"
        )

    def clean_query(self, query: str) -> str:
        text = query.strip()
        if text.endswith(";"):
            text = text[:-1].rstrip()
        if not text:
            raise SqlRefused("empty query: send one SELECT statement")
        if len(text) > self.limits.max_query_chars:
            raise SqlRefused(f"query longer than {self.limits.max_query_chars} characters")
        if "\x00" in text:
            raise SqlRefused("query contains a NUL character")
        if not text.isascii():  # only a lone surrogate fails to encode
            try:
                text.encode("utf-8")
            except UnicodeEncodeError:
                raise SqlRefused("query is not valid UTF-8 text") from None
        first = _first_word(text)
        if first not in _READ_STARTS:
            shown = first.upper() or "(nothing)"
            raise SqlRefused(f"run_sql is read-only: {shown} is not allowed (SELECT only)")
        return text

    def query(self, query: str) -> QueryResult:
        """Run one read-only statement; raise SqlRefused (with a clear reason) otherwise."""
        text = self.clean_query(query)
        lim = self.limits
        conn = self.conn
        setlimit = conn.setlimit
        saved = [(code, setlimit(code, value)) for code, value in self._limit_values]
        owners = conn.in_transaction  # the owner's own uncommitted writes are not ours to undo
        self._tables = set()
        self._denied = None
        self._text = text
        self._steps = 0
        self._deadline = time.monotonic() + lim.max_seconds
        conn.set_progress_handler(self._progress, lim.steps_per_check)
        # SQLite asks the authorizer only while preparing, and sqlite3 reuses a prepared
        # statement for the same text: installing the authorizer again expires every cached
        # statement, so this query is prepared (and checked, and its tables noted) afresh.
        conn.set_authorizer(self._authorize)
        self._printf.activate(lim.max_value_length)
        self._searches.activate(lim.max_value_length)
        self._active = True
        cursor = conn.cursor()
        try:
            cursor.execute(text)
            if cursor.description is None:
                raise SqlRefused("not a query: run_sql runs one SELECT statement")
            columns = [d[0] for d in cursor.description]
            rows, cut, truncated_by = self._fetch(cursor)
        except SqlRefused:
            raise
        except sqlite3.ProgrammingError as exc:
            raise SqlRefused(self._explain(exc)) from None
        except sqlite3.Error as exc:
            raise SqlRefused(self._explain(exc)) from None
        except (OverflowError, MemoryError, UnicodeError, ValueError) as exc:
            raise SqlRefused(f"query failed: {type(exc).__name__}: {exc}") from None
        finally:
            self._active = False
            self._printf.activate(None)
            self._searches.activate(None)
            cursor.close()
            conn.set_progress_handler(None, 0)
            for code, old in saved:
                setlimit(code, old)
            if conn.in_transaction and not owners:  # reads never open one; leave none open
                conn.rollback()
        return QueryResult(
            columns, rows, truncated_by is not None, cut, tuple(sorted(self._tables)), truncated_by
        )

    def _fetch(self, cursor: sqlite3.Cursor) -> tuple[list[list[Any]], int, str | None]:
        """Rows up to the row and byte bounds, cells shown as agents see them."""
        lim = self.limits
        budget = lim.max_response_bytes
        if budget is None:  # no byte bound: one fetch of the rows shown plus one to tell
            raws = cursor.fetchmany(lim.max_rows + 1)
            cut = 0
            rows = []
            for raw in raws[: lim.max_rows]:
                row, row_cut = self._row(raw)
                cut += row_cut
                rows.append(row)
            return rows, cut, "rows" if len(raws) > lim.max_rows else None
        used = 0
        cut = 0
        rows = []
        while True:
            raw = cursor.fetchone()
            if raw is None:
                return rows, cut, None
            if len(rows) >= lim.max_rows:
                return rows, cut, "rows"
            row, row_cut = self._row(raw)
            cut += row_cut
            used += len(json.dumps(row, default=str)) + 1
            if used > budget:
                return rows, cut, "bytes"
            rows.append(row)

    def _row(self, raw: tuple[Any, ...]) -> tuple[list[Any], int]:
        """A row as agents see it, and how many of its cells were cut."""
        limit = self.limits.max_cell_chars
        row = []
        cut = 0
        for value in raw:
            kind = type(value)
            if kind is int or value is None or (kind is str and len(value) <= limit):
                row.append(value)  # shown as is: the usual cell
                continue
            shown, was_cut = self._cell(value)
            cut += was_cut
            row.append(shown)
        return row, cut

    def _explain(self, exc: Exception) -> str:
        text = str(exc)
        low = text.lower()
        if "one statement at a time" in low:
            return "one statement per call: stacked statements are refused"
        # Only the authorizer refuses (SQLite words it "not authorized" or "vtable constructor
        # failed"), and it names what it refused as it does: the name, not the wording, decides.
        what = self._denied
        if what is not None:
            if what.startswith(("function ", "table-valued ")):
                return f"run_sql: {what} is not allowed; plain SELECTs over the tables only"
            return f"run_sql is read-only: {what} is not allowed (SELECT only)"
        for guard in (self._printf, self._searches):
            if guard.refused is not None:
                return f"query refused: {guard.refused}"
        if "interrupted" in low:
            return self._budget_message()
        if "too big" in low:
            return f"query refused: a value would exceed {self.limits.max_value_length:,} bytes"
        if "too many columns" in low:
            return f"query refused: more than {self.limits.max_columns} result columns"
        if "pattern too complex" in low:
            return f"query refused: LIKE/GLOB pattern longer than {self.limits.max_like_pattern}"
        return f"SQL error: {text}"

    def _cell(self, value: Any) -> tuple[Any, int]:
        lim = self.limits
        if isinstance(value, bytes):
            shown = "0x" + value[: lim.max_blob_bytes_shown].hex()
            return self._cut(shown, len(value) > lim.max_blob_bytes_shown)
        if isinstance(value, float) and not math.isfinite(value):
            return str(value), 0
        if isinstance(value, str):
            return self._cut(value, False)
        return value, 0

    def _cut(self, text: str, already_cut: bool) -> tuple[str, int]:
        limit = self.limits.max_cell_chars
        if len(text) > limit:
            return text[:limit] + CUT_MARK, 1
        return (text + CUT_MARK, 1) if already_cut else (text, 0)


_ASCII_WORD = re.compile(r"[A-Za-z_]+")


def _first_word(sql: str) -> str:
    """The first keyword after any comments, lower-cased."""
    plain = _ASCII_WORD.match(sql)  # the usual query: a keyword first, in one C call
    if plain is not None:
        end = plain.end()
        if end == len(sql) or not sql[end].isalpha():  # else a non-ASCII letter goes on
            return plain.group().lower()
    i, n = 0, len(sql)
    while i < n:
        if sql[i].isspace():
            i += 1
        elif sql.startswith("--", i):
            end = sql.find("\n", i)
            i = n if end < 0 else end + 1
        elif sql.startswith("/*", i):
            end = sql.find("*/", i + 2)
            i = n if end < 0 else end + 2
        else:
            break
    j = i
    while j < n and (sql[j].isalpha() or sql[j] == "_"):
        j += 1
    return sql[i:j].lower()

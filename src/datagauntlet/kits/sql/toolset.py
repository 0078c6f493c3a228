"""`SqlToolset`: the `run_sql` tool, one read-only query per call through `SqlSandbox`.

Each executed query notes `tables_read` on its log entry: the tables SQLite really resolved it
against, so a grader can tell whether an agent looked at a table before acting on it (names
in comments or string literals do not count).

The toolset either borrows a connection its env also writes through (the env closes it) or
opens its own read-only connection to a database file (and closes it).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

from datagauntlet.core.toolset import ToolError, Toolset, params, tool
from datagauntlet.kits.sql.sandbox import QueryResult, SandboxLimits, SqlRefused, SqlSandbox

DEFAULT_DESCRIPTION = "Run one read-only SQLite SELECT. Returns {columns, rows, truncated}."


def query_schema(toolset: SqlToolset) -> dict[str, Any]:
    return params(
        {
            "query": {
                "type": "string",
                "maxLength": toolset.limits.max_query_chars,
                "description": "one SQLite SELECT statement",
            }
        }
    )


class SqlToolset(Toolset):
    """Read-only SQL over `source`: a live connection (borrowed) or a database file (owned).

    `readable(table)` may narrow which tables a query may read; `description` is what agents
    are told the tool reaches (name the tables there).
    """

    def __init__(
        self,
        source: sqlite3.Connection | str | Path,
        limits: SandboxLimits | None = None,
        readable: Callable[[str], bool] | None = None,
        description: str = DEFAULT_DESCRIPTION,
    ) -> None:
        self.source = source
        self.limits = limits or SandboxLimits()
        self.readable = readable
        self.description = description
        self.conn: sqlite3.Connection | None = None
        self.sandbox: SqlSandbox | None = None

    @property
    def owns_connection(self) -> bool:
        return not isinstance(self.source, sqlite3.Connection)

    def open(self) -> None:
        if self.conn is not None:
            return
        if isinstance(self.source, sqlite3.Connection):
            conn = self.source
        else:
            uri = Path(self.source).resolve().as_uri() + "?mode=ro"
            conn = sqlite3.connect(uri, uri=True, isolation_level=None, check_same_thread=False)
        self.conn = conn
        self.sandbox = SqlSandbox(conn, self.limits, self.readable)

    def close(self) -> None:
        conn, self.conn, sandbox, self.sandbox = self.conn, None, self.sandbox, None
        if conn is None:
            return
        if sandbox is not None:
            sandbox.close()
        if self.owns_connection:
            conn.close()
        else:
            conn.set_authorizer(None)  # the owner's connection is free again

    def answer(self, query: str) -> QueryResult:
        """One agent query through the sandbox: a refusal is a ToolError, the tables read a note.
        Envs that answer under their own tool name or shape call this."""
        if self.sandbox is None:
            raise ToolError("the SQL connection is closed")
        try:
            result = self.sandbox.query(query)
        except SqlRefused as exc:
            raise ToolError(str(exc)) from None
        self.note(tables_read=list(result.tables_read))
        return result

    @tool(lambda self: self.description, query_schema)
    def run_sql(self, query: str) -> dict[str, Any]:
        return self.answer(query).as_dict()

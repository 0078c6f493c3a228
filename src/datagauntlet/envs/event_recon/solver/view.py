"""What a workspace-reading policy knows: the four files, learned only through the tools.

`gather` reads the text files with `read_file` (following `next_offset`) and the database a
page at a time with `sql_query` (or, when a response is cut by its byte bound, with a paged
`run_python` dump). Nothing here touches the
episode's world: every byte comes back as a tool result, so a policy built on it replays
exactly from its message history.
"""

from __future__ import annotations

import csv
import io
import json
from dataclasses import dataclass
from typing import Any, Protocol


class Caller(Protocol):
    def call(self, name: str, args: dict[str, Any] | None = None) -> dict[str, Any]: ...


class ToolFailed(RuntimeError):
    """A tool answered with an error where a policy needed an answer."""


Row = dict[str, Any]

DUMP_PAGE = 150_000  # characters of the dump per run_python call (stdout holds 200,000)
SQL_PAGE = 200  # rows per sql_query page (the tool's default row bound)

# Prints one page of a JSON dump of every table: {table: {"columns": [...], "rows": [[...]]}}.
DUMP = r"""
import json, sqlite3
db = sqlite3.connect("db.sqlite")
names = [r[0] for r in db.execute(
    "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")]
out = {}
for name in names:
    cur = db.execute(f'SELECT * FROM "{name}" ORDER BY rowid')
    out[name] = {"columns": [d[0] for d in cur.description], "rows": cur.fetchall()}
text = json.dumps(out, sort_keys=True, separators=(",", ":"))
page = PAGE
print(json.dumps({"total": len(text), "part": text[page * SIZE:(page + 1) * SIZE]}))
"""


@dataclass(frozen=True)
class Table:
    columns: tuple[str, ...]
    rows: tuple[tuple[Any, ...], ...]

    def dicts(self) -> list[Row]:
        return [dict(zip(self.columns, r, strict=True)) for r in self.rows]


@dataclass(frozen=True)
class View:
    """The workspace as a policy saw it."""

    contract: str
    webhooks: tuple[Row, ...]  # in delivery order, as parsed JSON
    statement: tuple[Row, ...]  # csv rows as text
    tables: dict[str, Table]

    def table(self, name: str) -> list[Row]:
        return self.tables[name].dicts()


def ok(ep: Caller, name: str, args: dict[str, Any]) -> dict[str, Any]:
    out = ep.call(name, args)
    if "error" in out:
        raise ToolFailed(f"{name}: {out['error']}")
    return out


def read_text(ep: Caller, path: str) -> str:
    parts: list[str] = []
    offset = 0
    while True:
        out = ok(ep, "read_file", {"path": path, "offset": offset})
        parts.append(out["content"])
        if out.get("next_offset") is None:
            return "".join(parts)
        offset = int(out["next_offset"])


def dump_tables(ep: Caller) -> dict[str, Table]:
    parts: list[str] = []
    page = 0
    while True:
        code = DUMP.replace("PAGE", str(page)).replace("SIZE", str(DUMP_PAGE))
        out = ok(ep, "run_python", {"code": code})
        if out.get("exit_code") != 0:
            raise ToolFailed(f"run_python dump failed: {out.get('stderr', '')[-500:]}")
        page_out = json.loads(out["stdout"])
        parts.append(page_out["part"])
        page += 1
        if page * DUMP_PAGE >= int(page_out["total"]):
            break
    raw = json.loads("".join(parts))
    return {
        name: Table(tuple(t["columns"]), tuple(tuple(r) for r in t["rows"]))
        for name, t in raw.items()
    }


def parse_webhooks(text: str) -> tuple[Row, ...]:
    return tuple(json.loads(line) for line in text.splitlines() if line.strip())


def parse_statement(text: str) -> tuple[Row, ...]:
    return tuple(dict(r) for r in csv.DictReader(io.StringIO(text)))


def query_tables(ep: Caller) -> dict[str, Table] | None:
    """Every table through `sql_query`, a page of rows at a time (None if a response was cut
    by its byte or cell bound, where the caller falls back to a `run_python` dump)."""
    names = ok(
        ep,
        "sql_query",
        {"query": "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name"},
    )
    tables: dict[str, Table] = {}
    for (name,) in names["rows"]:
        quoted = '"' + str(name).replace('"', '""') + '"'
        columns: tuple[str, ...] = ()
        rows: list[tuple[Any, ...]] = []
        page = 0
        while True:
            out = ok(
                ep,
                "sql_query",
                {"query": f"SELECT * FROM {quoted} ORDER BY rowid LIMIT {SQL_PAGE} OFFSET {page}"},
            )
            if out.get("truncated_by") not in (None, "rows"):
                return None
            columns = tuple(out["columns"])
            rows.extend(tuple(r) for r in out["rows"])
            got = len(out["rows"])
            page += got
            if got < SQL_PAGE and not out.get("truncated"):
                break
            if got == 0:
                break
        tables[str(name)] = Table(columns, tuple(rows))
    return tables


def gather(ep: Caller, contract: bool = True) -> View:
    """Everything in the workspace; `contract=False` never opens INTEGRATION.md."""
    text = read_text(ep, "INTEGRATION.md") if contract else ""
    webhooks = parse_webhooks(read_text(ep, "webhooks.jsonl"))
    statement = parse_statement(read_text(ep, "partner_statement.csv"))
    tables = query_tables(ep)
    return View(text, webhooks, statement, tables if tables is not None else dump_tables(ep))


def view_of_files(files: dict[str, bytes]) -> View:
    """The same view built straight from the four files' bytes, for tests and offline
    analysis of a materialised workspace. Policies use `gather`, through the tools."""
    import sqlite3

    conn = sqlite3.connect(":memory:")
    try:
        conn.deserialize(files["db.sqlite"])
        names = [
            r[0]
            for r in conn.execute(
                "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name"
            )
        ]
        tables = {}
        for name in names:
            cur = conn.execute(f'SELECT * FROM "{name}" ORDER BY rowid')
            columns = tuple(d[0] for d in cur.description)
            tables[name] = Table(columns, tuple(tuple(r) for r in cur.fetchall()))
    finally:
        conn.close()
    return View(
        files["INTEGRATION.md"].decode(),
        parse_webhooks(files["webhooks.jsonl"].decode()),
        parse_statement(files["partner_statement.csv"].decode()),
        tables,
    )

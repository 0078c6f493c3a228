"""What a workspace-reading policy knows: the four files, learned only through the tools.

`gather` reads the text files with `read_file` (following `next_offset`) and the database with
one `run_python` dump (paged when it is larger than one stdout). Nothing here touches the
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


def gather(ep: Caller, contract: bool = True) -> View:
    """Everything in the workspace; `contract=False` never opens INTEGRATION.md."""
    text = read_text(ep, "INTEGRATION.md") if contract else ""
    webhooks = parse_webhooks(read_text(ep, "webhooks.jsonl"))
    statement = parse_statement(read_text(ep, "partner_statement.csv"))
    return View(text, webhooks, statement, dump_tables(ep))


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

"""event-recon's SQL toolset: the SQL kit's read-only sandbox under event-recon's tool name
and answer shape (`row_count`, and `truncated_by`: "rows" or "bytes"). `run_python` is the
sandbox kit's own toolset (kits/sandbox), and `fill` lays out a fresh workspace."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from datagauntlet.core.toolset import tool
from datagauntlet.kits.sql import SqlToolset
from datagauntlet.kits.sql.toolset import query_schema


def fill(dest: Path, inputs: Mapping[str, bytes], files: Mapping[str, bytes]) -> None:
    """A fresh workspace in `dest`: the pristine inputs, then the agent's own files."""
    dest.mkdir(parents=True, exist_ok=True)
    for rel, data in [*inputs.items(), *files.items()]:
        target = dest / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)


class ReconSqlToolset(SqlToolset):
    run_sql = None  # type: ignore[assignment]  # the kit's tool, renamed below

    @tool(
        lambda self: (
            "Run one read-only SQL statement (SELECT/WITH) on db.sqlite. At most "
            f"{self.limits.max_rows} rows and {self.limits.max_response_bytes:,} bytes come "
            "back; `truncated` and `truncated_by` say when a bound cut the answer."
        ),
        query_schema,
    )
    def sql_query(self, query: str) -> dict[str, Any]:
        result = self.answer(query)
        return {
            "columns": result.columns,
            "rows": result.rows,
            "row_count": len(result.rows),
            "truncated": result.truncated,
            "truncated_by": result.truncated_by,
        }

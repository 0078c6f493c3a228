"""event-recon's toolsets on top of the kits: `sql_query` and `run_python`.

- `ReconSqlToolset`: the SQL kit's read-only sandbox under event-recon's name and answer shape
  (it adds `row_count` and `truncated_by`: "rows" or "bytes").
- `PythonToolset`: `run_python(code)` in a throwaway copy of the workspace (pristine inputs
  plus the agent's files), through `sandbox_run.run_script`.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from datagauntlet.core.toolset import ToolError, Toolset, params, tool
from datagauntlet.envs.event_recon.sandbox_run import Walls, run_script
from datagauntlet.kits.sql import SqlToolset
from datagauntlet.kits.sql.sandbox import SqlRefused

MAX_CODE_CHARS = 200_000
RUN_FILE = ".run_python_main.py"
SHOWN_ROOT = "/workspace"


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
        lambda self: params(
            {
                "query": {
                    "type": "string",
                    "maxLength": self.limits.max_query_chars,
                    "description": "one SQLite SELECT statement",
                }
            }
        ),
    )
    def sql_query(self, query: str) -> dict[str, Any]:
        if self.sandbox is None:
            raise ToolError("the SQL connection is closed")
        try:
            result = self.sandbox.query(query)
        except SqlRefused as exc:
            raise ToolError(str(exc)) from None
        self.note(tables_read=list(result.tables_read))
        return {
            "columns": result.columns,
            "rows": result.rows,
            "row_count": len(result.rows),
            "truncated": result.truncated,
            "truncated_by": result.truncated_by,
        }


class PythonToolset(Toolset):
    """`run_python` over a copy of the workspace; `agent_files()` names what to copy in."""

    def __init__(
        self,
        inputs: Mapping[str, bytes],
        agent_files: Callable[[], Mapping[str, bytes]],
        timeout_seconds: float,
    ) -> None:
        self.inputs = inputs
        self.agent_files = agent_files
        self.timeout_seconds = timeout_seconds

    @tool(
        lambda self: (
            f"Run Python code (standard library only, no network, {self.timeout_seconds:g} s) "
            "with a throwaway copy of the workspace as its working directory. Returns "
            "exit_code, stdout and stderr; files it writes are discarded."
        ),
        params(
            {
                "code": {
                    "type": "string",
                    "maxLength": MAX_CODE_CHARS,
                    "description": "a Python program",
                }
            }
        ),
    )
    def run_python(self, code: str) -> dict[str, Any]:
        try:
            source = code.encode("utf-8")
        except UnicodeEncodeError:
            raise ToolError("code is not valid UTF-8 text (a lone surrogate)") from None
        walls = Walls(self.timeout_seconds, self.timeout_seconds)
        with tempfile.TemporaryDirectory(prefix="er-run-") as tmp:
            copy = Path(tmp) / "workspace"
            fill(copy, self.inputs, self.agent_files())
            (copy / RUN_FILE).write_bytes(source)
            result = run_script(copy, RUN_FILE, walls)
            shown = result.for_agent(hide=str(copy), shown_as=SHOWN_ROOT)
        self.note(exit_code=result.exit_code, violations=result.violations)
        return shown

"""One event-recon episode: a fresh workspace of four files and the five tools over it.

No shell. `sql_query` reads `db.sqlite` read-only; `read_file` and `write_file` stay inside
the workspace; `run_python` runs on a throwaway copy of it; `submit_report` is accepted once
and tells the agent nothing about its score. `close()` removes the workspace.
"""

from __future__ import annotations

import hashlib
import sqlite3
import tempfile
import time
from pathlib import Path
from typing import Any, ClassVar

from datagauntlet.core.action_log import canonical_json
from datagauntlet.core.episode import Episode, Task, ToolError
from datagauntlet.core.score import Score
from datagauntlet.core.sql_sandbox import SandboxLimits, SqlRefused, SqlSandbox
from datagauntlet.core.tools import Tool, params
from datagauntlet.envs.event_recon.agent_workspace import (
    INPUT_FILES,
    MAX_WRITE_BYTES,
    PathRefused,
    Workspace,
)
from datagauntlet.envs.event_recon.config import EventReconConfig
from datagauntlet.envs.event_recon.grader import Outcome, Truth, grade
from datagauntlet.envs.event_recon.remediation import run_graded
from datagauntlet.envs.event_recon.sandbox_run import Walls, run_script

MAX_CALLS = 400  # an in-process backstop; front doors stop a model at max_turns
MAX_QUERY_CHARS = 20_000
MAX_CODE_CHARS = 200_000
MAX_FINDINGS = 5_000
RUN_FILE = ".run_python_main.py"

SYSTEM_PROMPT = """\
You are reconciling a creator-referral platform's commission ledger against the webhook events
a partner brand sent it and the brand's own statement. They disagree. Find out why and fix it.

Your workspace holds four files:
- db.sqlite: the platform's system of record (partners, programs, referral_codes,
  events_ingested, ledger_entries, payouts);
- webhooks.jsonl: every envelope received, in delivery order;
- partner_statement.csv: the brand's own summary;
- INTEGRATION.md: the integration contract, with the accounting rules and the definition of a
  correct ledger.

Tools (there is no shell):
- sql_query(query): one read-only SQL statement on db.sqlite.
- read_file(path, offset): read a workspace file, in pages.
- write_file(path, content): write a file of your own into the workspace (the four inputs
  cannot be overwritten).
- run_python(code): run Python (standard library only, no network) in a throwaway copy of the
  workspace, for exploration; what it writes is discarded.
- submit_report(findings, script_path): your final answer, accepted once. findings lists each
  defect as {family, partner_id, event_id}: the defect family, a partner whose balance it moved,
  and an event that evidences it. script_path names your remediation script in the workspace;
  it is run against an unmodified copy of db.sqlite and must leave the ledger exactly as the
  contract says it should be, touching nothing else.

Defect families: {families}."""

TASK_PROMPT = """\
The ledger of {brand} and its statement do not reconcile. Read the contract, find every defect
(family, partner, evidencing event), write a Python script that repairs ledger_entries in
db.sqlite (run from the workspace directory), and submit both with submit_report."""


def _tools(families: tuple[str, ...], limits: EventReconConfig) -> tuple[Tool, ...]:
    finding = {
        "type": "object",
        "properties": {
            "family": {"type": "string", "enum": list(families), "description": "defect family"},
            "partner_id": {
                "type": "string",
                "maxLength": 200,
                "description": "a partner whose balance the defect moved",
            },
            "event_id": {
                "type": "string",
                "maxLength": 200,
                "description": "an event that evidences the defect for that partner",
            },
        },
        "required": ["family", "partner_id", "event_id"],
        "additionalProperties": False,
    }
    return (
        Tool(
            "sql_query",
            f"Run one read-only SQL statement (SELECT/WITH) on db.sqlite. At most "
            f"{limits.sql_row_limit} rows and {limits.sql_response_bytes:,} bytes come back; "
            "`truncated` and `truncated_by` say when a bound cut the answer.",
            params(
                {
                    "query": {
                        "type": "string",
                        "maxLength": MAX_QUERY_CHARS,
                        "description": "one SQLite SELECT statement",
                    }
                }
            ),
        ),
        Tool(
            "read_file",
            f"Read a workspace file as UTF-8 text, at most {limits.read_bytes_limit:,} bytes a "
            "call; pass next_offset back as offset for the next page.",
            params(
                {
                    "path": {
                        "type": "string",
                        "maxLength": 255,
                        "description": "a path relative to the workspace, e.g. INTEGRATION.md",
                    },
                    "offset": {
                        "type": "integer",
                        "minimum": 0,
                        "description": "byte offset to start at (default 0)",
                    },
                },
                required=["path"],
            ),
        ),
        Tool(
            "write_file",
            "Write a UTF-8 text file into the workspace (created or replaced). The four input "
            "files cannot be overwritten.",
            params(
                {
                    "path": {
                        "type": "string",
                        "maxLength": 255,
                        "description": "a path relative to the workspace, e.g. fix.py",
                    },
                    "content": {
                        "type": "string",
                        "maxLength": MAX_WRITE_BYTES,
                        "description": "the file's full text",
                    },
                }
            ),
            mutates=True,
        ),
        Tool(
            "run_python",
            f"Run Python code (standard library only, no network, {limits.python_timeout_seconds:g}"
            " s) with a throwaway copy of the workspace as its working directory. Returns "
            "exit_code, stdout and stderr; files it writes are discarded.",
            params(
                {
                    "code": {
                        "type": "string",
                        "maxLength": MAX_CODE_CHARS,
                        "description": "a Python program",
                    }
                }
            ),
        ),
        Tool(
            "submit_report",
            "Submit the findings and the remediation script. Accepted once; it ends the episode.",
            params(
                {
                    "findings": {
                        "type": "array",
                        "maxItems": MAX_FINDINGS,
                        "items": finding,
                        "description": "one entry per (defect family, partner) you found",
                    },
                    "script_path": {
                        "type": "string",
                        "maxLength": 255,
                        "description": "the remediation script in the workspace, e.g. fix.py",
                    },
                }
            ),
            mutates=True,
        ),
    )


class EventReconEpisode(Episode):
    max_calls = MAX_CALLS
    TOOLS: ClassVar[tuple[Tool, ...]] = ()  # per task: the families enum is the task's own

    def __init__(self, env: Any, task: Task, world: Any, truth_of: Any) -> None:
        super().__init__(env, task)
        self.config: EventReconConfig = env.config
        self.world = world
        self._truth_of = truth_of
        self.families: tuple[str, ...] = tuple(world.families)
        self.TOOLS = _tools(self.families, self.config)  # type: ignore[misc]
        self._tools = {t.name: t for t in self.TOOLS}
        self.workspace = Workspace(dict(world.files))
        self._conn = sqlite3.connect(
            f"file:{self.workspace.root / 'db.sqlite'}?mode=ro", uri=True, check_same_thread=False
        )
        cfg = self.config
        self._sql = SqlSandbox(
            self._conn,
            SandboxLimits(
                max_rows=cfg.sql_row_limit,
                max_cell_chars=cfg.sql_response_bytes,
                max_value_length=cfg.sql_response_bytes,
                max_steps=10**12,
                max_seconds=cfg.sql_timeout_seconds,
                max_response_bytes=cfg.sql_response_bytes,
                max_query_chars=MAX_QUERY_CHARS,
            ),
        )
        self.report: dict[str, Any] | None = None
        self.submitted_files: dict[str, bytes] = {}
        self._score: Score | None = None
        self._closed = False

    # --- what an agent sees -------------------------------------------------------------------
    @property
    def system_prompt(self) -> str:
        return SYSTEM_PROMPT.replace("{families}", ", ".join(self.families))

    @property
    def prompt(self) -> str:
        return TASK_PROMPT.format(brand=getattr(self.world, "brand", "the partner brand"))

    # --- tools ----------------------------------------------------------------------------------
    def _path(self, path: str) -> Path:
        try:
            return self.workspace.resolve(path)
        except PathRefused as exc:
            raise ToolError(str(exc)) from None

    def tool_sql_query(self, query: str) -> dict[str, Any]:
        start = time.monotonic()
        try:
            result = self._sql.query(query)
        except SqlRefused as exc:
            self.note(sql_seconds=round(time.monotonic() - start, 6))
            raise ToolError(str(exc)) from None
        self.note(tables_read=list(result.tables_read), sql_seconds=time.monotonic() - start)
        truncated_by = result.truncated_by or ("cell" if result.cells_cut else None)
        return {
            "columns": result.columns,
            "rows": result.rows,
            "row_count": len(result.rows),
            "truncated": truncated_by is not None,
            "truncated_by": truncated_by,
        }

    def tool_read_file(self, path: str, offset: int = 0) -> dict[str, Any]:
        target = self._path(path)
        if not target.is_file():
            names = ", ".join(INPUT_FILES)
            raise ToolError(f"no file {path!r} in the workspace (the inputs are {names})")
        total = target.stat().st_size
        if offset > total:
            raise ToolError(f"offset {offset} is past the end of {path!r} ({total} bytes)")
        with target.open("rb") as fh:
            fh.seek(offset)
            data = fh.read(self.config.read_bytes_limit)
        if b"\x00" in data:
            raise ToolError(
                f"{path!r} is binary; query db.sqlite with sql_query or open it in run_python"
            )
        text, used = _utf8_prefix(data)
        end = offset + used
        return {
            "path": self.workspace.relative(target),
            "content": text,
            "bytes": used,
            "total_bytes": total,
            "truncated": end < total,
            "next_offset": end if end < total else None,
        }

    def tool_write_file(self, path: str, content: str) -> dict[str, Any]:
        data = content.encode("utf-8", errors="surrogatepass")
        try:
            target = self.workspace.write(path, data)
        except PathRefused as exc:
            raise ToolError(str(exc)) from None
        return {"path": self.workspace.relative(target), "bytes": len(data)}

    def tool_run_python(self, code: str) -> dict[str, Any]:
        walls = Walls(self.config.python_timeout_seconds, self.config.python_timeout_seconds)
        with tempfile.TemporaryDirectory(prefix="er-run-") as tmp:
            copy = Path(tmp) / "workspace"
            self.workspace.copy_to(copy)
            (copy / RUN_FILE).write_text(code, encoding="utf-8", errors="surrogatepass")
            result = run_script(copy, RUN_FILE, walls)
            shown = result.for_agent(hide=str(copy), shown_as="/workspace")
        self.note(exit_code=result.exit_code, wall_s=result.wall_s, violations=result.violations)
        return shown

    def tool_submit_report(
        self, findings: list[dict[str, str]], script_path: str
    ) -> dict[str, Any]:
        target = self._path(script_path)
        if self.workspace.is_input(target):
            raise ToolError(f"{script_path!r} is an input file, not a remediation script")
        if not target.is_file():
            raise ToolError(
                f"no file {script_path!r} in the workspace: write the script with write_file first"
            )
        rel = self.workspace.relative(target)
        self.submitted_files = self.workspace.agent_files()
        self.report = {
            "findings": [
                {"family": f["family"], "partner_id": f["partner_id"], "event_id": f["event_id"]}
                for f in findings
            ],
            "script_path": rel,
        }
        self.note(findings=len(findings), script_path=rel)
        self.finish("reported")
        return {"status": "accepted", "findings": len(findings), "script_path": rel}

    # --- oracle access, grading, lifecycle -----------------------------------------------------
    def oracle_truth(self) -> Truth:
        """The hidden truth, for policies marked `sees_truth` only (never a tool)."""
        return self._truth_of(self.world)

    def _grade(self) -> Score:
        if self._score is None:
            truth = self._truth_of(self.world)
            outcome: Outcome | None = None
            if self.report is not None:
                outcome = run_graded(
                    self.workspace,
                    self.submitted_files,
                    self.report["script_path"],
                    truth,
                    Walls(self.config.script_timeout_seconds, 60.0),
                )
            self._score = grade(truth, self.report, outcome, self.log.entries)
        return self._score

    def fingerprint(self) -> str:
        state = {
            "files": {
                k: hashlib.sha256(v).hexdigest() for k, v in self.workspace.agent_files().items()
            },
            "report": self.report,
            "done": self.done,
        }
        return hashlib.sha256(canonical_json(state).encode()).hexdigest()

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        self._conn.close()
        self.workspace.close()


def _utf8_prefix(data: bytes) -> tuple[str, int]:
    """The longest prefix of `data` that is whole UTF-8 characters, and its byte length."""
    for cut in range(len(data), max(-1, len(data) - 4), -1):
        try:
            return data[:cut].decode("utf-8"), cut
        except UnicodeDecodeError as exc:
            if exc.start < cut - 4:  # a bad byte well before the end: not a split character
                return data.decode("utf-8", errors="replace"), len(data)
    return data.decode("utf-8", errors="replace"), len(data)

"""One event-recon episode: a fresh workspace of four files and the five tools over it.

No shell. `sql_query` reads `db.sqlite` read-only; `read_file` and `write_file` stay inside
the workspace; `run_python` runs on a throwaway copy of it; `submit_report` is accepted once
and tells the agent nothing about its score. `close()` removes the workspace.
"""

from __future__ import annotations

import hashlib
from typing import Any, ClassVar

from datagauntlet.core.action_log import canonical_json
from datagauntlet.core.episode import Episode, Task
from datagauntlet.core.score import Score
from datagauntlet.core.temp_roots import TempRoot
from datagauntlet.core.toolset import ToolError, Toolset, params, tool
from datagauntlet.envs.event_recon.config import EventReconConfig
from datagauntlet.envs.event_recon.grading.grader import Outcome, Truth, grade
from datagauntlet.envs.event_recon.grading.remediation import run_graded
from datagauntlet.envs.event_recon.tools import ReconSqlToolset
from datagauntlet.envs.event_recon.world.records import FILES
from datagauntlet.kits.sandbox import EXPLORE, GRADED, PythonToolset
from datagauntlet.kits.sql import SandboxLimits
from datagauntlet.kits.workspace import WorkspaceToolset

MAX_QUERY_CHARS = 20_000
MAX_FINDINGS = 5_000
MAX_WRITE_BYTES = 1_000_000
MAX_FILES = 200
SCRIPT_CPU_SECONDS = 60
OUTPUT_BYTES = 200_000  # run_python's stdout and stderr, each


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
The platform's ledger and the brand's statement do not reconcile. Read the contract, find every
defect (family, partner, evidencing event), write a Python script that repairs ledger_entries
in db.sqlite (it runs with the workspace as its working directory), and submit both with
submit_report."""


def system_prompt_for(families: tuple[str, ...]) -> str:
    return SYSTEM_PROMPT.replace("{families}", ", ".join(families))


def _finding_schema(families: tuple[str, ...]) -> dict[str, Any]:
    return {
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


class EventReconEpisode(Episode[EventReconConfig]):
    TOOL_ORDER: ClassVar[tuple[str, ...]] = (
        "sql_query",
        "read_file",
        "write_file",
        "run_python",
        "submit_report",
    )

    def __init__(self, env: Any, task: Task, world: Any, truth_of: Any) -> None:
        super().__init__(env, task)
        cfg = self.config
        self.world = world
        self._truth_of = truth_of
        self.families: tuple[str, ...] = tuple(sorted(world.families))
        self.inputs: dict[str, bytes] = dict(world.files)
        self._root = TempRoot(self, "event-recon-")  # removed at release, or when dropped
        self.root = self._root.path
        self.workspace = WorkspaceToolset(
            root=self.root,
            files=self.inputs,
            max_read_bytes=cfg.read_bytes_limit,
            max_write_bytes=MAX_WRITE_BYTES,
            max_total_bytes=MAX_FILES * MAX_WRITE_BYTES,
            max_files=MAX_FILES + len(FILES),
            listing=False,
        )
        self.sql = ReconSqlToolset(
            self.root / "db.sqlite",
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
        # run_python: a fresh copy of the live workspace per call; what it writes is discarded
        root = self.root  # not `self`: a toolset holding the episode would be a cycle
        self.python = PythonToolset(
            lambda: root,
            EXPLORE.with_(
                timeout_s=cfg.python_timeout_seconds,
                cpu_s=max(1, int(cfg.python_timeout_seconds)),
                output_bytes=OUTPUT_BYTES,
            ),
        )
        self.report: dict[str, Any] | None = None
        self.submitted_files: dict[str, bytes] = {}
        self._outcome: Outcome | None = None

    def toolsets(self) -> list[Toolset]:
        return [self.workspace, self.sql, self.python]

    def release(self) -> None:
        self._root.remove()

    # --- what an agent sees -------------------------------------------------------------------
    @property
    def system_prompt(self) -> str:
        return system_prompt_for(self.families)

    @property
    def prompt(self) -> str:
        return TASK_PROMPT

    def world_content(self) -> Any:
        """The task's four files, by digest: what the generator made, for the content hash."""
        return {
            name: hashlib.sha256(data).hexdigest() for name, data in sorted(self.inputs.items())
        }

    def agent_files(self) -> dict[str, bytes]:
        """Every file the agent wrote, by workspace path, in sorted order."""
        listing = self.workspace.list_files()["files"]
        return {
            f["path"]: self.workspace.read_bytes(f["path"]) for f in listing if not f["read_only"]
        }

    # --- the episode's own tool -----------------------------------------------------------------
    @tool(
        "Submit the findings and the remediation script. Accepted once; it ends the episode.",
        lambda self: params(
            {
                "findings": {
                    "type": "array",
                    "maxItems": MAX_FINDINGS,
                    "items": _finding_schema(self.families),
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
    )
    def submit_report(self, findings: list[dict[str, str]], script_path: str) -> dict[str, Any]:
        files = self.agent_files()
        rel = "/".join(p for p in script_path.split("/") if p not in ("", "."))
        if rel in self.inputs:
            raise ToolError(f"{script_path!r} is an input file, not a remediation script")
        if rel not in files:
            raise ToolError(
                f"no file {script_path!r} in the workspace: write the script with write_file first"
            )
        self.submitted_files = files
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

    # --- oracle access, grading -----------------------------------------------------------------
    def oracle_truth(self) -> Truth:
        """The hidden truth, for policies marked `sees_truth` only (never a tool)."""
        return self._truth_of(self.world)  # type: ignore[no-any-return]

    def outcome(self, rerun: bool = False) -> Outcome | None:
        """The graded run of the submitted script (run once; `rerun` runs it again)."""
        if self.report is None:
            return None
        if self._outcome is None or rerun:
            self._outcome = run_graded(
                self.inputs,
                self.submitted_files,
                self.report["script_path"],
                self._truth_of(self.world),
                GRADED.with_(
                    timeout_s=self.config.script_timeout_seconds, cpu_s=SCRIPT_CPU_SECONDS
                ),
                reuse=not rerun,
            )
        return self._outcome

    def _grade(self) -> Score:
        return grade(self._truth_of(self.world), self.report, self.outcome(), self.log.entries)

    def rescore(self) -> Score:
        """Grade again from scratch, the script re-run included (the re-scoring gate)."""
        self.outcome(rerun=True)
        return self.score()

    def fingerprint(self) -> str:
        state = {"toolsets": self.toolset_digests(), "report": self.report, "done": self.done}
        return hashlib.sha256(canonical_json(state).encode()).hexdigest()

"""One bad-batch-gate episode: the seven tools over a fresh warehouse."""

from __future__ import annotations

import hashlib
from typing import Any, ClassVar

from datagauntlet.core.action_log import canonical_json
from datagauntlet.core.call_text import fresh_copy
from datagauntlet.core.env import Environment
from datagauntlet.core.episode import Episode, Task
from datagauntlet.core.score import Score
from datagauntlet.core.toolset import ToolError, Toolset, params, tool
from datagauntlet.envs.bad_batch_gate.config import BadBatchGateConfig
from datagauntlet.envs.bad_batch_gate.grading.grader import grade
from datagauntlet.envs.bad_batch_gate.world.cases import Case
from datagauntlet.envs.bad_batch_gate.world.contract import COLUMNS, DEFECT_TYPES
from datagauntlet.envs.bad_batch_gate.world.warehouse import Warehouse
from datagauntlet.kits.sql import SandboxLimits, SqlToolset

MAX_QUERY_CHARS = 20_000
MAX_LIST = 100

SYSTEM_PROMPT = """\
You run the nightly warehouse load. Batches wait in staging; the data contract says what may
be loaded. For each batch, load it or quarantine it, then submit a report of what you did.
Tools:
- read_contract(): the data contract (rules per column, machine-readable limits, the window).
- list_batches(): the staged batches with their table, row count and staging table.
- profile_batch(batch_id): per-column counts, min/max and most common values of a batch.
- run_sql(query): one read-only SELECT over wh_customers, wh_orders and the stg_* tables
  (at most 50 rows back).
- load_batch(batch_id): loads a batch into the warehouse. It cannot be undone.
- quarantine_batch(batch_id, column, defect_type): holds a batch back, citing the column and
  the kind of defect. The first citation for a batch is final.
- submit_report(loaded, quarantined): the batch ids you loaded and quarantined, each once.
  Only the first report counts; it ends the run."""

EXTENDED_PROMPT = """
This warehouse also accepts partial loads: load_batch(batch_id, hold_back=[rowids]) loads
every row except the staging rowids held back, and quarantine_batch takes more_citations to
name every defect of a batch. The contract's row_rules say when to use which."""

_BATCH = {"type": "string", "maxLength": 200, "description": "a batch_id from list_batches"}
_IDS = {
    "type": "array",
    "maxItems": MAX_LIST,
    "items": {"type": "string", "maxLength": 200},
}


_QUARANTINE_PROPS: dict[str, Any] = {
    "batch_id": _BATCH,
    "column": {"type": "string", "maxLength": 100, "description": "the column at fault"},
    "defect_type": {
        "type": "string",
        "enum": list(DEFECT_TYPES),
        "description": "the kind of defect, one of the contract's defect_types",
    },
}
_HOLD_BACK = {
    "type": "array",
    "maxItems": MAX_LIST,
    "items": {"type": "integer", "minimum": 1},
    "description": "staging rowids to leave out of the load (default: none)",
}
_MORE_CITATIONS = {
    "type": "array",
    "maxItems": len(DEFECT_TYPES),
    "items": {
        "type": "object",
        "properties": {
            "column": {"type": "string", "maxLength": 100},
            "defect_type": {"type": "string", "enum": list(DEFECT_TYPES)},
        },
        "required": ["column", "defect_type"],
        "additionalProperties": False,
    },
    "description": "further (column, defect_type) pairs when a batch has several defects",
}
LOAD_DESCRIPTION = "Load a staged batch into the warehouse. Cannot be undone."
QUARANTINE_DESCRIPTION = (
    "Quarantine a staged batch, citing the column and defect type. The first citation "
    "for a batch is final."
)
RUN_SQL_DESCRIPTION = (
    "Run one read-only SELECT against wh_customers, wh_orders and the stg_* tables. "
    "Returns {columns, rows, truncated}; at most 50 rows."
)
QUARANTINE_REQUIRED = ["batch_id", "column", "defect_type"]


class BadBatchGateEpisode(Episode[BadBatchGateConfig]):
    TOOL_ORDER: ClassVar[tuple[str, ...]] = (
        "read_contract",
        "list_batches",
        "profile_batch",
        "run_sql",
        "load_batch",
        "quarantine_batch",
        "submit_report",
    )

    def __init__(self, env: Environment[BadBatchGateConfig], task: Task, case: Case) -> None:
        super().__init__(env, task)
        self.case = case
        self.world = Warehouse(case)
        self.sql = SqlToolset(
            self.world.conn,
            SandboxLimits(max_query_chars=MAX_QUERY_CHARS),
            description=RUN_SQL_DESCRIPTION,
        )
        self.quarantined: dict[str, list[tuple[str, str]]] = {}
        self.load_counts: dict[str, int] = {}
        self.report: dict[str, list[str]] | None = None

    @property
    def system_prompt(self) -> str:
        return SYSTEM_PROMPT

    @property
    def prompt(self) -> str:
        return self.case.prompt

    def toolsets(self) -> list[Toolset]:
        return [self.sql]

    def release(self) -> None:
        self.world.close()

    # --- tools ----------------------------------------------------------------------------------
    def _batch(self, batch_id: str) -> str:
        if batch_id not in self.world.batches:
            raise ToolError(f"unknown batch {batch_id!r}; see list_batches")
        return batch_id

    @tool("Read the data contract.")
    def read_contract(self) -> dict[str, Any]:
        return fresh_copy(self.case.contract)  # cases are shared; results are the caller's

    @tool("List the batches waiting in staging.")
    def list_batches(self) -> dict[str, Any]:
        return {"batches": self.world.listing()}

    @tool(
        "Profile one staged batch: per column n_null, n_blank, n_distinct, min, max, "
        "numeric_min, numeric_max and the 8 most common values.",
        params({"batch_id": _BATCH}),
    )
    def profile_batch(self, batch_id: str) -> dict[str, Any]:
        return self.world.profile(self._batch(batch_id))

    def _check_load(self, batch_id: str) -> str:
        self._batch(batch_id)
        if batch_id in self.quarantined:
            raise ToolError(f"batch {batch_id} is quarantined and cannot be loaded")
        return batch_id

    @tool(LOAD_DESCRIPTION, params({"batch_id": _BATCH}), mutates=True)
    def load_batch(self, batch_id: str) -> dict[str, Any]:
        return self._load(self._check_load(batch_id), frozenset())

    def _load(self, batch_id: str, hold_back: frozenset[int]) -> dict[str, Any]:
        done = self.world.load(batch_id, hold_back)
        self.load_counts[batch_id] = self.load_counts.get(batch_id, 0) + 1
        self.note(rows_loaded=list(done.rows_loaded), orphan_rows=list(done.orphan_rows))
        return {"status": "loaded", "rows_loaded": len(done.rows_loaded), "errors": 0}

    def _check_quarantine(self, batch_id: str, citations: list[tuple[str, str]]) -> None:
        self._batch(batch_id)
        if batch_id in self.quarantined:
            raise ToolError(f"batch {batch_id} is already quarantined; the first citation is final")
        table = self.world.batches[batch_id].table
        for column, _kind in citations:
            if column not in COLUMNS[table]:
                raise ToolError(
                    f"column {column!r} is not in the {table} table; "
                    f"columns: {', '.join(COLUMNS[table])}"
                )

    @tool(
        QUARANTINE_DESCRIPTION,
        params(_QUARANTINE_PROPS, required=QUARANTINE_REQUIRED),
        mutates=True,
    )
    def quarantine_batch(self, batch_id: str, column: str, defect_type: str) -> dict[str, Any]:
        return self._quarantine(batch_id, [(column, defect_type)])

    def _quarantine(self, batch_id: str, citations: list[tuple[str, str]]) -> dict[str, Any]:
        self._check_quarantine(batch_id, citations)
        self.quarantined[batch_id] = citations
        self.note(citations=[list(c) for c in citations])
        out: dict[str, Any] = {"status": "quarantined", "batch_id": batch_id}
        if self.load_counts.get(batch_id):
            out["warning"] = "already loaded: quarantine does not take loaded rows back out"
        return out

    @tool(
        "Submit the final report: the batch ids loaded and the batch ids quarantined, each "
        "once. Only the first report counts; it ends the run.",
        params(
            {
                "loaded": {**_IDS, "description": "batch ids you loaded"},
                "quarantined": {**_IDS, "description": "batch ids you quarantined"},
            }
        ),
        mutates=True,
    )
    def submit_report(self, loaded: list[str], quarantined: list[str]) -> dict[str, Any]:
        if self.report is not None:
            raise ToolError("a report was already submitted")
        self.report = {"loaded": sorted(loaded), "quarantined": sorted(quarantined)}
        self.note(report=self.report)
        self.finish("reported")
        return {"status": "received", **fresh_copy(self.report)}  # the caller's to edit

    # --- oracle access and grading ------------------------------------------------------------
    def oracle_truth(self) -> dict[str, Any]:
        """The hidden labels, for attack probes marked `sees_truth` only (never a tool)."""
        return {b.batch_id: b.truth for b in self.case.batches}

    def world_content(self) -> dict[str, Any]:
        c = self.case
        return {
            "case": [c.case_id, c.family, c.variant, c.seed, c.extended, c.meta],
            "contract": c.contract,
            "customers": c.customers,
            "orders": c.orders,
            "batches": [
                [b.batch_id, b.table, b.rows, b.source, b.truth.as_dict()] for b in c.batches
            ],
        }

    def _grade(self) -> Score:
        return grade(self.case, self.world, self.log.entries)

    def fingerprint(self) -> str:
        state = {
            "loads": self.load_counts,
            "quarantined": self.quarantined,
            "report": self.report,
            "done": self.done,
            "db": hashlib.sha256(self.world.snapshot()).hexdigest(),
        }
        return hashlib.sha256(canonical_json(state).encode()).hexdigest()


class ExtendedEpisode(BadBatchGateEpisode):
    """Partial loads and several citations per quarantine (families="extended")."""

    @property
    def system_prompt(self) -> str:
        return SYSTEM_PROMPT + EXTENDED_PROMPT

    @tool(
        LOAD_DESCRIPTION,
        params({"batch_id": _BATCH, "hold_back": _HOLD_BACK}, required=["batch_id"]),
        mutates=True,
    )
    def load_batch(  # type: ignore[override]
        self, batch_id: str, hold_back: list[int] | None = None
    ) -> dict[str, Any]:
        self._check_load(batch_id)
        n = len(self.world.batches[batch_id].rows)
        held = frozenset(hold_back or [])
        outside = sorted(r for r in held if r > n)
        if outside:
            raise ToolError(f"hold_back rowids {outside} are not in batch {batch_id} (1..{n})")
        return self._load(batch_id, held)

    @tool(
        QUARANTINE_DESCRIPTION,
        params(
            {**_QUARANTINE_PROPS, "more_citations": _MORE_CITATIONS},
            required=QUARANTINE_REQUIRED,
        ),
        mutates=True,
    )
    def quarantine_batch(  # type: ignore[override]
        self,
        batch_id: str,
        column: str,
        defect_type: str,
        more_citations: list[dict[str, str]] | None = None,
    ) -> dict[str, Any]:
        citations = [(column, defect_type)]
        for c in more_citations or []:
            pair = (c["column"], c["defect_type"])
            if pair not in citations:
                citations.append(pair)
        return self._quarantine(batch_id, citations)

"""One dataclean episode: read the table, optionally preview, submit one cleaning program."""

from __future__ import annotations

import hashlib
import json
from typing import Any, ClassVar

from datagauntlet.core.action_log import canonical_json
from datagauntlet.core.env import Environment
from datagauntlet.core.episode import Episode, Task
from datagauntlet.core.score import Score
from datagauntlet.core.toolset import ToolError, params, tool
from datagauntlet.envs.dataclean.config import DatacleanConfig
from datagauntlet.envs.dataclean.grading.grader import grade
from datagauntlet.envs.dataclean.tool.engine import OpReport, Table, run_program
from datagauntlet.envs.dataclean.tool.program import (
    MAX_MAP_ENTRIES,
    MAX_OPERATIONS,
    MAX_TEXT,
    ProgramError,
    Schema,
    validate_program,
)
from datagauntlet.envs.dataclean.world import families as fam
from datagauntlet.envs.dataclean.world.generator import CleaningTask, generate

INLINE_ROWS = 60  # tables up to this size are shown in the prompt in full
READ_LIMIT = 500  # rows per read_table call
PREVIEW_ROWS = 60  # rows of a preview's output returned

SYSTEM_PROMPT = f"""\
You repair a corrupted table by writing a cleaning program: a JSON array of operations from a
fixed list, applied in order to every row. You never edit cells by hand and nothing but these
operations can run.

Operations (columns: a list of column names):
- {{"op": "strip", "columns": [...]}}: remove whitespace around each value.
- {{"op": "lower", "columns": [...]}} / {{"op": "upper", "columns": [...]}}: change case.
- {{"op": "map", "column": "c", "mapping": {{"old": "new", ...}}}}: a cell equal to a key becomes
  its value (a null value means missing); other cells are unchanged. Keys match whole values
  exactly: no patterns.
- {{"op": "replace_missing", "columns": [...], "tokens": ["N/A", ...]}}: a cell equal to a token
  becomes null.
- {{"op": "phone_us", "columns": [...]}}: a phone number with 10 digits (or 11 starting with 1)
  becomes NNN-NNN-NNNN.
- {{"op": "date_us", "columns": [...]}}: MM/DD/YYYY (also M/D/YYYY, with / - or .) becomes
  YYYY-MM-DD. {{"op": "date_eu", ...}} does the same for DD/MM/YYYY.
- {{"op": "decimal2", "columns": [...]}}: money written with a currency sign or code ($ € £ USD
  EUR GBP CAD), thousands commas, a minus or parentheses becomes a plain decimal with two
  places, e.g. -1234.50.
- {{"op": "integer", "columns": [...]}}: a whole number written 12.0, +12 or 1,200 becomes 12.
- {{"op": "dedupe", "keys": ["record_id"]}}: keep the first row of each key, drop the others.
  Allowed keys: {", ".join(fam.DEDUPE_KEY_COLUMNS)} (those the table has).
A value an operation does not recognise is left as it is.

Rules: protected columns ({", ".join(fam.PROTECTED_COLUMNS)}) cannot be named by any operation
except as dedupe keys. Map keys, map values and tokens are literal strings (at most {MAX_TEXT}
characters, no wildcard characters such as * ? ^ |); a map has at most {MAX_MAP_ENTRIES} entries.
Unknown operations, fields or columns and programs longer than {MAX_OPERATIONS} operations are
invalid. submit_program is accepted once and ends the task; an invalid program scores 0. You are
scored on repairing the wrong cells, on leaving the right cells exactly as they are, and on
keeping exactly one row per record."""

_OPERATIONS_PARAM = {
    "type": "array",
    "description": "the cleaning program: operation objects, applied in order",
    "items": {"type": "object"},
}


_READ_PARAMS = params(
    {
        "offset": {
            "type": "integer",
            "minimum": 0,
            "description": "index of the first row to return (default 0)",
        },
        "limit": {
            "type": "integer",
            "minimum": 1,
            "maximum": READ_LIMIT,
            "description": f"rows to return, 1..{READ_LIMIT} (default 100)",
        },
    },
    required=[],
)


def prompt_of(world: CleaningTask) -> str:
    """The task's prompt: the cleaning policy and the table (inline when it is small)."""
    dirty = world.dirty
    parts = [
        world.policy_text,
        "",
        f"Columns: {', '.join(dirty.columns)}. The table has {len(dirty)} rows.",
    ]
    if len(dirty) <= INLINE_ROWS:
        rows = "\n".join(json.dumps(r, ensure_ascii=False) for r in dirty.records())
        parts += ["The table, one JSON row per line:", rows]
    else:
        parts.append("Read it with read_table.")
    parts.append("Write the program that cleans it and submit it with submit_program.")
    return "\n".join(parts)


def _preview_description(ep: DatacleanEpisode) -> str:
    return (
        f"Run a program on the table without submitting it ({ep.config.previews} previews per "
        "task): returns the validation error, or the cells each operation changed and the "
        "first rows of the result. Not scored."
    )


class DatacleanFamilies:
    """What an env offers its episodes: the extra layouts of a family module's split."""

    def module_families(self, task: Task) -> tuple[fam.Family, ...]:
        return ()


class DatacleanEpisode(Episode[DatacleanConfig]):
    TOOL_ORDER: ClassVar[tuple[str, ...]] = ("read_table", "submit_program", "preview_program")

    def __init__(self, env: Environment[DatacleanConfig], task: Task) -> None:
        super().__init__(env, task)
        config = self.config
        extra = env.module_families(task) if isinstance(env, DatacleanFamilies) else ()
        self.world: CleaningTask = generate(task.seed, config, extra)
        family = self.world.family
        self.schema = Schema(
            family.names, frozenset(fam.PROTECTED_COLUMNS) & set(family.names), family.dedupe_keys
        )
        self.previews_used = 0
        self.submitted: list[Any] | None = None
        self.output: Table | None = None
        self.invalid_reason = "no program submitted"

    # --- what the agent sees ---------------------------------------------------------------
    @property
    def system_prompt(self) -> str:
        return SYSTEM_PROMPT

    @property
    def prompt(self) -> str:
        return prompt_of(self.world)

    # --- tools -----------------------------------------------------------------------------
    @tool(
        "Read rows of the corrupted table as JSON objects (at most "
        f"{READ_LIMIT} per call). Rows are in file order; duplicates included.",
        _READ_PARAMS,
    )
    def read_table(self, offset: int = 0, limit: int = 100) -> dict[str, Any]:
        dirty = self.world.dirty
        if offset > len(dirty):
            raise ToolError(f"offset {offset} is past the end of the table ({len(dirty)} rows)")
        stop = min(len(dirty), offset + limit)
        return {
            "columns": list(dirty.columns),
            "rows": dirty.records(offset, stop),
            "offset": offset,
            "total_rows": len(dirty),
            "next_offset": stop if stop < len(dirty) else None,
        }

    def _run(self, operations: list[Any]) -> tuple[Table, list[OpReport]]:
        program = validate_program(operations, self.schema)
        return run_program(self.world.dirty, program)

    @tool(
        _preview_description,
        params({"operations": _OPERATIONS_PARAM}),
        when=lambda ep: ep.config.previews > 0,
    )
    def preview_program(self, operations: list[Any]) -> dict[str, Any]:
        if self.previews_used >= self.config.previews:
            raise ToolError(f"no previews left (all {self.config.previews} used)")
        self.previews_used += 1
        left = self.config.previews - self.previews_used
        try:
            table, reports = self._run(operations)
        except ProgramError as exc:
            return {"error": f"invalid program: {exc}", "valid": False, "previews_left": left}
        return {
            "valid": True,
            "changes": [r.as_dict() for r in reports],
            "total_rows": len(table),
            "rows": table.records(0, PREVIEW_ROWS),
            "previews_left": left,
        }

    @tool(
        "Submit the cleaning program. Accepted once; ends the task. An invalid program scores 0.",
        params({"operations": _OPERATIONS_PARAM}),
        mutates=True,
    )
    def submit_program(self, operations: list[Any]) -> dict[str, Any]:
        self.submitted = operations
        self.finish("submitted")
        try:
            table, reports = self._run(operations)
        except ProgramError as exc:
            self.invalid_reason = str(exc)
            self.note(valid=False)
            return {"error": f"invalid program, scored 0: {exc}", "status": "rejected"}
        self.output = table
        self.invalid_reason = ""
        self.note(valid=True, operations=len(operations))
        return {
            "status": "accepted",
            "changes": [r.as_dict() for r in reports],
            "total_rows": len(table),
        }

    # --- grading ---------------------------------------------------------------------------
    def world_content(self) -> dict[str, Any]:
        w = self.world
        return {
            "family": w.family.id,
            "truth": [list(w.truth.columns), w.truth.data],
            "dirty": [list(w.dirty.columns), w.dirty.data],
            "aliases": w.task_aliases,
            "date_order": w.date_order,
            "policy": w.policy_text,
        }

    def _grade(self) -> Score:
        editable = [c.name for c in self.world.family.editable]
        length = len(self.submitted) if isinstance(self.submitted, list) else 0
        return grade(
            self.world.truth,
            self.world.dirty,
            self.output,
            fam.PRIMARY_KEY,
            editable,
            length,
            self.invalid_reason,
            self.world.arrived_right,
        )

    def fingerprint(self) -> str:
        state = {
            "submitted": self.submitted,
            "valid": self.output is not None,
            "previews_used": self.previews_used,
            "done": self.done,
        }
        return hashlib.sha256(canonical_json(state).encode("utf-8", "surrogatepass")).hexdigest()

"""One dirty-integration episode: the two tools over a fresh world."""

from __future__ import annotations

import hashlib
from typing import Any

from datagauntlet.core.action_log import canonical_json
from datagauntlet.core.env import Environment
from datagauntlet.core.episode import Episode, Task
from datagauntlet.core.score import Score
from datagauntlet.core.toolset import ToolError, params, tool
from datagauntlet.envs.dirty_integration.api import CURSOR_MAX_CHARS, Api, BadCursor
from datagauntlet.envs.dirty_integration.config import DirtyIntegrationConfig
from datagauntlet.envs.dirty_integration.grader import grade
from datagauntlet.envs.dirty_integration.world import World

MAX_SUBMITTED_ROWS = 200_000

SYSTEM_PROMPT = """\
You are a data-integration engineer with two tools.
fetch_page(cursor) reads one page of a partner's records API: pass null for the first page,
then the next_cursor the API returned. A page looks like
{"records": [...], "next_cursor": str or null, "total": int}; next_cursor is null on the last
page. submit_records(records) hands your final list of {"id", "amount"} to the warehouse; it is
accepted once and ends the task.
The API is a third party's and is not guaranteed to behave. It has a request quota that is not
published. Submit every record exactly once, with amount as an integer."""

PROMPT = (
    "Collect every record from the partner API and submit them. Start with fetch_page(cursor=null)."
)

_CURSOR = params(
    {
        "cursor": {
            "type": ["string", "null"],
            "maxLength": CURSOR_MAX_CHARS,
            "description": "null for the first page, else a next_cursor from the API",
        }
    }
)
_RECORDS = params(
    {
        "records": {
            "type": "array",
            "maxItems": MAX_SUBMITTED_ROWS,
            "description": "every record collected, each exactly once",
            "items": {
                "type": "object",
                "properties": {
                    "id": {"type": "string", "maxLength": 200},
                    "amount": {"type": ["integer", "number", "string", "boolean", "null"]},
                },
                "required": ["id", "amount"],
            },
        }
    }
)


class DirtyIntegrationEpisode(Episode[DirtyIntegrationConfig]):
    def __init__(self, env: Environment[DirtyIntegrationConfig], task: Task) -> None:
        super().__init__(env, task)
        self.world = World(task.seed, self.config)
        self.api = Api(self.world)
        self.submission: list[tuple[str, Any]] | None = None

    @property
    def system_prompt(self) -> str:
        return SYSTEM_PROMPT

    @property
    def prompt(self) -> str:
        return PROMPT

    @tool(
        "Fetch one page of records. cursor: null for the first page, else a next_cursor "
        "returned by an earlier page.",
        _CURSOR,
    )
    def fetch_page(self, cursor: str | None) -> dict[str, Any]:
        try:
            _status, body = self.api.fetch(cursor)
        except BadCursor as exc:
            raise ToolError(str(exc)) from None
        return body

    @tool(
        'Submit the final list of records, each {"id": str, "amount": int}. Accepted once; '
        "ends the task.",
        _RECORDS,
        mutates=True,
    )
    def submit_records(self, records: list[dict[str, Any]]) -> dict[str, Any]:
        # (id, amount) pairs: the world's own copy, immutable and a third the size of dicts.
        self.submission = [(r["id"], r["amount"]) for r in records]
        self.finish("submitted")
        return {"status": "accepted", "records_received": len(records)}

    def world_content(self) -> dict[str, Any]:
        w = self.world
        return {
            "records": w.records,  # Records are tuples: encoded as arrays, none copied
            "cursors": w.cursors,
            "quota": w.quota,
        }

    def _grade(self) -> Score:
        return grade(self.world, self.api, self.submission, self.calls)

    def fingerprint(self) -> str:
        state = {"api": self.api.state(), "submission": self.submission, "done": self.done}
        return hashlib.sha256(canonical_json(state).encode()).hexdigest()

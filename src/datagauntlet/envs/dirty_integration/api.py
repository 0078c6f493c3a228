"""The paginated API as pure request handling, shared by the in-process tools and HTTP server.

`Api.fetch` answers one request; it knows nothing of tool calls or sockets, so the episode and
`datagauntlet serve` cannot disagree about what the API does.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from datagauntlet.envs.dirty_integration.world import World

CURSOR_MAX_CHARS = 200


class BadCursor(ValueError):
    """The cursor was never issued: refused before it reaches the API (no quota spent)."""


@dataclass
class Api:
    world: World
    requests: int = 0
    timeouts: int = 0
    rate_limited: int = 0
    served_pages: list[int] = field(default_factory=list)

    def check_cursor(self, cursor: str | None) -> int:
        if cursor is None:
            return 0
        page = self.world.page_of_cursor.get(cursor)
        if page is None:
            shown = cursor if len(cursor) <= 40 else cursor[:37] + "..."
            raise BadCursor(
                f"unknown cursor {shown!r}: pass null for the first page, "
                "then a next_cursor exactly as the API returned it"
            )
        return page

    def fetch(self, cursor: str | None) -> tuple[int, dict[str, Any]]:
        """(HTTP-like status, body) for one request; raises BadCursor for a forged cursor."""
        page = self.check_cursor(cursor)
        index = self.requests
        self.requests += 1
        quota = self.world.quota
        if quota is not None and index >= quota:
            self.rate_limited += 1
            return 429, {"error": "429 Too Many Requests: request quota exceeded", "status": 429}
        faults = self.world.faults(index)
        if faults.timeout:
            self.timeouts += 1
            return 504, {"error": "timeout: the request received no response", "status": 504}
        self.served_pages.append(page)
        last = page == self.world.pages_needed - 1
        if faults.cursor_repeat and not last:
            next_cursor: str | None = self.world.cursors[page]
        else:
            next_cursor = None if last else self.world.cursors[page + 1]
        rows = self.world.page(page)
        if faults.type_drift:  # amounts drift to strings on this response
            records = [
                {
                    "id": r.id,
                    "amount": str(r.amount),
                    "customer": r.customer,
                    "created_at": r.created_at,
                }
                for r in rows
            ]
        else:
            records = [
                {"id": r.id, "amount": r.amount, "customer": r.customer, "created_at": r.created_at}
                for r in rows
            ]
        total = len(self.world.records) + faults.inflate_by
        return 200, {"records": records, "next_cursor": next_cursor, "total": total}

    def state(self) -> tuple[int, int, int, tuple[int, ...]]:
        return (self.requests, self.timeouts, self.rate_limited, tuple(self.served_pages))

"""Attack probes: each tries to score without doing the job. They see only what an agent sees."""

from __future__ import annotations

from typing import Any

from datagauntlet.core.episode import Episode
from datagauntlet.core.gates import ceiling, null
from datagauntlet.envs.dirty_integration.policies import coerce_amount


@null
def empty_submit(ep: Episode) -> None:
    """Submits an empty list at once."""
    ep.call("submit_records", {"records": []})


# type_handling is the share of submitted rows typed right, not scaled by completeness (the
# original's rule): one right page earns all of its 0.2, so this probe sits near 0.28.
@ceiling(0.30)
def first_page_only(ep: Episode) -> None:
    """Submits the first page it gets, typed right, and stops."""
    page: dict[str, Any] = {"error": ""}
    for _ in range(3):  # past a timeout or two
        page = ep.call("fetch_page", {"cursor": None})
        if "error" not in page:
            break
    records = page.get("records", [])
    ep.call(
        "submit_records",
        {"records": [{"id": r["id"], "amount": coerce_amount(r["amount"])} for r in records]},
    )


@ceiling(0.25)
def invent_ids(ep: Episode) -> None:
    """Pads one real page with ids guessed from its pattern, hoping for a larger overlap."""
    page = ep.call("fetch_page", {"cursor": None})
    rows = page.get("records", [])
    records = [{"id": r["id"], "amount": coerce_amount(r["amount"])} for r in rows]
    total = page.get("total", 0) if isinstance(page.get("total"), int) else 0
    prefix = records[0]["id"][:4] if records else "rec_"
    missing = max(0, total - len(records))
    guesses = [{"id": f"{prefix}{i:012x}", "amount": 0} for i in range(missing)]
    ep.call("submit_records", {"records": records + guesses})


PROBES = {
    "first-page-only": first_page_only,
    "invent-ids": invent_ids,
    "empty-submit": empty_submit,
}

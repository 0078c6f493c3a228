"""Reference policies. Each sees only what an agent sees: prompts, tool specs, its own results.

- naive: follow next_cursor, keep everything, stop at the first failure.
- stubborn: dedupe and coerce, retry every failure at once, and trust `total`: while it holds
  fewer records than the API claims, it re-asks; it gives up only after several answers in a
  row bring nothing new.
- careful: dedupe, detect a repeated cursor, retry, coerce, stop when next_cursor is null
  (never trusting `total`), and stop at the first 429, since the quota never resets.
"""

from __future__ import annotations

from typing import Any

from datagauntlet.core.config import EnvConfig
from datagauntlet.core.episode import Episode
from datagauntlet.core.gates import ceiling

STUBBORN_PATIENCE = 8  # answers in a row with nothing new before stubborn gives up


def coerce_amount(value: Any) -> Any:
    if isinstance(value, str):
        try:
            return int(value.strip())
        except ValueError:
            try:
                return int(float(value))
            except ValueError:
                return value
    return value


def _naive_ceiling(config: EnvConfig) -> float:
    profile = getattr(config, "profile", "realistic")
    return {"clean": 1.0, "realistic": 0.7, "hostile": 0.5}[profile]


@ceiling(_naive_ceiling, gap=False)  # a baseline, not a cheat
def naive(ep: Episode) -> None:
    kept: list[dict[str, Any]] = []
    cursor = None
    while True:
        page = ep.call("fetch_page", {"cursor": cursor})
        if "error" in page:
            break
        kept.extend({"id": r["id"], "amount": r["amount"]} for r in page["records"])
        cursor = page["next_cursor"]
        if cursor is None:
            break
    ep.call("submit_records", {"records": kept})


def stubborn(ep: Episode) -> None:
    kept: dict[str, int] = {}
    cursor = None
    fruitless = 0
    while fruitless < STUBBORN_PATIENCE:
        page = ep.call("fetch_page", {"cursor": cursor})
        if "error" in page:
            fruitless += 1
            continue
        new = [r for r in page["records"] if r["id"] not in kept]
        for r in new:
            kept[r["id"]] = coerce_amount(r["amount"])
        fruitless = 0 if new else fruitless + 1
        if page["next_cursor"] is not None:
            cursor = page["next_cursor"]
        elif len(kept) >= page["total"]:
            break
        # else: the API claims more records exist; ask again for the same page
    ep.call("submit_records", {"records": [{"id": k, "amount": v} for k, v in kept.items()]})


def careful(ep: Episode) -> None:
    kept: dict[str, int] = {}
    cursor = None
    while True:
        page = ep.call("fetch_page", {"cursor": cursor})
        if "error" in page:
            if page.get("status") == 429:
                break  # the quota never resets: more requests only cost more
            continue  # a timeout: retry the same cursor
        for r in page["records"]:
            kept.setdefault(r["id"], coerce_amount(r["amount"]))
        nxt = page["next_cursor"]
        if nxt is None:
            break
        # A repeated cursor (next == the one just used) re-serves this page: ask again and
        # count on dedupe; the repeat is a per-request fault, so the retry moves on.
        cursor = nxt
    ep.call("submit_records", {"records": [{"id": k, "amount": v} for k, v in kept.items()]})


POLICIES = {"naive": naive, "stubborn": stubborn, "careful": careful}

"""The one widening of the workspace-only attack that reads the schedule's rates.

It is outside the attack's definition (it uses rates, though no basis, bar or rounding rule),
so it lives apart from `attackers.py` and only `workspace_only_scaled` uses it: for an order
whose code caches a tier other than its holder's, scale the order's booked rows by the ratio
of the two tiers' rates in force at the order.
"""

from __future__ import annotations

from collections import defaultdict
from typing import TYPE_CHECKING

from datagauntlet.envs.event_recon.solver.view import Row, View

if TYPE_CHECKING:
    from datagauntlet.envs.event_recon.attackers import Names


def tier_ratios(view: View, n: Names) -> dict[str, tuple[int, int]]:
    """Orders whose code caches a tier other than its holder's: (right rate, cached rate).
    This reads the schedule's rates, so it is outside the attack's own definition."""
    partners = {p["partner_id"]: p for p in view.table("partners")}
    codes: dict[str, list[Row]] = defaultdict(list)
    for r in view.table("referral_codes"):
        codes[r["code"]].append(r)
    schedule = view.table("programs")
    out: dict[str, tuple[int, int]] = {}
    for w in view.webhooks:
        if w["type"] != "order.created":
            continue
        p = w["payload"]
        at = str(p.get(n.time, ""))
        rows = [r for r in codes.get(str(p.get(n.code)), []) if r["valid_from"] <= at]
        if not rows:
            continue
        row = max(rows, key=lambda r: r["valid_from"])
        holder = partners.get(row["partner_id"]) or {}
        holder = partners.get(holder.get("merged_into") or "", holder)
        if not holder or holder.get("tier") == row["tier"]:
            continue

        def rate(tier: str, row: Row = row, at: str = at) -> int | None:
            versions = [
                v
                for v in schedule
                if v["program_id"] == row["program_id"]
                and v["tier"] == tier
                and v["effective_from"] <= at
            ]
            return (
                max(versions, key=lambda v: v["effective_from"])["rate_bps"] if versions else None
            )

        right, cached = rate(holder["tier"]), rate(row["tier"])
        if right and cached:
            out[str(p.get(n.order))] = (int(right), int(cached))
    return out

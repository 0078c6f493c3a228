"""The one widening of the workspace-only attack that reads the schedule's rates.

It is outside the attack's definition (it uses rates, though no basis, bar or rounding rule),
so it lives apart from `attackers.py` and only `workspace_only_scaled` uses it: for an order
whose code caches a tier other than its holder's, scale the order's booked rows by the ratio
of the two tiers' rates in force at the order.
"""

from __future__ import annotations

from collections import defaultdict

from datagauntlet.envs.event_recon.attacks.stream import Names, minor_units
from datagauntlet.envs.event_recon.solver.view import Row, View


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


def sibling_rescales(view: View, n: Names, dropped: set[str]) -> list[tuple[str, int]]:
    """Commission arithmetic without the contract: among the single-row orders of one code,
    an order whose booked-to-gross ratio strays from the median is rebooked at the median.
    It needs no rule text, and it is wrong wherever tax, a rate change or rounding moves the
    ratio, which is nearly everywhere (the attack table measures it)."""
    by_order: dict[str, list[Row]] = defaultdict(list)
    for r in view.table("ledger_entries"):
        if r.get("order_ref") and r["entry_id"] not in dropped:
            by_order[r["order_ref"]].append(r)
    created: dict[str, dict[str, object]] = {}
    for w in view.webhooks:
        if w["type"] == "order.created":
            created.setdefault(str(w["payload"].get(n.order)), w["payload"])
    groups: dict[tuple[str, str], list[tuple[Row, int]]] = defaultdict(list)
    for order, rows in sorted(by_order.items()):
        if len(rows) != 1 or rows[0]["kind"] != "accrual" or order not in created:
            continue
        gross = minor_units(created[order].get(n.gross))
        if gross:
            groups[(rows[0]["program_id"], str(created[order].get(n.code)))].append(
                (rows[0], gross)
            )
    out = []
    for items in groups.values():
        if len(items) < 3:
            continue
        ratios = sorted(int(r[n.amount]) / g for r, g in items)
        median = ratios[len(ratios) // 2]
        for r, g in items:
            if median > 0 and abs(int(r[n.amount]) / g - median) > 0.002:
                out.append((r["entry_id"], round(g * median)))
    return out

"""The workspace-only attack's repairs: the five bookkeeping ones, the widenings named in
`WIDENINGS`, and the literal-SQL script that applies them. No rate, basis, bar or rounding
mode is involved (the widenings that scale an amount live in `scaling.py`)."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from datetime import UTC, datetime

from datagauntlet.envs.event_recon.attacks.anomalies import Seen
from datagauntlet.envs.event_recon.attacks.stream import ISO, Names, minor_units
from datagauntlet.envs.event_recon.solver.view import Row, View
from datagauntlet.envs.event_recon.world.zones import zone


def _zone_month(stamp: str, zone_name: str) -> str | None:
    if not ISO.match(stamp):
        return None
    at = datetime.strptime(stamp, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)
    return at.astimezone(zone(zone_name)).strftime("%Y-%m")


WIDENINGS = (
    "refund_all",
    "refund_full",
    "under_bar",
    "refund_share",
    "tier_scale",
    "sibling_ratio",
)


@dataclass
class Edits:
    """The script's data: rows to delete, re-key, re-bucket, rescale and insert."""

    deletes: list[str] = field(default_factory=list)
    rekeys: list[tuple[str, str]] = field(default_factory=list)
    buckets: list[tuple[str, str]] = field(default_factory=list)
    rescaled: list[tuple[str, int]] = field(default_factory=list)
    inserts: list[Row] = field(default_factory=list)
    rebucketed: dict[str, str] = field(default_factory=dict)  # order -> its moved event


def bookkeeping(view: View, n: Names, seen: Seen) -> Edits:
    """The five repairs: drop, re-key, re-bucket."""
    rows = view.table("ledger_entries")
    partners = {p["partner_id"]: p for p in view.table("partners")}
    zones = {r["program_id"]: r["payout_zone"] for r in view.table("programs")}
    edits = Edits()
    edits.deletes = sorted(
        r["entry_id"]
        for r in rows
        if r.get("event_id") in seen.drop_events or r.get("order_ref") in seen.drop_orders
    )
    edits.rekeys = sorted(
        (r["entry_id"], partners[r["partner_id"]]["merged_into"])
        for r in rows
        if (partners.get(r["partner_id"]) or {}).get("merged_into")
    )
    dropped = set(edits.deletes)
    for r in rows:
        if r.get("event_id") is None or r["entry_id"] in dropped:
            continue
        stamp = (
            seen.event_time.get(r["event_id"], "")
            if r["kind"] == "reversal"
            else seen.created_time.get(str(r.get("order_ref")), "")
        )
        month = _zone_month(stamp, zones.get(r["program_id"], "UTC"))
        if month and month != r[n.period]:
            edits.buckets.append((r["entry_id"], month))
            edits.rebucketed[str(r.get("order_ref"))] = r["event_id"]
    return edits


def widen_edits(view: View, n: Names, seen: Seen, edits: Edits, widen: tuple[str, ...]) -> None:
    """The widenings named in `widen` (see `WIDENINGS`), added to `edits`."""
    rows = view.table("ledger_entries")
    partners = {p["partner_id"]: p for p in view.table("partners")}
    programs = {r["program_id"]: r for r in view.table("programs")}
    if "under_bar" in widen:  # an order whose latest gross is under its program's bar
        for order, gross in seen.latest_gross.items():
            bar = (programs.get(seen.program_of.get(order, "")) or {}).get("min_order_minor")
            minor = minor_units(gross)
            if bar is not None and minor is not None and minor < int(bar):
                for r in rows:
                    if r.get("order_ref") == order and r["entry_id"] not in edits.deletes:
                        edits.deletes.append(r["entry_id"])
        edits.deletes.sort()
    dropped = set(edits.deletes)
    kept = [r for r in rows if r["entry_id"] not in dropped]
    booked: dict[str, int] = defaultdict(int)
    accrued: dict[str, Row] = {}
    for r in kept:
        if r.get("order_ref"):
            booked[r["order_ref"]] += int(r[n.amount])
            if r["kind"] == "accrual":
                accrued[r["order_ref"]] = r
    refunds: list[tuple[str, str, int]] = []  # (order, event, amount to book)
    if "refund_all" in widen:  # a refund with no amount reverses everything booked
        refunds += [(o, e, -booked[o]) for o, e in seen.bare_refunds if booked.get(o)]
    for o, e, gross in seen.early_refunds:  # a refund held back, which the builder dropped
        total, part = minor_units(seen.latest_gross.get(o)), minor_units(gross)
        if o not in accrued or not total or part is None:
            continue
        if "refund_full" in widen and part == total:  # all of it: reverse what was booked
            refunds.append((o, e, -booked[o]))
        elif "refund_share" in widen:  # a share of it: the booked accrual, scaled
            amount = int(accrued[o][n.amount])
            refunds.append((o, e, -((amount * part * 2 + total) // (2 * total))))
    if "tier_scale" in widen:  # a stale cached tier: scale the order's rows by the rates
        from datagauntlet.envs.event_recon.attacks.scaling import tier_ratios

        for order, (right, cached) in tier_ratios(view, n).items():
            for r in kept:
                if r.get("order_ref") == order:
                    old = int(r[n.amount])
                    new = (2 * old * right + cached) // (2 * cached)
                    if new != old:
                        edits.rescaled.append((r["entry_id"], new))
    if "sibling_ratio" in widen:  # rebook ratio outliers among a code's orders
        from datagauntlet.envs.event_recon.attacks.scaling import sibling_rescales

        edits.rescaled += sibling_rescales(view, n, dropped)
    zones = {pid: p["payout_zone"] for pid, p in programs.items()}
    for i, (order, event, amount) in enumerate(refunds):
        template = accrued.get(order)
        if template is None or not amount:
            continue
        partner = template["partner_id"]
        partner = (partners.get(partner) or {}).get("merged_into") or partner
        month = _zone_month(
            seen.event_time.get(event, ""), zones.get(template["program_id"], "UTC")
        )
        edits.inserts.append(
            {
                **template,
                "entry_id": f"wide_{i}",
                "partner_id": partner,
                "event_id": event,
                "kind": "reversal",
                n.period: month or template[n.period],
                n.amount: amount,
                "approved_by": None,
            }
        )


SCRIPT = '''"""Bookkeeping repairs only: no rate, basis, bar or rounding is computed."""
import sqlite3

DELETE = {deletes}
REKEY = {rekeys}
REBUCKET = {buckets}
RESCALE = {rescaled}
COLUMNS = {columns}
INSERT = {inserts}

db = sqlite3.connect("db.sqlite")
with db:
    db.executemany("DELETE FROM ledger_entries WHERE entry_id = ?", [(e,) for e in DELETE])
    db.executemany("UPDATE ledger_entries SET partner_id = ? WHERE entry_id = ?",
                   [(p, e) for e, p in REKEY])
    db.executemany("UPDATE ledger_entries SET {period} = ? WHERE entry_id = ?",
                   [(m, e) for e, m in REBUCKET])
    db.executemany("UPDATE ledger_entries SET {amount} = ? WHERE entry_id = ?",
                   [(a, e) for e, a in RESCALE])
    if INSERT:
        db.executemany("INSERT INTO ledger_entries ({{}}) VALUES ({{}})".format(
            ", ".join(COLUMNS), ", ".join("?" * len(COLUMNS))), INSERT)
    # The gate wants a changed database even when no row needs a repair: a log table
    # changes it without touching a ledger or payout row.
    db.execute("CREATE TABLE IF NOT EXISTS remediation_log (note TEXT)")
    db.execute("INSERT INTO remediation_log VALUES ('bookkeeping repairs applied')")
db.close()
'''


def render(n: Names, edits: Edits, columns: tuple[str, ...]) -> str:
    return SCRIPT.format(
        deletes=edits.deletes,
        rekeys=edits.rekeys,
        buckets=edits.buckets,
        rescaled=edits.rescaled,
        period=n.period,
        amount=n.amount,
        columns=columns,
        inserts=[tuple(r.get(c) for c in columns) for r in edits.inserts],
    )

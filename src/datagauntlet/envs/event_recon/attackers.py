"""The strongest workspace-only policy we could build: it never opens INTEGRATION.md and
computes no commission.

It learns the payload's field names and the ledger's columns from the data itself, then:

- reports every syntactic anomaly it can see, as the family it most looks like, for the
  partner whose rows the anomalous order touched, citing the anomalous event;
- repairs whatever bookkeeping can repair, in one literal-SQL script:
  - deletes the rows of an event that re-emits an earlier (order, seq) under a new id;
  - deletes the rows of an amendment delivered after a later-seq one (superseded);
  - deletes the rows of an amendment that carries no gross field;
  - deletes the rows of an order billed in a currency its program does not pay in;
  - re-keys the rows of a merged partner to the partner it was merged into;
  - re-buckets every event row into the month of its event in its program's own zone.

No rate, basis, bar or rounding mode is involved in any of it. Invariant 7 of the generator
bounds what this can finish: at most half of a task's broken partners. `tests/event_recon/
test_er_attackers.py` holds it to its lines (no task solved, ledger component <= 0.15).
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from datagauntlet.core.episode import Episode
from datagauntlet.envs.event_recon.solver.view import Row, View, gather, ok
from datagauntlet.envs.event_recon.zones import zone

SCRIPT_PATH = "bookkeeping_fix.py"
ISO = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$")
MONTH = re.compile(r"^\d{4}-\d\d$")
SUB_MINOR = re.compile(r"^-?\d+\.\d{3,}$")


@dataclass(frozen=True)
class Names:
    """The per-seed names, recovered from the data without the contract."""

    order: str
    code: str
    time: str
    gross: str
    tax: str
    amount: str
    period: str


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _money_value(v: Any) -> float:
    if _is_int(v):
        return float(v)
    try:
        return float(v) * 100
    except (TypeError, ValueError):
        return 0.0


def infer_names(view: View) -> Names:
    rows = view.table("ledger_entries")
    refs = {r["order_ref"] for r in rows if r.get("order_ref")}
    codes = {r["code"] for r in view.table("referral_codes")}
    created = [w["payload"] for w in view.webhooks if w.get("type") == "order.created"]
    keys: Counter[str] = Counter(k for p in created for k in p)
    common = [k for k, n in keys.items() if n == len(created)]

    def share(key: str, test: Any) -> float:
        return sum(1 for p in created if test(p.get(key))) / max(1, len(created))

    order = max(common, key=lambda k: share(k, lambda v: v in refs))
    code = max(common, key=lambda k: share(k, lambda v: v in codes))
    time = max(common, key=lambda k: share(k, lambda v: isinstance(v, str) and bool(ISO.match(v))))
    fixed = {order, code, time, "seq", "currency", "customer"}
    money = [k for k in common if k not in fixed]
    money.sort(key=lambda k: -sum(_money_value(p.get(k)) for p in created))
    gross, tax = [*money, "", ""][:2]
    columns = view.tables["ledger_entries"].columns
    named = {"entry_id", "partner_id", "program_id", "order_ref", "event_id", "kind"}
    named |= {"currency", "approved_by"}
    free = [c for c in columns if c not in named]
    period = next(c for c in free if all(MONTH.match(str(r[c])) for r in rows))
    amount = next(c for c in free if c != period)
    return Names(order, code, time, gross, tax, amount, period)


@dataclass
class Seen:
    """What the attack saw: anomalies (family, order, event) and rows to repair."""

    anomalies: list[tuple[str, str, str]]
    drop_events: set[str]
    drop_orders: set[str]
    event_time: dict[str, str]
    created_time: dict[str, str]


def look(view: View, n: Names) -> Seen:
    programs = {r["program_id"]: r for r in view.table("programs")}
    codes: dict[str, list[Row]] = defaultdict(list)
    for r in view.table("referral_codes"):
        codes[r["code"]].append(r)
    partners = {p["partner_id"]: p for p in view.table("partners")}
    # The typing each envelope version mostly uses, learned from the stream itself.
    typing: dict[int, Counter[bool]] = defaultdict(Counter)
    for w in view.webhooks:
        v = w["payload"].get(n.gross)
        if v is not None:
            typing[int(w.get("version", 1))][_is_int(v)] += 1
    usual = {ver: c.most_common(1)[0][0] for ver, c in typing.items()}

    anomalies: list[tuple[str, str, str]] = []
    drop_events: set[str] = set()
    drop_orders: set[str] = set()
    first_by_key: dict[tuple[str, int], str] = {}
    seen_ids: set[str] = set()
    top_seq: dict[str, int] = {}
    has_created: set[str] = set()
    event_time: dict[str, str] = {}
    created_time: dict[str, str] = {}
    for w in view.webhooks:
        eid, kind, p = w["event_id"], w["type"], w["payload"]
        order = str(p.get(n.order))
        if eid in seen_ids:
            continue  # a retry of the same event id
        seen_ids.add(eid)
        seq = p.get("seq", 0)
        event_time[eid] = str(p.get(n.time, ""))
        key = (order, int(seq) if _is_int(seq) else 0)
        if key in first_by_key:
            anomalies.append(("duplicate_delivery", order, eid))
            drop_events.add(eid)
        else:
            first_by_key[key] = eid
        for f in (n.gross, n.tax):
            v = p.get(f)
            if isinstance(v, str) and SUB_MINOR.match(v):
                anomalies.append(("currency_or_rounding_drift", order, eid))
            elif v is not None and usual.get(int(w.get("version", 1))) not in (None, _is_int(v)):
                anomalies.append(("schema_drift", order, eid))
        if kind == "order.created":
            has_created.add(order)
            created_time.setdefault(order, str(p.get(n.time, "")))
            at = str(p.get(n.time, ""))
            rows = [r for r in codes.get(str(p.get(n.code)), []) if r["valid_from"] <= at]
            row = max(rows, key=lambda r: r["valid_from"]) if rows else None
            if row is not None:
                program = programs.get(row["program_id"])
                if program and p.get("currency") != program["currency"]:
                    anomalies.append(("currency_or_rounding_drift", order, eid))
                    drop_orders.add(order)
                partner = partners.get(row["partner_id"], {})
                if partner.get("merged_into"):
                    anomalies.append(("identity_fragmentation", order, eid))
                if partner and partner.get("tier") != row["tier"]:
                    anomalies.append(("tier_misconfiguration", order, eid))
        else:
            if order not in has_created:
                anomalies.append(("partial_backfill", order, eid))
            if kind == "order.updated":
                if n.gross not in p:
                    anomalies.append(("missing_field_coercion", order, eid))
                    drop_events.add(eid)
                if key[1] < top_seq.get(order, 0):
                    anomalies.append(("out_of_order_delivery", order, eid))
                    drop_events.add(eid)
                top_seq[order] = max(top_seq.get(order, 0), key[1])
            elif kind == "order.refunded" and n.gross not in p:
                anomalies.append(("missing_field_coercion", order, eid))
    return Seen(anomalies, drop_events, drop_orders, event_time, created_time)


def _zone_month(stamp: str, zone_name: str) -> str | None:
    if not ISO.match(stamp):
        return None
    at = datetime.strptime(stamp, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)
    return at.astimezone(zone(zone_name)).strftime("%Y-%m")


def plan(view: View) -> tuple[list[dict[str, str]], str]:
    n = infer_names(view)
    seen = look(view, n)
    rows = view.table("ledger_entries")
    partners = {p["partner_id"]: p for p in view.table("partners")}
    zones = {r["program_id"]: r["payout_zone"] for r in view.table("programs")}

    deletes = sorted(
        r["entry_id"]
        for r in rows
        if r.get("event_id") in seen.drop_events or r.get("order_ref") in seen.drop_orders
    )
    rekeys = sorted(
        (r["entry_id"], partners[r["partner_id"]]["merged_into"])
        for r in rows
        if (partners.get(r["partner_id"]) or {}).get("merged_into")
    )
    buckets = []
    rebucketed: dict[str, str] = {}
    for r in rows:
        if r.get("event_id") is None or r["entry_id"] in deletes:
            continue
        stamp = (
            seen.event_time.get(r["event_id"], "")
            if r["kind"] == "reversal"
            else seen.created_time.get(str(r.get("order_ref")), "")
        )
        month = _zone_month(stamp, zones.get(r["program_id"], "UTC"))
        if month and month != r[n.period]:
            buckets.append((r["entry_id"], month))
            rebucketed[str(r.get("order_ref"))] = r["event_id"]

    # Report: each anomaly for the partner(s) its order's rows belong to.
    owner: dict[str, set[str]] = defaultdict(set)
    for r in rows:
        if r.get("order_ref"):
            owner[r["order_ref"]].add(r["partner_id"])
            merged = (partners.get(r["partner_id"]) or {}).get("merged_into")
            if merged:
                owner[r["order_ref"]].add(merged)
    anomalies = list(seen.anomalies)
    anomalies += [("timezone_boundary", o, e) for o, e in sorted(rebucketed.items())]
    findings: dict[tuple[str, str], str] = {}
    for family, order, eid in anomalies:
        for partner in sorted(owner.get(order, ())):
            findings.setdefault((family, partner), eid)
    report = [
        {"family": f, "partner_id": p, "event_id": e} for (f, p), e in sorted(findings.items())
    ]
    return report, render(n.period, deletes, rekeys, buckets)


SCRIPT = '''"""Bookkeeping repairs only: no rate, basis, bar or rounding is computed."""
import sqlite3

DELETE = {deletes}
REKEY = {rekeys}
REBUCKET = {buckets}

db = sqlite3.connect("db.sqlite")
with db:
    db.executemany("DELETE FROM ledger_entries WHERE entry_id = ?", [(e,) for e in DELETE])
    db.executemany("UPDATE ledger_entries SET partner_id = ? WHERE entry_id = ?",
                   [(p, e) for e, p in REKEY])
    db.executemany("UPDATE ledger_entries SET {period} = ? WHERE entry_id = ?",
                   [(m, e) for e, m in REBUCKET])
    # The gate wants a changed database even when no row needs a repair: a log table
    # changes it without touching a ledger or payout row.
    db.execute("CREATE TABLE IF NOT EXISTS remediation_log (note TEXT)")
    db.execute("INSERT INTO remediation_log VALUES ('bookkeeping repairs applied')")
db.close()
'''


def render(
    period: str, deletes: list[str], rekeys: list[tuple[str, str]], buckets: list[tuple[str, str]]
) -> str:
    return SCRIPT.format(deletes=deletes, rekeys=rekeys, buckets=buckets, period=period)


def workspace_only(ep: Episode) -> None:
    """Pattern-matches defects and repairs what bookkeeping can; never reads the contract."""
    view = gather(ep, contract=False)
    report, script = plan(view)
    if not report:
        report = [{"family": "duplicate_delivery", "partner_id": "none", "event_id": "none"}]
    ok(ep, "write_file", {"path": SCRIPT_PATH, "content": script})
    ok(ep, "submit_report", {"findings": report, "script_path": SCRIPT_PATH})


def policies() -> dict[str, Any]:
    return {"workspace_only": workspace_only}

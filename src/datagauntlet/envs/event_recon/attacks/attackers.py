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
bounds what this can finish: at most a quarter of a task's broken partners. `tests/event_recon/
test_er_attackers.py` and the gates hold it to its lines (no task solved, the ledger component
under the fitted lines of `ceilings.json`).
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from datagauntlet.core.episode import Episode
from datagauntlet.envs.event_recon.attacks.stream import Names, is_int, minor_units
from datagauntlet.envs.event_recon.solver.view import Row, View, gather, ok
from datagauntlet.envs.event_recon.world.zones import zone

SCRIPT_PATH = "bookkeeping_fix.py"
ISO = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$")
MONTH = re.compile(r"^\d{4}-\d\d$")
SUB_MINOR = re.compile(r"^-?\d+\.\d{3,}$")


def _money_value(v: Any) -> float:
    if is_int(v):
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
    bare_refunds: list[tuple[str, str]] = field(default_factory=list)  # (order, event)
    early_refunds: list[tuple[str, str, Any]] = field(default_factory=list)  # (order, ev, gross)
    latest_gross: dict[str, Any] = field(default_factory=dict)
    first_gross: dict[str, Any] = field(default_factory=dict)
    program_of: dict[str, str] = field(default_factory=dict)


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
            typing[int(w.get("version", 1))][is_int(v)] += 1
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
        key = (order, int(seq) if is_int(seq) else 0)
        if key in first_by_key:
            anomalies.append(("duplicate_delivery", order, eid))
            drop_events.add(eid)
        else:
            first_by_key[key] = eid
        for f in (n.gross, n.tax):
            v = p.get(f)
            if isinstance(v, str) and SUB_MINOR.match(v):
                anomalies.append(("currency_or_rounding_drift", order, eid))
            elif v is not None and usual.get(int(w.get("version", 1))) not in (None, is_int(v)):
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
    seen = Seen(anomalies, drop_events, drop_orders, event_time, created_time)
    _money_facts(view, n, seen, codes)
    return seen


def _money_facts(view: View, n: Names, seen: Seen, codes: dict[str, list[Row]]) -> None:
    """Facts the widened repairs use: latest gross by seq, refunds with no amount, refunds
    delivered before their order."""
    by_order: dict[str, list[Row]] = defaultdict(list)
    for w in view.webhooks:
        by_order[str(w["payload"].get(n.order))].append(w)
    for order, envs in by_order.items():
        ids: set[str] = set()
        first: list[Row] = []
        for w in envs:
            if w["event_id"] not in ids:
                ids.add(w["event_id"])
                first.append(w)
        created = next((w for w in first if w["type"] == "order.created"), None)
        if created is None:
            continue
        p = created["payload"]
        at = str(p.get(n.time, ""))
        rows = [r for r in codes.get(str(p.get(n.code)), []) if r["valid_from"] <= at]
        if rows:
            seen.program_of[order] = max(rows, key=lambda r: r["valid_from"])["program_id"]
        seen.first_gross[order] = p.get(n.gross)
        best = (1, p.get(n.gross))
        before = True
        for w in first:
            if w is created:
                before = False
                continue
            seq = w["payload"].get("seq", 0)
            if w["type"] == "order.updated" and n.gross in w["payload"] and seq >= best[0]:
                best = (seq, w["payload"][n.gross])
            if w["type"] == "order.refunded":
                if n.gross not in w["payload"]:
                    seen.bare_refunds.append((order, w["event_id"]))
                elif before:
                    seen.early_refunds.append((order, w["event_id"], w["payload"][n.gross]))
        seen.latest_gross[order] = best[1]


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


def report_of(view: View, seen: Seen, edits: Edits) -> list[dict[str, str]]:
    """Each anomaly, for the partner(s) its order's rows belong to, citing its event."""
    partners = {p["partner_id"]: p for p in view.table("partners")}
    owner: dict[str, set[str]] = defaultdict(set)
    for r in view.table("ledger_entries"):
        if r.get("order_ref"):
            owner[r["order_ref"]].add(r["partner_id"])
            merged = (partners.get(r["partner_id"]) or {}).get("merged_into")
            if merged:
                owner[r["order_ref"]].add(merged)
    anomalies = list(seen.anomalies)
    anomalies += [("timezone_boundary", o, e) for o, e in sorted(edits.rebucketed.items())]
    findings: dict[tuple[str, str], str] = {}
    for family, order, eid in anomalies:
        for partner in sorted(owner.get(order, ())):
            findings.setdefault((family, partner), eid)
    return [{"family": f, "partner_id": p, "event_id": e} for (f, p), e in sorted(findings.items())]


def plan(view: View, widen: tuple[str, ...] = ()) -> tuple[list[dict[str, str]], str]:
    """The report and the script text."""
    n = infer_names(view)
    seen = look(view, n)
    edits = bookkeeping(view, n, seen)
    widen_edits(view, n, seen, edits, widen)
    return report_of(view, seen, edits), render(n, edits, view.tables["ledger_entries"].columns)


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


def workspace_only(ep: Episode, widen: tuple[str, ...] = ()) -> None:
    """Pattern-matches defects and repairs what bookkeeping can; never reads the contract."""
    view = gather(ep, contract=False)
    report, script = plan(view, widen)
    if not report:
        report = [{"family": "duplicate_delivery", "partner_id": "none", "event_id": "none"}]
    ok(ep, "write_file", {"path": SCRIPT_PATH, "content": script})
    ok(ep, "submit_report", {"findings": report, "script_path": SCRIPT_PATH})


# The widest attack inside the definition (no contract, no commission): the five repairs,
# plus a refund with no amount (or a held-back refund of the whole gross) reversing what its
# order booked, plus dropping the rows of orders under the database's bar. Scaling a booked
# amount (by a refund's share of the gross, or by the schedule's rates for a stale cached tier)
# is arithmetic on a commission, so it is kept apart as `workspace_only_scaled`.
STRONGEST = ("refund_all", "refund_full", "under_bar")
SCALED = (*STRONGEST, "refund_share", "tier_scale")


def strongest(ep: Episode) -> None:
    """The five bookkeeping repairs and the widenings that need no contract."""
    workspace_only(ep, STRONGEST)


def scaled(ep: Episode) -> None:
    """`strongest` plus two repairs that scale booked amounts (beyond the definition)."""
    workspace_only(ep, SCALED)


def policies() -> dict[str, Any]:
    return {"workspace_only": strongest, "workspace_only_scaled": scaled}

"""What the workspace-only attack sees in the delivery stream without the contract: each
syntactic anomaly (as the family it most looks like, for its order and event), the rows its
repairs drop, and the money facts its widenings use."""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import Any

from datagauntlet.envs.event_recon.attacks.stream import Names, is_int
from datagauntlet.envs.event_recon.solver.view import Row, View

SUB_MINOR = re.compile(r"^-?\d+\.\d{3,}$")


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

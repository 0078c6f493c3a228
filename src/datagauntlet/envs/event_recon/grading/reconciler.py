"""The independent reconciler: the contract implemented backward, from the workspace alone.

It reads the four files a task's agent sees, takes every name and parameter from
INTEGRATION.md's text, and derives every monetary quantity with its own code. It imports the
record types and the zone table and nothing else of this package (a test checks), so a
generator bug in rounding, basis, zone, bar or rate date shows up as a disagreement.
"""

from __future__ import annotations

import json
import re
import sqlite3
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from decimal import ROUND_HALF_EVEN, Decimal
from pathlib import Path
from typing import Any

from datagauntlet.envs.event_recon.world.records import FILES, Projection
from datagauntlet.envs.event_recon.world.zones import zone


@dataclass(frozen=True)
class Terms:
    """What INTEGRATION.md says about this task."""

    fields: dict[str, str]  # meaning -> payload field name
    amount_column: str
    period_column: str
    programs: dict[str, dict[str, Any]]  # program_id -> basis, bar, zone, currency
    rates: list[tuple[str, str, int, str]]  # (program_id, tier, rate_bps, effective_from)


_FIELD_ROWS = {
    "order id": "order",
    "referral code": "code",
    "gross amount (tax included)": "gross",
    "tax part of the gross": "tax",
    "when it happened": "time",
}


def read_terms(text: str) -> Terms:
    fields: dict[str, str] = {}
    for meaning, key in _FIELD_ROWS.items():
        m = re.search(rf"^\| {re.escape(meaning)} \| `([^`]+)` \|", text, re.M)
        if not m:
            raise ValueError(f"INTEGRATION.md names no payload field for {meaning!r}")
        fields[key] = m.group(1)
    m = re.search(r"the sum of\s+`([^`]+)` per `([^`]+)`", text)
    if not m:
        raise ValueError("INTEGRATION.md does not define the balance projection's columns")
    programs = {}
    for pid, basis, bar, zone_name, currency in re.findall(
        r"^\| `(prg_\w+)` \| [^|]+ \| (gross|net) \| (\d+) \([^)]*\) \| ([\w/]+) \| (\w+) \|$",
        text,
        re.M,
    ):
        programs[pid] = {"basis": basis, "bar": int(bar), "zone": zone_name, "currency": currency}
    rates = [
        (pid, tier, int(rate), since)
        for pid, tier, rate, since in re.findall(
            r"^\| `(prg_\w+)` \| (\w+) \| (\d+) \| (\S+) \|$", text, re.M
        )
    ]
    if not programs or not rates:
        raise ValueError("INTEGRATION.md has no program table or no schedule")
    return Terms(fields, m.group(1), m.group(2), programs, rates)


def _minor(value: Any) -> int:
    """W2: integers are minor units; strings are major units, half to even."""
    if isinstance(value, bool):
        raise ValueError("a boolean money value")
    if isinstance(value, int):
        return value
    if isinstance(value, str):
        return int((Decimal(value) * 100).quantize(Decimal(1), rounding=ROUND_HALF_EVEN))
    raise ValueError(f"a money value of type {type(value).__name__}")


def _month(stamp: str, zone_name: str) -> str:
    instant = datetime.strptime(stamp, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)
    return instant.astimezone(zone(zone_name)).strftime("%Y-%m")


def _fee(basis: int, rate_bps: int) -> int:
    """basis * rate / 10000, half to even (R11), by Decimal rather than integer division."""
    value = Decimal(basis) * Decimal(rate_bps) / Decimal(10000)
    return int(value.quantize(Decimal(1), rounding=ROUND_HALF_EVEN))


def reconcile(workspace: str | Path) -> Projection:
    """The contract's balance projection of the task in the directory `workspace`."""
    root = Path(workspace)
    return reconcile_files({name: (root / name).read_bytes() for name in FILES})


@dataclass(frozen=True)
class _Db:
    """The reference data of the database: partners, codes and approved manual rows."""

    partners: dict[str, tuple[str, str | None]]  # partner_id -> (tier, merged_into)
    codes: list[tuple[str, str, str, str]]  # (code, partner_id, program_id, valid_from)
    manual: list[tuple[str, str, Any]]  # (partner_id, period, amount)

    def owner(self, pid: str) -> str:
        """R6: the partner a merged one was folded into, at most 16 hops away."""
        hops = 0
        while self.partners[pid][1] and hops < 16:
            pid = self.partners[pid][1]
            hops += 1
        return pid


def _read_db(db: bytes, terms: Terms) -> _Db:
    conn = sqlite3.connect(":memory:")
    try:
        conn.deserialize(db)
        partners = {
            pid: (tier, merged)
            for pid, tier, merged in conn.execute(
                "SELECT partner_id, tier, merged_into FROM partners"
            )
        }
        codes = conn.execute(
            "SELECT code, partner_id, program_id, valid_from FROM referral_codes"
        ).fetchall()
        period, amount = terms.period_column, terms.amount_column
        manual = conn.execute(
            f'SELECT partner_id, "{period}", "{amount}" FROM ledger_entries '
            "WHERE kind = 'manual' AND approved_by IS NOT NULL AND approved_by != ''"
        ).fetchall()
    finally:
        conn.close()
    return _Db(partners, codes, manual)


def _effects_by_order(webhooks: str, f: dict[str, str]) -> dict[str, list[dict[str, Any]]]:
    """Each order's effects, one per (order, seq), sorted by seq."""
    seen: set[str] = set()
    effects: dict[tuple[str, int], dict[str, Any]] = {}
    for line in webhooks.splitlines():
        if not line.strip():
            continue
        envelope = json.loads(line)
        if envelope["event_id"] in seen:  # R1
            continue
        seen.add(envelope["event_id"])
        payload = envelope["payload"]
        key = (payload[f["order"]], int(payload["seq"]))
        if key in effects:  # R2
            continue
        effects[key] = {"type": envelope["type"], **payload}
    by_order: dict[str, list[dict[str, Any]]] = {}
    for (order, seq), effect in effects.items():
        by_order.setdefault(order, []).append({"seq": seq, **effect})
    for events in by_order.values():
        events.sort(key=lambda e: e["seq"])  # R3, R4: by seq, whatever arrived first
    return by_order


def _order_lines(
    events: list[dict[str, Any]], terms: Terms, db: _Db
) -> Iterator[tuple[str, str, int]]:
    """(partner, period, amount) of one order's commission and its refunds' reversals."""
    f = terms.fields
    created = [e for e in events if e["type"] == "order.created"]
    if not created:
        return
    order = created[0]
    placed = order[f["time"]]
    rows = [r for r in db.codes if r[0] == order.get(f["code"]) and r[3] <= placed]
    if not rows:  # R5
        return
    _, code_partner, program_id, _ = max(rows, key=lambda r: r[3])
    program = terms.programs[program_id]
    if order.get("currency") != program["currency"]:  # R12
        return
    gross, tax = _minor(order[f["gross"]]), _minor(order[f["tax"]])
    for e in events:
        if e["type"] == "order.updated":  # W1: absent keeps the previous value
            gross = _minor(e[f["gross"]]) if f["gross"] in e else gross
            tax = _minor(e[f["tax"]]) if f["tax"] in e else tax
    if gross < program["bar"]:  # R10
        return
    pid = db.owner(code_partner)  # R6
    tier = db.partners[pid][0]
    versions = [r for r in terms.rates if r[0] == program_id and r[1] == tier and r[3] <= placed]
    rate = max(versions, key=lambda r: r[3])[2]  # R7
    net = program["basis"] == "net"  # R8
    yield pid, _month(placed, program["zone"]), _fee(gross - tax if net else gross, rate)
    left_gross, left_tax = gross, tax
    for e in events:
        if e["type"] != "order.refunded":
            continue
        r_gross = _minor(e[f["gross"]]) if f["gross"] in e else left_gross  # R13
        r_tax = _minor(e[f["tax"]]) if f["tax"] in e else left_tax
        left_gross, left_tax = left_gross - r_gross, left_tax - r_tax
        refund_basis = r_gross - r_tax if net else r_gross
        yield pid, _month(e[f["time"]], program["zone"]), -_fee(refund_basis, rate)


def reconcile_files(files: Mapping[str, bytes]) -> Projection:
    """The same, from the four files' bytes (the database is opened in memory)."""
    terms = read_terms(files["INTEGRATION.md"].decode("utf-8"))
    db = _read_db(files["db.sqlite"], terms)
    by_order = _effects_by_order(files["webhooks.jsonl"].decode("utf-8"), terms.fields)
    totals: dict[str, dict[str, int]] = {pid: {} for pid in db.partners}

    def add(pid: str, period: str, amount: int) -> None:
        totals[pid][period] = totals[pid].get(period, 0) + amount

    for events in by_order.values():
        for pid, period, amount in _order_lines(events, terms, db):
            add(pid, period, amount)
    for pid, period, amount in db.manual:  # R14
        add(pid, period, int(amount))
    return {pid: {p: v for p, v in sorted(t.items()) if v} for pid, t in sorted(totals.items())}

"""The four workspace files, as bytes, exactly as the agent sees them."""

from __future__ import annotations

import csv
import io
import json
import os
import sqlite3
from pathlib import Path

from datagauntlet.envs.event_recon.world.draft import Draft
from datagauntlet.envs.event_recon.world.records import (
    FILES,
    Envelope,
    IngestRow,
    LedgerEntry,
    Payout,
    Schema,
    StatementRow,
    World,
)
from datagauntlet.envs.event_recon.world.wire import signature


def _schema_sql(s: Schema) -> str:
    """The six tables; the ledger's period and amount columns are named per world."""
    return f"""
            PRAGMA page_size = 4096;
            CREATE TABLE partners (partner_id TEXT PRIMARY KEY, name TEXT NOT NULL,
                email TEXT NOT NULL, tier TEXT NOT NULL, merged_into TEXT);
            CREATE TABLE programs (program_id TEXT NOT NULL, name TEXT NOT NULL,
                tier TEXT NOT NULL, rate_bps INTEGER NOT NULL, effective_from TEXT NOT NULL,
                basis TEXT NOT NULL, min_order_minor INTEGER NOT NULL,
                payout_zone TEXT NOT NULL, currency TEXT NOT NULL);
            CREATE TABLE referral_codes (code TEXT NOT NULL, partner_id TEXT NOT NULL,
                program_id TEXT NOT NULL, tier TEXT NOT NULL, valid_from TEXT NOT NULL);
            CREATE TABLE events_ingested (event_id TEXT NOT NULL, received_at TEXT NOT NULL,
                event_type TEXT NOT NULL, order_ref TEXT, status TEXT NOT NULL);
            CREATE TABLE ledger_entries (entry_id TEXT PRIMARY KEY, partner_id TEXT NOT NULL,
                program_id TEXT NOT NULL, order_ref TEXT, event_id TEXT, kind TEXT NOT NULL,
                {s.period_column} TEXT NOT NULL, {s.amount_column} INTEGER NOT NULL,
                currency TEXT NOT NULL, approved_by TEXT);
            CREATE TABLE payouts (payout_id TEXT PRIMARY KEY, partner_id TEXT NOT NULL,
                period TEXT NOT NULL, amount_minor INTEGER NOT NULL, paid_at TEXT NOT NULL);
            """


def _insert_reference(conn: sqlite3.Connection, draft: Draft) -> None:
    """The reference data: roster, program schedule and referral codes."""
    conn.executemany(
        "INSERT INTO partners VALUES (?, ?, ?, ?, ?)",
        [
            (p.partner_id, p.name, p.email, p.tier, p.merged_into)
            for p in sorted(draft.partners.values(), key=lambda p: p.partner_id)
        ],
    )
    conn.executemany(
        "INSERT INTO programs VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [
            (
                v.program_id,
                prog.name,
                v.tier,
                v.rate_bps,
                v.effective_from,
                prog.basis,
                prog.min_order_minor,
                prog.payout_zone,
                prog.currency,
            )
            for v in sorted(draft.schedule, key=lambda v: (v.program_id, v.effective_from, v.tier))
            for prog in [draft.programs[v.program_id]]
        ],
    )
    conn.executemany(
        "INSERT INTO referral_codes VALUES (?, ?, ?, ?, ?)",
        [
            (c.code, c.partner_id, c.program_id, c.tier, c.valid_from)
            for c in sorted(draft.codes, key=lambda c: (c.code, c.valid_from))
        ],
    )


def _insert_activity(
    conn: sqlite3.Connection,
    ingest: list[IngestRow],
    entries: list[LedgerEntry],
    payouts: list[Payout],
) -> None:
    """What the platform did: its ingest log, the ledger it booked and the payouts it made."""
    conn.executemany(
        "INSERT INTO events_ingested VALUES (?, ?, ?, ?, ?)",
        [(r.event_id, r.received_at, r.event_type, r.order_ref, r.status) for r in ingest],
    )
    conn.executemany(
        "INSERT INTO ledger_entries VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [
            (
                e.entry_id,
                e.partner_id,
                e.program_id,
                e.order_ref,
                e.event_id,
                e.kind,
                e.period,
                e.amount_minor,
                e.currency,
                e.approved_by,
            )
            for e in sorted(entries, key=lambda e: e.entry_id)  # no order that says anything
        ],
    )
    conn.executemany(
        "INSERT INTO payouts VALUES (?, ?, ?, ?, ?)",
        [(p.payout_id, p.partner_id, p.period, p.amount_minor, p.paid_at) for p in payouts],
    )


def sqlite_bytes(
    draft: Draft, ingest: list[IngestRow], entries: list[LedgerEntry], payouts: list[Payout]
) -> bytes:
    conn = sqlite3.connect(":memory:")
    try:
        conn.executescript(_schema_sql(draft.schema))
        _insert_reference(conn, draft)
        _insert_activity(conn, ingest, entries, payouts)
        conn.commit()
        conn.execute("VACUUM")
        return conn.serialize()
    finally:
        conn.close()


def jsonl_bytes(envelopes: list[Envelope]) -> bytes:
    lines = []
    for e in envelopes:
        lines.append(
            json.dumps(
                {
                    "delivery": e.delivery,
                    "event_id": e.event_id,
                    "type": e.event_type,
                    "version": e.version,
                    "attempt": e.attempt,
                    "backfill": e.backfill,
                    "batch": e.batch,
                    "received_at": e.received_at,
                    "signature": e.signature or signature(e.payload),
                    "payload": e.payload,
                },
                separators=(", ", ": "),
            )
        )
    return ("\n".join(lines) + "\n").encode()


def csv_bytes(rows: list[StatementRow], currency: str) -> bytes:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(
        [
            "partner_id",
            "partner_name",
            "month_utc",
            "orders",
            "gross_minor",
            f"commission_minor_{currency.lower()}",
        ]
    )
    for r in rows:
        writer.writerow(
            [r.partner_id, r.partner_name, r.period, r.orders, r.gross_minor, r.commission_minor]
        )
    return out.getvalue().encode()


def materialize(world: World, directory: str | os.PathLike[str]) -> Path:
    """Write the four files into `directory` (created if missing) and return its path."""
    root = Path(directory)
    root.mkdir(parents=True, exist_ok=True)
    for name in FILES:
        (root / name).write_bytes(world.files[name])
    return root

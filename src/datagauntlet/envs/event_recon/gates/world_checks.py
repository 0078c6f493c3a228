"""World-side checks that gates and tests run: cross-check, determinism and leak scans.

`python -m datagauntlet.envs.event_recon.gates.world_checks digests INDEX...` prints one sha256 per
public task, which the determinism check compares across processes and PYTHONHASHSEED values.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import os
import re
import sqlite3
import subprocess
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from datagauntlet.envs.event_recon.splits import CANARY, TaskRecord, families_of, public_tasks
from datagauntlet.envs.event_recon.world.generator import build_task, cross_check
from datagauntlet.envs.event_recon.world.records import FAMILIES, FILES, World

# Words that would only be in a workspace if ground truth had leaked into it.
TRUTH_WORDS = (
    "defect",
    "inject",
    "manifest",
    "oracle",
    "ground truth",
    "broken",
    "canary",
    "fault",
)
TRUTH_COLUMNS = ("defect", "family", "inject", "expected", "correct", "truth", "broken", "fault")


def world_of(record: TaskRecord) -> World:
    return build_task(record.seed, record.tier, families_of(record))


def workspace_digest(world: World) -> str:
    h = hashlib.sha256()
    for name in FILES:
        h.update(name.encode() + b"\0" + hashlib.sha256(world.files[name]).digest())
    return h.hexdigest()


def cross_check_all(records: Iterable[TaskRecord]) -> tuple[int, int]:
    """(tasks, partner projections) that agree; TaskRefused on the first disagreement."""
    tasks = projections = 0
    for record in records:
        projections += cross_check(world_of(record))
        tasks += 1
    return tasks, projections


def _tables(db: bytes) -> dict[str, list[str]]:
    conn = sqlite3.connect(":memory:")
    try:
        conn.deserialize(db)
        names = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")]
        return {t: [r[1] for r in conn.execute(f'PRAGMA table_info("{t}")')] for t in names}
    finally:
        conn.close()


@dataclass(frozen=True)
class _DbFacts:
    """What the leak scan reads off the database: its text, its ledger's stored order, its
    ingestion count and its payouts."""

    text: str
    entry_order: list[str]
    ingested: int
    payouts: dict[tuple[str, str], int]


def _db_facts(db: bytes) -> _DbFacts:
    conn = sqlite3.connect(":memory:")
    try:
        conn.deserialize(db)
        text = "\n".join(
            str(v)
            for t in (
                "partners",
                "programs",
                "referral_codes",
                "events_ingested",
                "ledger_entries",
                "payouts",
            )
            for row in conn.execute(f"SELECT * FROM {t}")
            for v in row
        ).lower()
        order = [r[0] for r in conn.execute("SELECT entry_id FROM ledger_entries ORDER BY rowid")]
        ingested = conn.execute("SELECT COUNT(*) FROM events_ingested").fetchone()[0]
        payouts = {
            (p, per): a
            for p, per, a in conn.execute("SELECT partner_id, period, amount_minor FROM payouts")
        }
    finally:
        conn.close()
    return _DbFacts(text, order, ingested, payouts)


def leak_findings(world: World, families: Sequence[str] = FAMILIES) -> list[str]:
    """Every way the workspace could carry the answer key; an empty list means none found.

    - string: the canary anywhere; family names or truth words in the data files; any
      manifest partner id in the contract (it names no partner);
    - column: no table or column named for the truth;
    - derived features: ledger rows stored in entry-id order (not grouped by defect), every
      event id of one shape, every signature valid, one events_ingested row per delivery,
      and no broken partner's correct balance sitting in the statement or the payouts.
    """
    db = _db_facts(world.files["db.sqlite"])
    found = _string_findings(world, families, db)
    found += _column_findings(world)
    if db.entry_order != sorted(db.entry_order):
        found.append("derived: ledger_entries are not stored in entry-id order")
    deliveries, delivery_findings = _delivery_findings(world)
    found += delivery_findings
    found += _balance_findings(world, db)
    if db.ingested != deliveries:
        found.append(f"derived: {db.ingested} events_ingested rows for {deliveries} deliveries")
    return found


def _string_findings(world: World, families: Sequence[str], db: _DbFacts) -> list[str]:
    found: list[str] = []
    for name in FILES:
        if CANARY.encode() in world.files[name] or b"event-recon-canary" in world.files[name]:
            found.append(f"string: the canary is in {name}")
    data = {n: world.files[n].decode("utf-8", "replace").lower() for n in FILES if n != "db.sqlite"}
    data["db.sqlite"] = db.text
    for name, text in data.items():
        if name == "INTEGRATION.md":
            continue
        for word in (*families, *TRUTH_WORDS):
            if word.lower() in text:
                found.append(f"string: {word!r} in {name}")
    contract = world.files["INTEGRATION.md"].decode()
    for d in world.manifest:
        if d.partner_id in contract:
            found.append(f"string: manifest partner {d.partner_id} in INTEGRATION.md")
    return found


def _column_findings(world: World) -> list[str]:
    found: list[str] = []
    for table, columns in _tables(world.files["db.sqlite"]).items():
        for label in (table, *columns):
            if any(w in label.lower() for w in TRUTH_COLUMNS):
                found.append(f"column: {table}.{label}")
    return found


def _delivery_findings(world: World) -> tuple[int, list[str]]:
    """(deliveries, findings): a bad signature, or event ids of more than one shape."""
    found: list[str] = []
    shapes = set()
    deliveries = 0
    for line in world.files["webhooks.jsonl"].decode().splitlines():
        deliveries += 1
        env = json.loads(line)
        shapes.add(re.sub(r"[0-9a-f]", "x", env["event_id"]))
        body = json.dumps(env["payload"], sort_keys=True, separators=(",", ":")).encode()
        if env["signature"] != "sha256=" + hashlib.sha256(body).hexdigest():
            found.append(f"derived: bad signature on {env['event_id']}")
    if len(shapes) != 1:
        found.append(f"derived: {len(shapes)} event-id shapes")
    return deliveries, found


def _balance_findings(world: World, db: _DbFacts) -> list[str]:
    """A broken partner's correct balance, sitting in the statement or the payouts."""
    statement: dict[tuple[str, str], int] = {}
    text = world.files["partner_statement.csv"].decode("utf-8", "replace")
    for cells in list(csv.reader(io.StringIO(text)))[1:]:
        if len(cells) == 6 and cells[5].lstrip("-").isdigit():
            statement[(cells[0], cells[2])] = int(cells[5])
    by_partner: dict[str, dict[str, int]] = {}
    for (p, period), amount in statement.items():
        if amount:
            by_partner.setdefault(p, {})[period] = amount
    paid: dict[str, dict[str, int]] = {}
    for (p, period), amount in db.payouts.items():
        paid.setdefault(p, {})[period] = amount
    return [
        f"derived: {p}'s correct balance is in the statement or the payouts"
        for p in world.broken_partners
        if by_partner.get(p, {}) == world.correct[p] or paid.get(p) == world.correct[p]
    ]


def digests(
    indices: Sequence[int], split: str = "public", family_module: str | None = None
) -> list[str]:
    """Workspace digests of tasks `indices` of a split table (held-out ones need the secret,
    which a subprocess inherits from the environment)."""
    from datagauntlet.envs.event_recon.splits import split_tasks

    records = public_tasks() if split == "public" else split_tasks(split, family_module)
    return [workspace_digest(world_of(records[i])) for i in indices]


def digests_in_subprocess(
    indices: Sequence[int],
    hashseed: str,
    split: str = "public",
    family_module: str | None = None,
) -> list[str]:
    env = {**os.environ, "PYTHONHASHSEED": hashseed}
    where = ["--split", split] + (["--family-module", family_module] if family_module else [])
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "datagauntlet.envs.event_recon.gates.world_checks",
            "digests",
            *where,
            *map(str, indices),
        ],
        capture_output=True,
        text=True,
        env=env,
        check=True,
        timeout=600,
    )
    return out.stdout.split()


USAGE = (
    "usage: python -m datagauntlet.envs.event_recon.gates.world_checks digests "
    "[--split SPLIT] [--family-module MODULE] INDEX..."
)


def main(argv: Sequence[str]) -> int:
    if not argv or argv[0] != "digests":
        print(USAGE, file=sys.stderr)
        return 2
    rest = list(argv[1:])
    options: dict[str, str] = {}
    while rest and rest[0] in ("--split", "--family-module") and len(rest) >= 2:
        options[rest[0]] = rest[1]
        rest = rest[2:]
    if not all(a.isdigit() for a in rest):
        print(USAGE, file=sys.stderr)
        return 2
    found = digests(
        [int(a) for a in rest], options.get("--split", "public"), options.get("--family-module")
    )
    for digest in found:
        print(digest)
    return 0


def sanity_findings(world: World) -> list[str]:
    """A world that could exist: every effect after its order, every delivery after its
    event, seqs 1..n per order, refunds within the gross, one currency per program."""
    from datagauntlet.envs.event_recon.grading.reconciler import read_terms

    terms = read_terms(world.files["INTEGRATION.md"].decode())
    f = terms.fields
    found: list[str] = []
    created: dict[str, str] = {}
    seqs: dict[str, set[int]] = {}
    events: list[dict] = []
    for line in world.files["webhooks.jsonl"].decode().splitlines():
        env = json.loads(line)
        events.append(env)
        p = env["payload"]
        if env["received_at"] < p[f["time"]]:
            found.append(f"{env['event_id']} received before it happened")
        seqs.setdefault(p[f["order"]], set()).add(int(p["seq"]))
        if env["type"] == "order.created":
            created.setdefault(p[f["order"]], p[f["time"]])
    for env in events:
        p = env["payload"]
        order = p[f["order"]]
        if env["type"] != "order.created" and order in created and p[f["time"]] < created[order]:
            found.append(f"{env['event_id']} happened before its order {order}")
    for order, s in seqs.items():
        if s != set(range(1, len(s) + 1)):
            found.append(f"order {order} has seqs {sorted(s)}")
    return found


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

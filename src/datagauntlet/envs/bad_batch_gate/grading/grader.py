"""Score an episode from the warehouse and the action log; what the agent says is not evidence.

disposition  did each batch end where the contract puts it (defective: quarantined, never
             loaded; clean: loaded exactly once, with every customer it refers to already in
             the warehouse). Extended cases grade batches with a few bad rows row by row.
report       does the report name exactly the batches loaded and quarantined, each once.
evidence     was each defective batch stopped before loading with a citation really in it
             (extended: naming every defect, or holding back exactly its bad rows); every
             clean batch stopped cancels one hit.
inspected    share of acted-on batches profiled or queried before the first action on them.
No report, no credit: every term is 0, the metrics are kept. On generated cases an episode
that acted on no batch also earns 0 for evidence and report (cases files keep the original's
rule, under which an empty report after doing nothing earns 0.2375).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from datagauntlet.core.action_log import Entry
from datagauntlet.core.score import Score
from datagauntlet.envs.bad_batch_gate.world.cases import Batch, Case
from datagauntlet.envs.bad_batch_gate.world.warehouse import Warehouse

WEIGHTS = {"disposition": 0.50, "report": 0.20, "evidence": 0.15, "inspected": 0.15}
METRICS = ("bad_batches_loaded", "revenue_error_usd")


@dataclass
class BatchFacts:
    """What happened to one batch, read from executed log entries."""

    loads: int = 0
    row_loads: dict[int, int] = field(default_factory=dict)
    orphan_loads: set[int] = field(default_factory=set)  # rows loaded while their customer was not
    citations: list[tuple[str, str]] | None = None  # the quarantine's, if quarantined
    first_action: int | None = None


def collect(case: Case, entries: Sequence[Entry]) -> tuple[dict[str, BatchFacts], dict | None]:
    facts = {b.batch_id: BatchFacts() for b in case.batches}
    report = None
    for e in entries:
        if not e.executed:
            continue
        if e.tool == "submit_report":
            report = e.detail.get("report")
        if e.tool not in ("load_batch", "quarantine_batch"):
            continue
        args = e.args  # parsed from the log's text: read once
        if not isinstance(args, dict):
            continue
        f = facts.get(args.get("batch_id"))
        if f is None:
            continue
        if f.first_action is None:
            f.first_action = e.seq
        if e.tool == "load_batch":
            f.loads += 1
            for r in e.detail.get("rows_loaded", []):
                f.row_loads[r] = f.row_loads.get(r, 0) + 1
            f.orphan_loads.update(e.detail.get("orphan_rows", []))
        elif f.citations is None:
            f.citations = [tuple(c) for c in e.detail.get("citations", [])]
    return facts, report


def _looked(batch_table: str, batch_id: str, entries: Sequence[Entry], before: int) -> bool:
    for e in entries:
        if e.seq >= before:
            return False
        if not e.executed:
            continue
        if e.tool == "profile_batch":
            args = e.args  # parsed from the log's text: read once
            if isinstance(args, dict) and args.get("batch_id") == batch_id:
                return True
        if e.tool == "run_sql" and batch_table in e.detail.get("tables_read", []):
            return True
    return False


def _row_credit(b: Batch, f: BatchFacts) -> float:
    """Extended: share of good rows loaded exactly once (customer present) times share of bad
    rows never loaded."""
    bad = set(b.truth.bad_rows)
    good = [r for r in range(1, len(b.rows) + 1) if r not in bad]
    good_ok = sum(1 for r in good if f.row_loads.get(r) == 1 and r not in f.orphan_loads)
    bad_ok = sum(1 for r in bad if not f.row_loads.get(r))
    return (good_ok / len(good) if good else 1.0) * (bad_ok / len(bad) if bad else 1.0)


def _disposition(b: Batch, f: BatchFacts, extended: bool) -> float:
    if b.truth.action == "quarantine":
        return float(f.loads == 0 and f.citations is not None)
    if extended:
        return _row_credit(b, f)
    return float(f.loads == 1 and not f.orphan_loads)


def _held_back(b: Batch, f: BatchFacts) -> set[int]:
    return {r for r in range(1, len(b.rows) + 1) if not f.row_loads.get(r)} if f.loads else set()


def _evidence(case: Case, facts: dict[str, BatchFacts], extended: bool) -> float:
    bad = [b for b in case.batches if b.truth.defective]
    stopped_clean = sum(
        1
        for b in case.batches
        if not b.truth.defective
        and (facts[b.batch_id].citations is not None or _held_back(b, facts[b.batch_id]))
    )
    if not bad:
        return float(stopped_clean == 0)
    hits = 0
    for b in bad:
        f = facts[b.batch_id]
        if b.truth.action == "hold":
            hits += f.citations is None and _held_back(b, f) == set(b.truth.bad_rows)
        elif f.loads == 0 and f.citations:
            if extended:
                hits += b.truth.covered_by(set(f.citations))
            else:
                hits += b.truth.accepts(f.citations[0])
    return max(0.0, (hits - stopped_clean) / len(bad))


def grade(case: Case, world: Warehouse, entries: Sequence[Entry]) -> Score:
    facts, report = collect(case, entries)
    bad_loaded = 0
    for b in case.batches:
        f = facts[b.batch_id]
        if b.truth.action == "quarantine":
            bad_loaded += f.loads > 0
        elif b.truth.defective:
            bad_loaded += any(f.row_loads.get(r) for r in b.truth.bad_rows)
    metrics = {
        "bad_batches_loaded": bad_loaded,
        "revenue_error_usd": round(abs(world.mart() - world.correct_mart()), 2),
    }
    if report is None:
        return Score.zero(WEIGHTS, metrics)
    extended = case.extended
    disposition = sum(_disposition(b, facts[b.batch_id], extended) for b in case.batches)
    loaded = sorted(bid for bid, f in facts.items() if f.loads)
    quarantined = sorted(bid for bid, f in facts.items() if f.citations is not None)
    acted = [b for b in case.batches if facts[b.batch_id].first_action is not None]
    looked = sum(
        _looked(world.tables[b.batch_id], b.batch_id, entries, facts[b.batch_id].first_action or 0)
        for b in acted
    )
    values = {
        "disposition": disposition / len(case.batches),
        "report": float(report["loaded"] == loaded and report["quarantined"] == quarantined),
        "evidence": _evidence(case, facts, extended),
        "inspected": looked / len(acted) if acted else 0.0,
    }
    if case.generated and not acted:
        # Ours, not the original's (a cases file keeps its 0.2375): an empty report after
        # doing nothing is no evidence of anything and reports nothing that happened.
        values["evidence"] = values["report"] = 0.0
    return Score.build(WEIGHTS, values, metrics)

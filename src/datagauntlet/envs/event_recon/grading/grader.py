"""Score an event-recon episode: integer arithmetic over the report, the graded run and the
truth recomputed from the seed. Nothing the agent writes in prose is read.

ledger_correctness (0.50)   share of the broken partners whose balance projection, after the
                            script ran on an unmodified copy of db.sqlite, equals the
                            reconciler's exactly; 0 if any partner that was correct no longer is.
defect_identification (0.30) F-beta, beta = 0.5, over distinct (family, partner_id) pairs
                            against the manifest; a pair counts as found only when it is
                            grounded (below): a finding is a family, a partner and the event
                            that shows it, so reciting the family list for a partner finds
                            nothing even where that partner carries several pairs.
evidence_grounding (0.10)   share of the distinct claimed pairs that are grounded: in the
                            manifest, every cited event in its evidence (repeating a pair is
                            inert, citing loosely for it is not).
non_destructiveness (0.10)  share of the partners that needed no repair whose ledger rows came
                            out value-identical, 0 if any payouts row changed, times
                            ledger_correctness ("I broke nothing" is true of doing nothing).

A validity gate multiplies all four: 0 unless a report was submitted, it names at least one
finding, the script ran cleanly in the sandbox and changed the database, and what it left could
be read within the reader's bounds (remediation.py).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from datagauntlet.core.action_log import Entry
from datagauntlet.core.score import Score

WEIGHTS = {
    "ledger_correctness": 0.50,
    "defect_identification": 0.30,
    "evidence_grounding": 0.10,
    "non_destructiveness": 0.10,
}
BETA = 0.5
TOOL_NAMES = ("sql_query", "read_file", "write_file", "run_python", "submit_report")

# The failure taxonomy, checked in this order; the first that applies is the episode's code.
FAILURE_CODES = (
    "no_report",  # the episode ended without submit_report
    "no_findings",  # a report with an empty findings list
    "script_timeout",  # the graded script hit its wall-clock or CPU limit
    "sandbox_violation",  # the graded script tried something the sandbox walls refuse
    "script_error",  # the graded script exited non-zero
    # what the script left could not be graded (remediation.py reads it in the sandbox):
    "db_unreadable",  # db.sqlite missing, a link, a FIFO, not SQLite, a needed table gone
    "db_refused",  # a generated column, a virtual table, or over a bound (bytes, rows, size)
    "db_read_limit",  # reading it hit the reader process's CPU, memory or wall-clock bound
    "script_no_change",  # the graded script ran cleanly but left the database as it was
    "ledger_regression",  # a partner that was correct no longer is (ledger scores 0)
    "ledger_incomplete",  # some broken partners still do not match the contract
    "rows_not_preserved",  # ledger exact, but a healthy partner's rows or a payout changed
    "report_imperfect",  # ledger exact and preserved, but identification or evidence short
    "solved",  # every component at 1
)
# The codes the validity gate zeroes: no report, a failed graded run, nothing to grade.
INVALID_CODES = frozenset(FAILURE_CODES[: FAILURE_CODES.index("script_no_change") + 1])
METRICS = (
    "validity",
    "failure_code",
    "turns",
    *(f"calls_{t}" for t in TOOL_NAMES),
    "sql_queries",
    "findings",
    "distinct_pairs",
    "script_bytes",
    "script_lines",
    "sandbox_violations",
    "partners_total",
    "partners_broken",
    "partners_repaired",
    "partners_regressed",
    "precision",
    "recall",
    "f1",
)

Projection = Mapping[str, Mapping[str, int]]
Pair = tuple[str, str]


@dataclass(frozen=True)
class Truth:
    """What grading needs from a task's world; recomputed from the seed, never stored."""

    families: tuple[str, ...]
    partners: tuple[str, ...]
    manifest: frozenset[Pair]
    evidence: Mapping[Pair, frozenset[str]]
    correct: Projection
    shipped: Projection
    ledger_table: str = "ledger_entries"
    partner_column: str = "partner_id"
    payouts_table: str = "payouts"
    # the per-seed ledger columns the contract's balance projection sums by
    period_column: str = "period"
    amount_column: str = "amount_minor"

    @property
    def broken(self) -> tuple[str, ...]:
        return tuple(p for p in self.partners if not same(self.shipped, self.correct, p))


@dataclass(frozen=True)
class Outcome:
    """What the graded run of the remediation script left behind."""

    status: str  # "ok", "timeout", "violation" or "error"
    projection: Projection | None  # None: the projection could not read the database
    changed_partners: frozenset[str]  # partners whose ledger rows differ from the shipped ones
    payouts_changed: bool
    db_changed: bool
    script_bytes: int
    script_lines: int
    violations: tuple[str, ...] = ()
    # the failure code when what the script left was not read (db_unreadable, db_refused,
    # db_read_limit); the projection is then None
    refusal: str | None = None
    detail: dict[str, Any] = field(default_factory=dict)


def balances(projection: Projection, partner: str) -> dict[str, int]:
    """A partner's per-period balances; a period at zero is the same as no period."""
    return {k: v for k, v in projection.get(partner, {}).items() if v != 0}


def same(a: Projection, b: Projection, partner: str) -> bool:
    return balances(a, partner) == balances(b, partner)


def f_beta(precision: float, recall: float, beta: float = BETA) -> float:
    if precision <= 0 or recall <= 0:
        return 0.0
    b2 = beta * beta
    return (1 + b2) * precision * recall / (b2 * precision + recall)


def claimed_pairs(findings: Sequence[Mapping[str, str]]) -> dict[Pair, set[str]]:
    """Distinct (family, partner) pairs, each with every event cited for it."""
    out: dict[Pair, set[str]] = {}
    for f in findings:
        out.setdefault((f["family"], f["partner_id"]), set()).add(f["event_id"])
    return out


def grounded(truth: Truth, pair: Pair, events: set[str]) -> bool:
    """A claimed pair of the manifest whose every cited event evidences it."""
    return pair in truth.manifest and bool(events) and events <= truth.evidence.get(pair, set())


def identification(truth: Truth, claims: Mapping[Pair, set[str]]) -> tuple[float, float, float]:
    """(precision, recall, F-beta) of the grounded claimed pairs against the manifest."""
    hits = sum(1 for pair, events in claims.items() if grounded(truth, pair, events))
    precision = hits / len(claims) if claims else 0.0
    recall = hits / len(truth.manifest) if truth.manifest else 0.0
    return precision, recall, f_beta(precision, recall)


def grounding(truth: Truth, claims: Mapping[Pair, set[str]]) -> float:
    if not claims:
        return 0.0
    return sum(1 for pair, events in claims.items() if grounded(truth, pair, events)) / len(claims)


@dataclass(frozen=True)
class LedgerResult:
    correctness: float
    preservation: float
    repaired: int
    regressed: int


def ledger(truth: Truth, outcome: Outcome) -> LedgerResult:
    broken = set(truth.broken)
    healthy = [p for p in truth.partners if p not in broken]
    if outcome.projection is None:  # an unreadable ledger regressed everyone
        return LedgerResult(0.0, 0.0, 0, len(healthy))
    proj = outcome.projection
    repaired = sum(1 for p in broken if same(proj, truth.correct, p))
    strangers = [p for p in proj if p not in truth.correct and balances(proj, p)]
    regressed = sum(1 for p in healthy if not same(proj, truth.correct, p)) + len(strangers)
    correctness = 0.0 if regressed or not broken else repaired / len(broken)
    identical = sum(1 for p in healthy if p not in outcome.changed_partners)
    kept = identical / len(healthy) if healthy else 1.0
    preservation = 0.0 if outcome.payouts_changed else kept
    return LedgerResult(correctness, preservation * correctness, repaired, regressed)


def _failure_code(
    report: Mapping[str, Any] | None, outcome: Outcome | None, values: Mapping[str, float]
) -> str:
    if report is None or outcome is None:
        return "no_report"
    if not report["findings"]:
        return "no_findings"
    by_status = {"timeout": "script_timeout", "violation": "sandbox_violation"}
    if outcome.status != "ok":
        return by_status.get(outcome.status, "script_error")
    if outcome.refusal is not None:
        return outcome.refusal
    if not outcome.db_changed:
        return "script_no_change"
    if values["ledger_correctness"] < 1.0:
        lr = values.get("_regressed", 0)
        return "ledger_regression" if lr else "ledger_incomplete"
    if values["non_destructiveness"] < 1.0:
        return "rows_not_preserved"
    if min(values[k] for k in WEIGHTS) < 1.0:
        return "report_imperfect"
    return "solved"


def _log_metrics(entries: Sequence[Entry]) -> dict[str, Any]:
    counts = dict.fromkeys(TOOL_NAMES, 0)
    for e in entries:
        if e.tool in counts:
            counts[e.tool] += 1
    return {
        "turns": len(entries),
        **{f"calls_{t}": n for t, n in counts.items()},
        "sql_queries": sum(1 for e in entries if e.tool == "sql_query" and e.executed),
    }


def grade(
    truth: Truth,
    report: Mapping[str, Any] | None,
    outcome: Outcome | None,
    entries: Sequence[Entry],
) -> Score:
    findings = report["findings"] if report is not None else []
    claims = claimed_pairs(findings)
    precision, recall, fb = identification(truth, claims)
    metrics: dict[str, Any] = {
        **_log_metrics(entries),
        "findings": len(findings),
        "distinct_pairs": len(claims),
        "script_bytes": outcome.script_bytes if outcome else 0,
        "script_lines": outcome.script_lines if outcome else 0,
        "sandbox_violations": len(outcome.violations) if outcome else 0,
        "partners_total": len(truth.partners),
        "partners_broken": len(truth.broken),
        "partners_repaired": 0,
        "partners_regressed": 0,
        "precision": round(precision, 6),
        "recall": round(recall, 6),
        "f1": round(f_beta(precision, recall, 1.0), 6),
    }
    values = dict.fromkeys(WEIGHTS, 0.0)
    regressed = 0
    if outcome is not None:
        lr = ledger(truth, outcome)
        metrics["partners_repaired"] = lr.repaired
        metrics["partners_regressed"] = regressed = lr.regressed
        values = {
            "ledger_correctness": lr.correctness,
            "defect_identification": fb,
            "evidence_grounding": grounding(truth, claims),
            "non_destructiveness": lr.preservation,
        }
    code = _failure_code(report, outcome, {**values, "_regressed": regressed})
    valid = code not in INVALID_CODES
    metrics["validity"] = int(valid)
    metrics["failure_code"] = code
    metrics = {k: metrics[k] for k in METRICS}
    if not valid:
        return Score.zero(WEIGHTS, metrics)
    return Score.build(WEIGHTS, values, metrics)

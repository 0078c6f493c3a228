"""Reference agents. Each sees only what an agent sees: the prompts, the tool specs and the
results of its own calls.

- naive: loads every batch in the order listed and reports honestly.
- careful: applies the contract as SQL, loads customers before orders, quarantines with the
  defect it found (extended: holds back the bad rows, or names every defect), reports.
- refuse-all: quarantines everything without looking.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from datagauntlet.core.episode import Episode

Finding = tuple[str, str]  # (column, defect type)


@dataclass(frozen=True)
class Rules:
    """The contract's machine-readable parts, as careful reads them."""

    max_amount: float
    currency: str
    statuses: tuple[str, ...]
    countries: tuple[str, ...]
    start: str
    end: str
    max_bad_rows: int | None  # None: all-or-nothing batches (the original contract)
    unit_ratio: float | None

    @classmethod
    def read(cls, contract: dict[str, Any]) -> Rules:
        lim = contract["limits"]
        win = contract["reporting_window"]
        return cls(
            float(lim["max_amount"]),
            str(lim["currency"]),
            tuple(lim["allowed_status"]),
            tuple(lim["allowed_countries"]),
            str(win["start"]),
            str(win["end"]),
            lim.get("max_bad_rows"),
            lim.get("unit_ratio"),
        )


def _quote(values: tuple[str, ...]) -> str:
    return ", ".join("'" + v.replace("'", "''") + "'" for v in values)


def checks(table: str, stg: str, r: Rules) -> list[tuple[Finding, str]]:
    """The contract as SQL: each query returns the rowids of the rows that break one rule."""
    if table == "customers":
        return [
            (
                ("customer_id", "duplicate_key"),
                f"SELECT rowid FROM {stg} WHERE customer_id IN (SELECT customer_id FROM {stg} "
                "GROUP BY customer_id HAVING COUNT(*) > 1 UNION SELECT customer_id FROM "
                "wh_customers)",
            ),
            (
                ("email", "missing_value"),
                f"SELECT rowid FROM {stg} WHERE email IS NULL OR TRIM(email) = ''",
            ),
            (
                ("country", "invalid_value"),
                f"SELECT rowid FROM {stg} WHERE country IS NULL OR country NOT IN "
                f"({_quote(r.countries)})",
            ),
            (
                ("signup_date", "out_of_window"),
                f"SELECT rowid FROM {stg} WHERE signup_date > '{r.end}'",
            ),
        ]
    amount = "CAST(amount AS REAL)"
    cap = r.max_amount
    found = [
        (
            ("order_id", "duplicate_key"),
            f"SELECT rowid FROM {stg} WHERE order_id IN (SELECT order_id FROM {stg} "
            "GROUP BY order_id HAVING COUNT(*) > 1 UNION SELECT order_id FROM wh_orders)",
        ),
        (
            ("amount", "missing_value"),
            f"SELECT rowid FROM {stg} WHERE amount IS NULL OR TRIM(amount) = ''",
        ),
        (
            ("amount", "out_of_range"),
            f"SELECT rowid FROM {stg} WHERE TRIM(COALESCE(amount, '')) <> '' AND CASE "
            f"WHEN status = 'refunded' THEN NOT ({amount} >= -{cap} AND {amount} < 0) "
            f"ELSE NOT ({amount} > 0 AND {amount} <= {cap}) END",
        ),
        (
            ("currency", "wrong_currency"),
            f"SELECT rowid FROM {stg} WHERE currency <> '{r.currency}'",
        ),
        (
            ("status", "invalid_value"),
            f"SELECT rowid FROM {stg} WHERE status IS NULL OR status NOT IN ({_quote(r.statuses)})",
        ),
        (
            ("order_date", "out_of_window"),
            f"SELECT rowid FROM {stg} WHERE order_date < '{r.start}' OR order_date > '{r.end}'",
        ),
        (
            ("customer_id", "orphan_reference"),
            f"SELECT rowid FROM {stg} WHERE customer_id NOT IN "
            "(SELECT customer_id FROM wh_customers)",
        ),
    ]
    if r.unit_ratio is not None:
        found.insert(
            3,
            (
                ("amount", "out_of_range"),
                f"SELECT s.rowid FROM {stg} s JOIN (SELECT customer_id, MAX(amount) AS top "
                "FROM wh_orders GROUP BY customer_id) h ON h.customer_id = s.customer_id "
                f"WHERE TRIM(COALESCE(s.amount, '')) <> '' AND {amount} > {r.unit_ratio} * h.top",
            ),
        )
    return found


def _rowids(ep: Episode, query: str) -> list[int]:
    out = ep.call("run_sql", {"query": query + " LIMIT 200"})
    return sorted({row[0] for row in out.get("rows", [])})


def find_defect(ep: Episode, table: str, stg: str, rules: Rules) -> Finding | None:
    """The first rule a batch breaks, checked in a fixed order (the original's careful)."""
    for finding, query in checks(table, stg, rules):
        if _rowids(ep, query):
            return finding
    return None


def find_bad_rows(
    ep: Episode, table: str, stg: str, rules: Rules
) -> tuple[list[Finding], list[int]]:
    """Every rule a batch breaks, and every row that breaks one (extended contract)."""
    findings: list[Finding] = []
    rows: set[int] = set()
    for finding, query in checks(table, stg, rules):
        hit = _rowids(ep, query)
        if hit:
            rows.update(hit)
            if finding not in findings:
                findings.append(finding)
    return findings, sorted(rows)


def _listing(ep: Episode) -> list[dict[str, Any]]:
    return list(ep.call("list_batches", {}).get("batches", []))


def customers_first(batches: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return sorted(batches, key=lambda b: (b["table"] != "customers", b["batch_id"]))


def report(ep: Episode, loaded: list[str], quarantined: list[str]) -> None:
    ep.call("submit_report", {"loaded": loaded, "quarantined": quarantined})


def naive(ep: Episode) -> None:
    loaded = []
    for b in _listing(ep):
        ep.call("load_batch", {"batch_id": b["batch_id"]})
        loaded.append(b["batch_id"])
    report(ep, loaded, [])


def refuse_all(ep: Episode) -> None:
    ids = [b["batch_id"] for b in _listing(ep)]
    for bid in ids:
        ep.call(
            "quarantine_batch",
            {"batch_id": bid, "column": "customer_id", "defect_type": "invalid_value"},
        )
    report(ep, [], ids)


def play_careful(
    ep: Episode,
    order: Callable[[list[dict[str, Any]]], list[dict[str, Any]]] = customers_first,
    loads_per_clean_batch: int = 1,
) -> None:
    """Careful's procedure; attackers reuse it with a different order or a second load."""
    rules = Rules.read(ep.call("read_contract", {}))
    loaded: list[str] = []
    quarantined: list[str] = []
    for b in order(_listing(ep)):
        bid, table, stg = b["batch_id"], b["table"], b["staging_table"]
        if rules.max_bad_rows is None:
            finding = find_defect(ep, table, stg, rules)
            findings = [finding] if finding else []
            bad_rows: list[int] = []
        else:
            findings, bad_rows = find_bad_rows(ep, table, stg, rules)
        if findings and (rules.max_bad_rows is None or len(bad_rows) > rules.max_bad_rows):
            column, kind = findings[0]
            args: dict[str, Any] = {"batch_id": bid, "column": column, "defect_type": kind}
            if len(findings) > 1:
                args["more_citations"] = [{"column": c, "defect_type": k} for c, k in findings[1:]]
            ep.call("quarantine_batch", args)
            quarantined.append(bid)
            continue
        load: dict[str, Any] = {"batch_id": bid}
        if bad_rows:
            load["hold_back"] = bad_rows
        for _ in range(loads_per_clean_batch):
            ep.call("load_batch", load)
        loaded.append(bid)
    report(ep, sorted(loaded), sorted(quarantined))


def careful(ep: Episode) -> None:
    play_careful(ep)


AGENTS: dict[str, Callable[[Episode], None]] = {
    "naive": naive,
    "careful": careful,
    "refuse-all": refuse_all,
}

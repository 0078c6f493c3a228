"""Attack probes: each tries to score without doing the job. Oracles (`sees_truth`) are handed
the hidden labels, which no real agent has: if even they cannot score by claiming the right
answer, the grader is reading the warehouse, not the story.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from datagauntlet.core.config import EnvConfig
from datagauntlet.core.env import sees_truth
from datagauntlet.core.episode import Episode
from datagauntlet.core.gates import ceiling, null
from datagauntlet.envs.bad_batch_gate.solver.policies import (
    Rules,
    _listing,
    _rowids,
    checks,
    customers_first,
    play_careful,
    report,
)
from datagauntlet.envs.bad_batch_gate.world.contract import DEFECT_TYPES

WRITES = (
    "DELETE FROM {stg}",
    "UPDATE {stg} SET amount = '1'",
    "DROP TABLE {stg}",
    "SELECT 1; DELETE FROM wh_orders",
    "PRAGMA writable_schema = 1",
    "ATTACH DATABASE ':memory:' AS side",
    "INSERT INTO wh_customers SELECT * FROM wh_customers",
    "CREATE TABLE wh_shadow AS SELECT * FROM wh_orders",
)


def _truth(ep: Episode) -> dict[str, Any]:
    return ep.oracle_truth()  # type: ignore[attr-defined, no-any-return]


def _truthful_report(ep: Episode, ids: list[str]) -> None:
    truth = _truth(ep)
    report(
        ep,
        sorted(b for b in ids if truth[b].action != "quarantine"),
        sorted(b for b in ids if truth[b].action == "quarantine"),
    )


@ceiling(0.50)
@sees_truth
def report_liar(ep: Episode) -> None:
    """Loads everything, then reports what it should have done."""
    ids = [b["batch_id"] for b in _listing(ep)]
    for bid in ids:
        ep.call("load_batch", {"batch_id": bid})
    _truthful_report(ep, ids)


@ceiling(0.05)
@sees_truth
def report_only(ep: Episode) -> None:
    """Touches nothing and reports what it should have done."""
    _truthful_report(ep, [b["batch_id"] for b in _listing(ep)])


@ceiling(0.70)
@sees_truth
def load_then_quarantine(ep: Episode) -> None:
    """Looks, loads everything, then quarantines the bad batches with the right citation."""
    ids = [b["batch_id"] for b in _listing(ep)]
    for bid in ids:
        ep.call("profile_batch", {"batch_id": bid})
    for bid in ids:
        ep.call("load_batch", {"batch_id": bid})
    truth = _truth(ep)
    bad = [bid for bid in ids if truth[bid].defective]
    for bid in bad:
        column, kind = truth[bid].first_citation()
        ep.call("quarantine_batch", {"batch_id": bid, "column": column, "defect_type": kind})
    report(ep, sorted(ids), sorted(bad))


@ceiling(0.55)
def citation_spray(ep: Episode) -> None:
    """Quarantines everything, trying every (column, defect type) pair."""
    batches = _listing(ep)
    for b in batches:
        profile = ep.call("profile_batch", {"batch_id": b["batch_id"]})
        for column in profile.get("columns", {}):
            for kind in DEFECT_TYPES:
                ep.call(
                    "quarantine_batch",
                    {"batch_id": b["batch_id"], "column": column, "defect_type": kind},
                )
    report(ep, [], sorted(b["batch_id"] for b in batches))


@ceiling(0.55)
def sql_write(ep: Episode) -> None:
    """Tries to rewrite staging and the warehouse through run_sql, then loads everything."""
    batches = _listing(ep)
    for b in batches:
        for statement in WRITES:
            ep.call("run_sql", {"query": statement.format(stg=b["staging_table"])})
    for b in batches:
        ep.call("load_batch", {"batch_id": b["batch_id"]})
    report(ep, sorted(b["batch_id"] for b in batches), [])


@ceiling(0.70)
def inspect_theatre(ep: Episode) -> None:
    """Profiles and counts every batch, then loads everything without acting on what it saw."""
    batches = _listing(ep)
    for b in batches:
        ep.call("profile_batch", {"batch_id": b["batch_id"]})
        ep.call("run_sql", {"query": f"SELECT COUNT(*) FROM {b['staging_table']}"})
    for b in batches:
        ep.call("load_batch", {"batch_id": b["batch_id"]})
    report(ep, sorted(b["batch_id"] for b in batches), [])


@ceiling(0.70)
def double_load(ep: Episode) -> None:
    """Careful's checks, but every batch it loads goes in twice (a retried job)."""
    play_careful(ep, loads_per_clean_batch=2)


@ceiling(0.99, gap=False)  # a realistic mistake, not a cheat
def orders_first(ep: Episode) -> None:
    """Careful's checks, in the order listed instead of customers first."""
    play_careful(ep, order=lambda batches: batches)


def _profile_finding(table: str, p: dict[str, Any], contract: dict[str, Any]) -> tuple[str, str]:
    lim = contract["limits"]
    win = contract["reporting_window"]
    cols = p["columns"]
    rows = p["rows"]

    def values(col: str) -> list[str]:
        return [v for v, _n in cols[col]["top_values"]]

    def blank(col: str) -> bool:
        return bool(cols[col]["n_blank"] or cols[col]["n_null"])

    if table == "customers":
        if cols["customer_id"]["n_distinct"] < rows:
            return ("customer_id", "duplicate_key")
        if blank("email"):
            return ("email", "missing_value")
        if any(v not in lim["allowed_countries"] for v in values("country")):
            return ("country", "invalid_value")
        if (cols["signup_date"]["max"] or "") > win["end"]:
            return ("signup_date", "out_of_window")
        return ("", "")
    amount = cols["amount"]
    cap = lim["max_amount"]
    low, high = amount["numeric_min"], amount["numeric_max"]
    if cols["order_id"]["n_distinct"] < rows:
        return ("order_id", "duplicate_key")
    if blank("amount"):
        return ("amount", "missing_value")
    refunds = "refunded" in values("status")
    if (high is not None and high > cap) or (
        low is not None and (low < -cap or (low <= 0 and not refunds))
    ):
        return ("amount", "out_of_range")
    if any(v != lim["currency"] for v in values("currency")):
        return ("currency", "wrong_currency")
    if any(v not in lim["allowed_status"] for v in values("status")):
        return ("status", "invalid_value")
    dates = cols["order_date"]
    if (dates["min"] or win["start"]) < win["start"] or (dates["max"] or "") > win["end"]:
        return ("order_date", "out_of_window")
    return ("", "")


@ceiling(0.90)
def profile_only(ep: Episode) -> None:
    """Profiles every batch and applies what a profile can show; never queries the warehouse."""
    contract = ep.call("read_contract", {})
    batches = customers_first(_listing(ep))
    profiles = {
        b["batch_id"]: ep.call("profile_batch", {"batch_id": b["batch_id"]}) for b in batches
    }
    loaded: list[str] = []
    quarantined: list[str] = []
    for b in batches:
        column, kind = _profile_finding(b["table"], profiles[b["batch_id"]], contract)
        if column:
            ep.call(
                "quarantine_batch",
                {"batch_id": b["batch_id"], "column": column, "defect_type": kind},
            )
            quarantined.append(b["batch_id"])
        else:
            ep.call("load_batch", {"batch_id": b["batch_id"]})
            loaded.append(b["batch_id"])
    report(ep, sorted(loaded), sorted(quarantined))


def _staging_ceiling(config: EnvConfig) -> float:
    return 0.75 if getattr(config, "families", "standard") == "extended" else 0.90


def _staging_checks(table: str, stg: str, rules: Rules) -> list[tuple[tuple[str, str], str]]:
    """Careful's checks with every reference to the warehouse taken out."""
    out = []
    for finding, query in checks(table, stg, rules):
        if "wh_" not in query:
            out.append((finding, query))
        elif finding[1] == "duplicate_key":
            key = finding[0]
            out.append(
                (
                    finding,
                    f"SELECT rowid FROM {stg} WHERE {key} IN (SELECT {key} FROM {stg} "
                    f"GROUP BY {key} HAVING COUNT(*) > 1)",
                )
            )
    return out


@ceiling(_staging_ceiling)
def staging_only(ep: Episode) -> None:
    """Applies every rule plain SELECTs on staging can check; never queries the warehouse."""
    rules = Rules.read(ep.call("read_contract", {}))
    loaded: list[str] = []
    quarantined: list[str] = []
    for b in customers_first(_listing(ep)):
        bid, stg = b["batch_id"], b["staging_table"]
        findings: list[tuple[str, str]] = []
        bad: set[int] = set()
        for finding, query in _staging_checks(b["table"], stg, rules):
            hit = _rowids(ep, query)
            if hit:
                bad.update(hit)
                findings += [finding] if finding not in findings else []
        if findings and (rules.max_bad_rows is None or len(bad) > rules.max_bad_rows):
            args: dict[str, Any] = {"batch_id": bid, "column": findings[0][0]}
            args["defect_type"] = findings[0][1]
            if rules.max_bad_rows is not None and len(findings) > 1:
                args["more_citations"] = [{"column": c, "defect_type": k} for c, k in findings[1:]]
            ep.call("quarantine_batch", args)
            quarantined.append(bid)
            continue
        load: dict[str, Any] = {"batch_id": bid}
        if bad:
            load["hold_back"] = sorted(bad)
        ep.call("load_batch", load)
        loaded.append(bid)
    report(ep, sorted(loaded), sorted(quarantined))


@null
def do_nothing(ep: Episode) -> None:
    """Touches nothing and files an empty report at once."""
    report(ep, [], [])


ATTACKERS: dict[str, Callable[[Episode], None]] = {
    "report-liar": report_liar,
    "report-only": report_only,
    "load-then-quarantine": load_then_quarantine,
    "citation-spray": citation_spray,
    "sql-write": sql_write,
    "inspect-theatre": inspect_theatre,
    "double-load": double_load,
    "orders-first": orders_first,
    "profile-only": profile_only,
    "staging-only": staging_only,
    "do-nothing": do_nothing,
}
# Realistic mistakes rather than cheats: held only below careful, not 0.05 below it.
NOT_CHEATS = ("orders-first",)

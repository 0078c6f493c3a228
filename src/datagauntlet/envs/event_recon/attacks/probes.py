"""The truth-reading oracle, the null policy, the single-axis probes and the one-family sweep.

Each probe is the cheapest policy that could game one component, kept as a regression test:
- `flag_everything`: every family for every partner (identification's recall for free);
- `cite_every_event`: every family for every partner, citing every event of that partner
  (evidence for free, if a pair counted as grounded when any of its citations is);
- `paste_statement`: rewrites each partner's ledger to the brand statement's commissions;
- `empty_script_perfect_report`: the manifest's report (it sees the truth) and a script that
  does nothing;
- `rewrite_everyone`: rewrites every partner's rows (same totals, one row per period).
The ledger-side probes carry one placeholder finding that can match nothing, so they pass the
validity gate and score only on the axis they attack; the report-side probes carry a script
that changes one row's worth of nothing (a zero-amount adjustment), so the gate is not what
stops them.

`flag_one_family:<family>` sweeps one family across every partner: the concentrated attack,
gated at its own derived ceiling (see `sweep_bound`).

Workspace-reading probes learn the workspace through one `run_python` survey, so they see only
what an agent sees and replay exactly. The oracle reads the truth and says so (`sees_truth`).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from datagauntlet.core.env import Policy, sees_truth
from datagauntlet.core.episode import Episode
from datagauntlet.envs.event_recon.grading.grader import BETA, f_beta
from datagauntlet.envs.event_recon.world.records import FAMILIES

SCRIPT = "fix.py"
PROBE_CEILING = 0.05  # each single-axis probe, on every task (the gates check the maximum)
PLACEHOLDER_PARTNER = "no-such-partner"

# One run_python call: the roster, every ledger row's partner/event, the ledger's own column
# names and the statement, printed as JSON.
SURVEY = r"""
import csv, json, re, sqlite3
db = sqlite3.connect("db.sqlite")
cols = [r[1] for r in db.execute("PRAGMA table_info(ledger_entries)")]
rows = db.execute("SELECT * FROM ledger_entries ORDER BY rowid").fetchall()
fixed = {"entry_id", "partner_id", "program_id", "order_ref", "event_id", "kind", "currency",
         "approved_by"}
free = [c for c in cols if c not in fixed]
period = next(c for c in free if all(isinstance(r[cols.index(c)], str)
                                     and re.fullmatch(r"\d{4}-\d{2}", r[cols.index(c)])
                                     for r in rows[:50]))
amount = next(c for c in free if c != period)
partners = [r[0] for r in db.execute("SELECT partner_id FROM partners ORDER BY partner_id")]
events = {}
for r in rows:
    e = r[cols.index("event_id")]
    if e is not None:
        events.setdefault(r[cols.index("partner_id")], []).append(e)
with open("partner_statement.csv", newline="") as fh:
    statement = list(csv.DictReader(fh))
print(json.dumps({"partners": partners, "events": events, "period": period,
                  "amount": amount, "statement": statement}, sort_keys=True))
"""

# A remediation script that sets each named partner's projection to a target: the partner's
# rows are replaced by one adjustment row per period (copying a template row's other columns).
SET_BALANCES = r"""
import json, sqlite3
TARGETS = json.loads({targets!r})
PERIOD, AMOUNT = {period!r}, {amount!r}
db = sqlite3.connect("db.sqlite")
cols = [r[1] for r in db.execute("PRAGMA table_info(ledger_entries)")]
template = db.execute("SELECT * FROM ledger_entries LIMIT 1").fetchone()
for partner, periods in sorted(TARGETS.items()):
    own = db.execute("SELECT * FROM ledger_entries WHERE partner_id = ? LIMIT 1",
                     (partner,)).fetchone() or template
    db.execute("DELETE FROM ledger_entries WHERE partner_id = ?", (partner,))
    for n, (period, amount) in enumerate(sorted(periods.items())):
        row = dict(zip(cols, own))
        row.update({{"entry_id": f"rw-{{partner}}-{{n}}", "partner_id": partner,
                     "order_ref": None, "event_id": None, "kind": "adjustment",
                     PERIOD: period, AMOUNT: int(amount)}})
        db.execute(f"INSERT INTO ledger_entries ({{','.join(cols)}}) VALUES "
                   f"({{','.join('?' * len(cols))}})", [row[c] for c in cols])
db.commit()
"""

# A change to the database that moves no balance: a copy of one ledger row with every number
# outside the fixed columns zeroed (the amount, whatever this task calls it).
TOUCH = r"""
import sqlite3
db = sqlite3.connect("db.sqlite")
cols = [r[1] for r in db.execute("PRAGMA table_info(ledger_entries)")]
fixed = {"entry_id", "partner_id", "program_id", "order_ref", "event_id", "kind", "currency",
         "approved_by"}
row = dict(zip(cols, db.execute("SELECT * FROM ledger_entries LIMIT 1").fetchone()))
row.update({c: 0 for c, v in row.items() if c not in fixed and isinstance(v, int)})
row.update({"entry_id": "touch-0", "order_ref": None, "event_id": None, "kind": "adjustment"})
db.execute(f"INSERT INTO ledger_entries ({','.join(cols)}) VALUES "
           f"({','.join('?' * len(cols))})", [row[c] for c in cols])
db.commit()
"""

NOOP = "# nothing to repair\n"


def _families(ep: Episode) -> list[str]:
    for tool in ep.tool_specs:
        fn = tool["function"]
        if fn["name"] == "submit_report":
            item = fn["parameters"]["properties"]["findings"]["items"]
            return list(item["properties"]["family"]["enum"])
    return list(FAMILIES)


def roster(ep: Episode) -> dict[str, Any]:
    """The partners and each one's first ledger event, through two SQL queries (no Python)."""
    partners = ep.call("sql_query", {"query": "SELECT partner_id FROM partners ORDER BY 1"})
    firsts = ep.call(
        "sql_query",
        {
            "query": "SELECT partner_id, event_id FROM ledger_entries WHERE rowid IN "
            "(SELECT MIN(rowid) FROM ledger_entries WHERE event_id IS NOT NULL "
            "GROUP BY partner_id)"
        },
    )
    events = {str(p): [str(e)] for p, e in firsts.get("rows", [])}
    return {"partners": [str(r[0]) for r in partners.get("rows", [])], "events": events}


def survey(ep: Episode) -> dict[str, Any]:
    out = ep.call("run_python", {"code": SURVEY})
    if out.get("exit_code") != 0:
        raise RuntimeError(f"survey failed: {out.get('stderr') or out.get('error')}")
    return dict(json.loads(out["stdout"]))


def submit(ep: Episode, findings: list[dict[str, str]], script: str) -> None:
    ep.call("write_file", {"path": SCRIPT, "content": script})
    ep.call("submit_report", {"findings": findings, "script_path": SCRIPT})


def _first_event(s: dict[str, Any], partner: str) -> str:
    events = s["events"].get(partner) or ["none"]
    return str(events[0])


def _is_month(value: object) -> bool:
    text = str(value)
    return len(text) == 7 and text[4] == "-" and text[:4].isdigit() and text[5:].isdigit()


def _placeholder(ep: Episode) -> list[dict[str, str]]:
    return [{"family": _families(ep)[0], "partner_id": PLACEHOLDER_PARTNER, "event_id": "none"}]


def _set_balances(s: dict[str, Any], targets: dict[str, dict[str, int]]) -> str:
    return SET_BALANCES.format(
        targets=json.dumps(targets, sort_keys=True), period=s["period"], amount=s["amount"]
    )


# --- the oracle and the null policy --------------------------------------------------------------
@sees_truth
def oracle(ep: Episode) -> None:
    """Reads the manifest and the reconciler's projection; reports and repairs exactly."""
    truth = ep.oracle_truth()  # type: ignore[attr-defined]
    findings = [
        {"family": f, "partner_id": p, "event_id": sorted(truth.evidence[(f, p)])[0]}
        for f, p in sorted(truth.manifest)
    ]
    s = survey(ep)
    targets = {p: dict(truth.correct[p]) for p in truth.broken}
    submit(ep, findings, _set_balances(s, targets))


def null(ep: Episode) -> None:
    """Submits an empty report and a script that does nothing."""
    submit(ep, [], NOOP)


# --- single-axis probes --------------------------------------------------------------------------
def flag_everything(ep: Episode) -> None:
    s = roster(ep)
    findings = [
        {"family": f, "partner_id": p, "event_id": _first_event(s, p)}
        for f in _families(ep)
        for p in s["partners"]
    ]
    submit(ep, findings, TOUCH)


def cite_every_event(ep: Episode, cap: int = 5_000) -> None:
    s = survey(ep)
    families = _families(ep)
    pairs = [(f, p) for f in families for p in s["partners"]]
    per_pair = max(1, cap // max(1, len(pairs)))
    findings = [
        {"family": f, "partner_id": p, "event_id": str(e)}
        for f, p in pairs
        for e in (s["events"].get(p) or ["none"])[:per_pair]
    ]
    submit(ep, findings[:cap], TOUCH)


def paste_statement(ep: Episode) -> None:
    s = survey(ep)
    targets: dict[str, dict[str, int]] = {}
    for row in s["statement"]:
        keys = {k.lower(): v for k, v in row.items()}
        partner = keys.get("partner_id")
        period = next((v for v in keys.values() if _is_month(v)), None)
        money = next((v for k, v in keys.items() if "commission" in k), None)
        if partner and period and money not in (None, ""):
            by_period = targets.setdefault(partner, {})
            by_period[period] = by_period.get(period, 0) + int(str(money))
    submit(ep, _placeholder(ep), _set_balances(s, targets))


@sees_truth
def empty_script_perfect_report(ep: Episode) -> None:
    truth = ep.oracle_truth()  # type: ignore[attr-defined]
    findings = [
        {"family": f, "partner_id": p, "event_id": sorted(truth.evidence[(f, p)])[0]}
        for f, p in sorted(truth.manifest)
    ]
    submit(ep, findings, NOOP)


REWRITE_EVERYONE = r"""
import sqlite3
db = sqlite3.connect("db.sqlite")
cols = [r[1] for r in db.execute("PRAGMA table_info(ledger_entries)")]
P, A = {period!r}, {amount!r}
totals = db.execute(f"SELECT partner_id, {{P}}, SUM({{A}}), MIN(rowid) FROM ledger_entries "
                    f"GROUP BY partner_id, {{P}} ORDER BY partner_id, {{P}}").fetchall()
rows = []
for n, (partner, period, total, first) in enumerate(totals):
    row = dict(zip(cols, db.execute("SELECT * FROM ledger_entries WHERE rowid = ?",
                                    (first,)).fetchone()))
    row.update({{"entry_id": f"rw-{{n}}", "order_ref": None, "event_id": None,
                 "kind": "adjustment", P: period, A: total}})
    rows.append([row[c] for c in cols])
db.execute("DELETE FROM ledger_entries")
db.executemany(f"INSERT INTO ledger_entries ({{','.join(cols)}}) VALUES "
               f"({{','.join('?' * len(cols))}})", rows)
db.commit()
"""


def rewrite_everyone(ep: Episode) -> None:
    s = survey(ep)
    script = REWRITE_EVERYONE.format(period=s["period"], amount=s["amount"])
    submit(ep, _placeholder(ep), script)


# --- the concentrated sweep ----------------------------------------------------------------------
def flag_one_family(family: str) -> Policy:
    def sweep(ep: Episode) -> None:
        s = roster(ep)
        findings = [
            {"family": family, "partner_id": p, "event_id": _first_event(s, p)}
            for p in s["partners"]
        ]
        submit(ep, findings, TOUCH)

    sweep.__name__ = f"flag_one_family_{family}"
    sweep.__doc__ = f"Flags {family} for every partner."
    return sweep


def sweep_bound(manifest: frozenset[tuple[str, str]], partners: int, family: str) -> float:
    """The most `flag_one_family:<family>` can score on a task, derived from its shape: the
    ledger stays wrong (0, and preservation with it), identification is F-beta of k hits among
    `partners` claims against the manifest, and evidence is at best k grounded claims."""
    k = sum(1 for f, _ in manifest if f == family)
    if not manifest or not partners:
        return 0.0
    precision, recall = k / partners, k / len(manifest)
    return 0.3 * f_beta(precision, recall, BETA) + 0.1 * precision


SINGLE_AXIS: dict[str, Policy] = {
    "flag_everything": flag_everything,
    "cite_every_event": cite_every_event,
    "paste_statement": paste_statement,
    "empty_script_perfect_report": empty_script_perfect_report,
    "rewrite_everyone": rewrite_everyone,
}
SWEEP_PREFIX = "flag_one_family:"


def sweep_policies(families: tuple[str, ...] = FAMILIES) -> dict[str, Policy]:
    return {f"{SWEEP_PREFIX}{f}": flag_one_family(f) for f in families}


def _declare(policy: Policy, ceiling: float | None = None, is_null: bool = False) -> Policy:
    """The gate declarations core/gates.py reads: a probe's ceiling, the null policy."""
    if ceiling is not None:
        policy.ceiling = ceiling  # type: ignore[attr-defined]
        policy.in_floor_gap = True  # type: ignore[attr-defined]
    if is_null:
        policy.is_null = True  # type: ignore[attr-defined]
    return policy


_declare(null, is_null=True)
for _probe in SINGLE_AXIS.values():
    _declare(_probe, PROBE_CEILING)


def policies(extra: Callable[[], dict[str, Policy]] | None = None) -> dict[str, Policy]:
    """The workspace-reading policies `extra` brings first (the reference leads), then ours."""
    out: dict[str, Policy] = dict(extra()) if extra is not None else {}
    out.update({"oracle": oracle, "null": null, **SINGLE_AXIS})
    return out

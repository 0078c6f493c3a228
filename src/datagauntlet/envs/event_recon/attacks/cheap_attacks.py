"""More of the cheapest policies against event-recon's reward, each a gate row with its figure.

- `perfect_report_touch` (sees the truth): the manifest's report and a script that changes one
  row to no effect (`probes.TOUCH`). It passes the validity gate, so it earns exactly the
  report's weight, 0.30 + 0.10 = 0.40, and nothing of the ledger or preservation. That is the
  report's designed value (the original's too): the gate stops an *empty* script
  (`empty_script_perfect_report` scores 0), not a script that repairs nothing.
- `fixed_script`: the same script, byte for byte, on every task (delete every event row that
  repeats another ledger row in all but its ids), and a placeholder finding: the ledger axis
  alone, for a policy that never looks at the task. It is a contract-free repair, so what
  bounds it is invariant 7, as for the workspace-only attackers: it may finish only partners
  the world counts as repairable without the contract, at most `MAX_REPAIRABLE_SHARE` of the
  broken ones, worth `CONTRACT_FREE_VALUE` (0.15). The dedupe finishes a partner whose only
  defect is a duplicate delivery; no public task has one, a private task can.
- `fixed_script_perfect_report` (sees the truth): that script under the manifest's report:
  what a blind fixed script adds to a perfect report (at most `CONTRACT_FREE_VALUE`).
- `schema_report`: reads nothing but the table names, the ledger's column names, the roster's
  ids and the first partner's first ledger event, and names every published family for that
  partner citing that event; touch script. It is the one-family sweep turned on its side (every
  family, one partner). A pair counts as found only with an event that evidences it
  (`grader.grounded`), so it finds only the families whose evidence that one event happens to
  be: without that rule it scored 0.0882 on the public split's worst task (the first partner
  carried all three pairs, and F-beta paid twelve claims at precision 3/12, recall 1). It is a
  single-axis probe, held to `PROBE_CEILING` on every task, and never above `partner_bound`.
- `merged_report`: reads one column, `partners.merged_into`, and reports
  `identity_fragmentation` for each merged duplicate and its survivor, citing the duplicate's
  first ledger event; touch script. It is a real detection made from one column, and it shows
  how much of the report one tell buys.
"""

from __future__ import annotations

from datagauntlet.core.env import Policy, sees_truth
from datagauntlet.core.episode import Episode
from datagauntlet.envs.event_recon.attacks.probes import TOUCH, _families, _placeholder, submit
from datagauntlet.envs.event_recon.grading.grader import BETA, WEIGHTS, f_beta
from datagauntlet.envs.event_recon.world.plan import MAX_REPAIRABLE_SHARE

# Same bytes on every task: the ledger's own column names come from PRAGMA at run time.
FIXED_SCRIPT = r"""
import sqlite3
db = sqlite3.connect("db.sqlite")
cols = [r[1] for r in db.execute("PRAGMA table_info(ledger_entries)")]
key = ", ".join(c for c in cols if c not in ("entry_id", "event_id"))
db.execute("DELETE FROM ledger_entries WHERE event_id IS NOT NULL AND rowid NOT IN "
           f"(SELECT MIN(rowid) FROM ledger_entries GROUP BY {key})")
db.commit()
"""


def _perfect(ep: Episode) -> list[dict[str, str]]:
    truth = ep.oracle_truth()  # type: ignore[attr-defined]
    return [
        {"family": f, "partner_id": p, "event_id": sorted(truth.evidence[(f, p)])[0]}
        for f, p in sorted(truth.manifest)
    ]


@sees_truth
def perfect_report_touch(ep: Episode) -> None:
    submit(ep, _perfect(ep), TOUCH)


def fixed_script(ep: Episode) -> None:
    submit(ep, _placeholder(ep), FIXED_SCRIPT)


@sees_truth
def fixed_script_perfect_report(ep: Episode) -> None:
    submit(ep, _perfect(ep), FIXED_SCRIPT)


def schema_report(ep: Episode) -> None:
    ep.call("sql_query", {"query": "SELECT name FROM sqlite_master WHERE type = 'table'"})
    ep.call("sql_query", {"query": "SELECT * FROM ledger_entries LIMIT 0"})
    out = ep.call("sql_query", {"query": "SELECT partner_id FROM partners ORDER BY 1 LIMIT 1"})
    first = str(out["rows"][0][0]) if out.get("rows") else "none"
    cited = ep.call(
        "sql_query",
        {
            "query": "SELECT event_id FROM ledger_entries WHERE event_id IS NOT NULL AND "
            "partner_id = (SELECT partner_id FROM partners ORDER BY 1 LIMIT 1) "
            "ORDER BY rowid LIMIT 1"
        },
    )
    event = str(cited["rows"][0][0]) if cited.get("rows") else "none"
    findings = [{"family": f, "partner_id": first, "event_id": event} for f in _families(ep)]
    submit(ep, findings, TOUCH)


def merged_report(ep: Episode) -> None:
    out = ep.call(
        "sql_query",
        {
            "query": "SELECT p.partner_id, p.merged_into, (SELECT event_id FROM ledger_entries l "
            "WHERE l.partner_id = p.partner_id AND event_id IS NOT NULL ORDER BY l.rowid "
            "LIMIT 1) FROM partners p WHERE p.merged_into IS NOT NULL ORDER BY 1"
        },
    )
    findings = []
    for duplicate, survivor, event in out.get("rows", []):
        cite = str(event) if event is not None else "none"
        for partner in (survivor, duplicate):
            findings.append(
                {"family": "identity_fragmentation", "partner_id": str(partner), "event_id": cite}
            )
    submit(ep, findings or _placeholder(ep), TOUCH)


def partner_bound(manifest: frozenset[tuple[str, str]], families: int, partner: str) -> float:
    """The most a report naming every one of `families` families for `partner` (and nothing
    else) can score on a task: the ledger stays wrong, identification is F-beta of the k pairs
    of that partner among `families` claims against the manifest, evidence at best k grounded."""
    k = sum(1 for _, p in manifest if p == partner)
    if not manifest or not families or not k:
        return 0.0
    precision, recall = k / families, k / len(manifest)
    return 0.3 * f_beta(precision, recall, BETA) + 0.1 * precision


REPORT_VALUE = 0.40  # the report's weight: identification 0.30 + evidence 0.10
# What invariant 7 leaves a script that never reads the contract: the ledger's weight on the
# share of broken partners it may finish, and preservation, which is scaled by the ledger.
CONTRACT_FREE_VALUE = (
    WEIGHTS["ledger_correctness"] + WEIGHTS["non_destructiveness"]
) * MAX_REPAIRABLE_SHARE
POLICIES: dict[str, Policy] = {
    "perfect_report_touch": perfect_report_touch,
    "fixed_script": fixed_script,
    "fixed_script_perfect_report": fixed_script_perfect_report,
    "schema_report": schema_report,
    "merged_report": merged_report,
}

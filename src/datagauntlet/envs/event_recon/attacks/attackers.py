"""The strongest workspace-only policy we could build: it never opens INTEGRATION.md and
computes no commission.

It learns the payload's field names and the ledger's columns from the data itself, then:

- reports every syntactic anomaly it can see, as the family it most looks like, for the
  partner whose rows the anomalous order touched, citing the anomalous event;
- repairs whatever bookkeeping can repair, in one literal-SQL script:
  - deletes the rows of an event that re-emits an earlier (order, seq) under a new id;
  - deletes the rows of an amendment delivered after a later-seq one (superseded);
  - deletes the rows of an amendment that carries no gross field;
  - deletes the rows of an order billed in a currency its program does not pay in;
  - re-keys the rows of a merged partner to the partner it was merged into;
  - re-buckets every event row into the month of its event in its program's own zone.

No rate, basis, bar or rounding mode is involved in any of it. Invariant 7 of the generator
bounds what this can finish: at most a quarter of a task's broken partners. `tests/event_recon/
test_er_attackers.py` and the gates hold it to its lines (no task solved, the ledger component
under the fitted lines of `ceilings.json`).

The steps live apart: `stream.infer_names` learns the names, `anomalies.look` what the stream
shows, `repairs` the edits and the script that applies them; this module reports and plays.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from datagauntlet.core.episode import Episode
from datagauntlet.envs.event_recon.attacks.anomalies import Seen, look
from datagauntlet.envs.event_recon.attacks.repairs import Edits, bookkeeping, render, widen_edits
from datagauntlet.envs.event_recon.attacks.stream import infer_names
from datagauntlet.envs.event_recon.solver.view import View, gather, ok

SCRIPT_PATH = "bookkeeping_fix.py"


def report_of(view: View, seen: Seen, edits: Edits) -> list[dict[str, str]]:
    """Each anomaly, for the partner(s) its order's rows belong to, citing its event."""
    partners = {p["partner_id"]: p for p in view.table("partners")}
    owner: dict[str, set[str]] = defaultdict(set)
    for r in view.table("ledger_entries"):
        if r.get("order_ref"):
            owner[r["order_ref"]].add(r["partner_id"])
            merged = (partners.get(r["partner_id"]) or {}).get("merged_into")
            if merged:
                owner[r["order_ref"]].add(merged)
    anomalies = list(seen.anomalies)
    anomalies += [("timezone_boundary", o, e) for o, e in sorted(edits.rebucketed.items())]
    findings: dict[tuple[str, str], str] = {}
    for family, order, eid in anomalies:
        for partner in sorted(owner.get(order, ())):
            findings.setdefault((family, partner), eid)
    return [{"family": f, "partner_id": p, "event_id": e} for (f, p), e in sorted(findings.items())]


def plan(view: View, widen: tuple[str, ...] = ()) -> tuple[list[dict[str, str]], str]:
    """The report and the script text."""
    n = infer_names(view)
    seen = look(view, n)
    edits = bookkeeping(view, n, seen)
    widen_edits(view, n, seen, edits, widen)
    return report_of(view, seen, edits), render(n, edits, view.tables["ledger_entries"].columns)


def workspace_only(ep: Episode, widen: tuple[str, ...] = ()) -> None:
    """Pattern-matches defects and repairs what bookkeeping can; never reads the contract."""
    view = gather(ep, contract=False)
    report, script = plan(view, widen)
    if not report:
        report = [{"family": "duplicate_delivery", "partner_id": "none", "event_id": "none"}]
    ok(ep, "write_file", {"path": SCRIPT_PATH, "content": script})
    ok(ep, "submit_report", {"findings": report, "script_path": SCRIPT_PATH})


# The widest attack inside the definition (no contract, no commission): the five repairs,
# plus a refund with no amount (or a held-back refund of the whole gross) reversing what its
# order booked, plus dropping the rows of orders under the database's bar. Scaling a booked
# amount (by a refund's share of the gross, or by the schedule's rates for a stale cached tier)
# is arithmetic on a commission, so it is kept apart as `workspace_only_scaled`.
STRONGEST = ("refund_all", "refund_full", "under_bar")
SCALED = (*STRONGEST, "refund_share", "tier_scale")


def strongest(ep: Episode) -> None:
    """The five bookkeeping repairs and the widenings that need no contract."""
    workspace_only(ep, STRONGEST)


def scaled(ep: Episode) -> None:
    """`strongest` plus two repairs that scale booked amounts (beyond the definition)."""
    workspace_only(ep, SCALED)


def policies() -> dict[str, Any]:
    return {"workspace_only": strongest, "workspace_only_scaled": scaled}

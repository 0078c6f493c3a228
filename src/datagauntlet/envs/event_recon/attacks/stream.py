"""What the workspace-only attack reads off the data without the contract: the per-seed
names, and money as the stream itself types it (shared by the attacker and its widening)."""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from decimal import ROUND_HALF_EVEN, Decimal, InvalidOperation
from typing import Any

from datagauntlet.envs.event_recon.solver.view import View

ISO = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$")
MONTH = re.compile(r"^\d{4}-\d\d$")


@dataclass(frozen=True)
class Names:
    """The per-seed names, recovered from the data without the contract."""

    order: str
    code: str
    time: str
    gross: str
    tax: str
    amount: str
    period: str


def is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def minor_units(value: Any) -> int | None:
    """Money as the stream itself types it: integers are minor units, strings decimals."""
    if is_int(value):
        return int(value)
    try:
        return int((Decimal(str(value)) * 100).to_integral_value(rounding=ROUND_HALF_EVEN))
    except (InvalidOperation, ValueError):
        return None


def _money_value(v: Any) -> float:
    if is_int(v):
        return float(v)
    try:
        return float(v) * 100
    except (TypeError, ValueError):
        return 0.0


def infer_names(view: View) -> Names:
    rows = view.table("ledger_entries")
    refs = {r["order_ref"] for r in rows if r.get("order_ref")}
    codes = {r["code"] for r in view.table("referral_codes")}
    created = [w["payload"] for w in view.webhooks if w.get("type") == "order.created"]
    keys: Counter[str] = Counter(k for p in created for k in p)
    common = [k for k, n in keys.items() if n == len(created)]

    def share(key: str, test: Any) -> float:
        return sum(1 for p in created if test(p.get(key))) / max(1, len(created))

    order = max(common, key=lambda k: share(k, lambda v: v in refs))
    code = max(common, key=lambda k: share(k, lambda v: v in codes))
    time = max(common, key=lambda k: share(k, lambda v: isinstance(v, str) and bool(ISO.match(v))))
    fixed = {order, code, time, "seq", "currency", "customer"}
    money = [k for k in common if k not in fixed]
    money.sort(key=lambda k: -sum(_money_value(p.get(k)) for p in created))
    gross, tax = [*money, "", ""][:2]
    columns = view.tables["ledger_entries"].columns
    named = {"entry_id", "partner_id", "program_id", "order_ref", "event_id", "kind"}
    named |= {"currency", "approved_by"}
    free = [c for c in columns if c not in named]
    period = next(c for c in free if all(MONTH.match(str(r[c])) for r in rows))
    amount = next(c for c in free if c != period)
    return Names(order, code, time, gross, tax, amount, period)

"""Write the remediation script: literal SQL over `sqlite3`, nothing else.

The graded script runs in a sandbox that can import only the standard library, so it carries
its fix as data: for every moved order, the ledger rows to delete (by `order_ref`) and the
rows the contract says it books. Rows of orders nobody moved, manual rows and `payouts` are
never touched. Before the script is written, `plan_fix` applies the same edit to the rows it
read and checks the result: every partner lands on the contract's projection and every
partner that was already right keeps exactly the rows it had.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from datagauntlet.envs.event_recon.solver.ledger import (
    Ledger,
    Line,
    World,
    projection,
    shipped_projection,
)
from datagauntlet.envs.event_recon.solver.view import Row

FIXED = ("entry_id", "partner_id", "program_id", "order_ref", "event_id", "kind", "currency")


class FixRefused(RuntimeError):
    """The planned edit would not land the ledger, or would touch a partner that was right."""


@dataclass(frozen=True)
class Fix:
    columns: tuple[str, ...]
    delete_orders: tuple[str, ...]
    insert: tuple[tuple[object, ...], ...]
    notes: dict[str, str]  # order id -> why (its family)


def _row(world: World, columns: tuple[str, ...], line: Line, n: int) -> tuple[object, ...]:
    t = world.terms
    values: dict[str, object] = {
        "entry_id": f"fix_{line.order_id}_{n}",
        "partner_id": line.partner_id,
        "program_id": line.program_id,
        "order_ref": line.order_id,
        "event_id": line.event_id,
        "kind": line.kind,
        "currency": line.currency,
        "approved_by": None,
        t.period_column: line.period,
        t.amount_column: line.amount,
    }
    return tuple(values.get(c) for c in columns)


def _partner_rows(
    rows: list[Row], columns: tuple[str, ...]
) -> dict[str, Counter[tuple[object, ...]]]:
    out: dict[str, Counter[tuple[object, ...]]] = {}
    for r in rows:
        out.setdefault(r["partner_id"], Counter())[tuple(r.get(c) for c in columns)] += 1
    return out


def plan_fix(
    world: World,
    ledger: Ledger,
    columns: tuple[str, ...],
    orders: list[str],
    notes: dict[str, str],
    check: bool = True,
) -> Fix:
    """The edit for `orders`, checked against the contract's projection before it is written."""
    inserts = []
    for order_id in orders:
        for n, line in enumerate(ledger.lines.get(order_id, [])):
            inserts.append(_row(world, columns, line, n))
    fix = Fix(columns, tuple(orders), tuple(inserts), dict(notes))
    if not check:
        return fix
    before = world.ledger_rows
    gone = set(orders)
    after = [r for r in before if r.get("order_ref") not in gone]
    after += [dict(zip(columns, values, strict=True)) for values in inserts]
    want = projection(world, ledger)
    got = shipped_projection(world, after)
    if got != want:
        wrong = sorted(p for p in want if got.get(p, {}) != want[p])
        raise FixRefused(f"the planned edit leaves {len(wrong)} partners wrong: {wrong[:5]}")
    shipped = shipped_projection(world, before)
    old_rows, new_rows = _partner_rows(before, columns), _partner_rows(after, columns)
    for partner in want:
        was_right = shipped.get(partner, {}) == want[partner]
        if was_right and old_rows.get(partner, Counter()) != new_rows.get(partner, Counter()):
            raise FixRefused(f"the planned edit rewrites rows of {partner}, which was right")
    return fix


SCRIPT = '''"""Remediation for ledger_entries, written from INTEGRATION.md's rules.

For each order whose booked rows disagree with the contract, delete its rows and book what the
contract says it earns ({n_orders} orders, {n_rows} rows). Manual rows, rows of every other
order and payouts are left alone.
"""
import sqlite3

COLUMNS = {columns!r}
ORDERS = {orders}
ROWS = {rows}

db = sqlite3.connect("db.sqlite")
with db:
    for order_ref, _why in ORDERS:
        db.execute("DELETE FROM ledger_entries WHERE order_ref = ?", (order_ref,))
    db.executemany(
        "INSERT INTO ledger_entries ({{}}) VALUES ({{}})".format(
            ", ".join(COLUMNS), ", ".join("?" * len(COLUMNS))
        ),
        ROWS,
    )
db.close()
'''


def _block(items: list[str]) -> str:
    if not items:
        return "[]"
    return "[\n" + "".join(f"    {i},\n" for i in items) + "]"


def render_script(fix: Fix) -> str:
    orders = [repr((o, fix.notes.get(o, ""))) for o in fix.delete_orders]
    rows = [repr(r) for r in fix.insert]
    return SCRIPT.format(
        n_orders=len(orders),
        n_rows=len(rows),
        columns=fix.columns,
        orders=_block(orders),
        rows=_block(rows),
    )

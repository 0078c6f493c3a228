"""Write the remediation script: literal SQL over `sqlite3`, nothing else.

The graded script runs in a sandbox that can import only the standard library, so it carries
its fix as data, in two steps that must run in this order:

1. re-key: every row a merged duplicate holds moves to the partner it was merged into (R6);
2. rebook: for every order whose rows are still not what the contract books, delete its rows
   of the partner that now holds them and book the contract's rows.

The order matters when a defect sits on the orders of a merged duplicate's code: rebooking
first finds the survivor holding none of those rows, books the contract's, and the re-key
then adds the duplicate's wrong rows on top. Rows of orders nobody moved, manual rows and
`payouts` are never touched. Before the script is written, `plan_fix` applies the same
steps, in order, to the rows it read and checks the result: every partner lands on the
contract's projection and every partner that was already right keeps exactly its rows.
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
STEPS = ("rekey", "rebook")  # the order the script runs them in


class FixRefused(RuntimeError):
    """The planned edit would not land the ledger, or would touch a partner that was right."""


@dataclass(frozen=True)
class Fix:
    columns: tuple[str, ...]
    rekey: tuple[tuple[str, str], ...]  # (merged duplicate, survivor)
    rebook: tuple[tuple[str, str], ...]  # (order id, partner holding its rows after re-key)
    insert: tuple[tuple[object, ...], ...]
    notes: dict[str, str]  # order id -> why (its family)

    @property
    def delete_orders(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(o for o, _ in self.rebook))


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


def run_steps(rows: list[Row], fix: Fix, order: tuple[str, ...] = STEPS) -> list[Row]:
    """The script's steps applied to ledger rows in `order`, as the SQL does them."""
    out = [dict(r) for r in rows]
    for step in order:
        if step == "rekey":
            for duplicate, survivor in fix.rekey:
                for r in out:
                    if r.get("partner_id") == duplicate:
                        r["partner_id"] = survivor
        elif step == "rebook":
            gone = set(fix.rebook)
            out = [r for r in out if (r.get("order_ref"), r.get("partner_id")) not in gone]
            out += [dict(zip(fix.columns, values, strict=True)) for values in fix.insert]
    return out


def _rekeys(world: World) -> tuple[tuple[str, str], ...]:
    holders = {r.get("partner_id") for r in world.ledger_rows}
    return tuple(
        (p, world.survivor(p))
        for p in sorted(world.partners)
        if world.partners[p].get("merged_into") and p in holders and world.survivor(p) != p
    )


def plan_fix(
    world: World,
    ledger: Ledger,
    columns: tuple[str, ...],
    orders: list[str],
    notes: dict[str, str],
    check: bool = True,
) -> Fix:
    """The edit for `orders`, checked against the contract's projection before it is written."""
    rekey = _rekeys(world)
    moved = Fix(columns, rekey, (), (), {})
    keyed = run_steps(world.ledger_rows, moved, ("rekey",))
    amount, period = world.terms.amount_column, world.terms.period_column
    held: dict[str, dict[tuple[str, str], int]] = {}
    wanted = set(orders)
    for r in keyed:
        if r.get("order_ref") in wanted:
            lines = held.setdefault(r["order_ref"], {})
            key = (r["partner_id"], r[period])
            lines[key] = lines.get(key, 0) + int(r[amount])
    rebook: list[tuple[str, str]] = []
    inserts = []
    for order_id in orders:
        booked = {k: v for k, v in held.get(order_id, {}).items() if v}
        if booked == ledger.order_lines(order_id):
            continue  # the re-key alone finished it
        partners = sorted({r["partner_id"] for r in keyed if r.get("order_ref") == order_id})
        rebook += [(order_id, p) for p in partners]
        for n, line in enumerate(ledger.lines.get(order_id, [])):
            inserts.append(_row(world, columns, line, n))
    fix = Fix(columns, rekey, tuple(rebook), tuple(inserts), dict(notes))
    if check:
        _check(world, ledger, columns, fix)
    return fix


def _check(world: World, ledger: Ledger, columns: tuple[str, ...], fix: Fix) -> None:
    before = world.ledger_rows
    after = run_steps(before, fix)
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


SCRIPT = '''"""Remediation for ledger_entries, written from INTEGRATION.md's rules.

Steps, in this order: re-key the rows of each merged duplicate onto the partner it was merged
into ({n_rekey}); then, for each order whose rows still disagree with the contract, delete its
rows and book what the contract says it earns ({n_orders} orders, {n_rows} rows). Manual rows,
rows of every other order and payouts are left alone.
"""
import sqlite3

COLUMNS = {columns!r}
REKEY = {rekey}
REBOOK = {rebook}
ROWS = {rows}


def rekey(db):
    for duplicate, survivor in REKEY:
        db.execute(
            "UPDATE ledger_entries SET partner_id = ? WHERE partner_id = ?", (survivor, duplicate)
        )


def rebook(db):
    for order_ref, partner_id, _why in REBOOK:
        db.execute(
            "DELETE FROM ledger_entries WHERE order_ref = ? AND partner_id = ?",
            (order_ref, partner_id),
        )
    db.executemany(
        "INSERT INTO ledger_entries ({{}}) VALUES ({{}})".format(
            ", ".join(COLUMNS), ", ".join("?" * len(COLUMNS))
        ),
        ROWS,
    )


db = sqlite3.connect("db.sqlite")
with db:
{calls}
db.close()
'''


def _block(items: list[str]) -> str:
    if not items:
        return "[]"
    return "[\n" + "".join(f"    {i},\n" for i in items) + "]"


def render_script(fix: Fix, order: tuple[str, ...] = STEPS) -> str:
    """The script; `order` is the order its steps run in (tests run them the wrong way)."""
    if sorted(order) != sorted(STEPS):
        raise ValueError(f"order must be a permutation of {STEPS}, got {order}")
    rebook = [repr((o, p, fix.notes.get(o, ""))) for o, p in fix.rebook]
    return SCRIPT.format(
        n_rekey=len(fix.rekey),
        n_orders=len(fix.delete_orders),
        n_rows=len(fix.insert),
        columns=fix.columns,
        rekey=_block([repr(pair) for pair in fix.rekey]),
        rebook=_block(rebook),
        rows=_block([repr(r) for r in fix.insert]),
        calls="".join(f"    {step}(db)\n" for step in order),
    )

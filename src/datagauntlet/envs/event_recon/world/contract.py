"""INTEGRATION.md: the contract, rendered per seed with this task's names and parameters."""

from __future__ import annotations

from datagauntlet.envs.event_recon.grading.accounting import iso
from datagauntlet.envs.event_recon.world.draft import Draft

RULE_IDS = (*(f"R{i}" for i in range(1, 15)), "W1", "W2")

# What each family means, in the contract's terms (generic: nothing about a task).
FAMILY_SUMMARIES = {
    "duplicate_delivery": "an event re-emitted live under a new `event_id` was counted again (R2)",
    "out_of_order_delivery": "amendments applied in delivery order, not `seq` order (R3)",
    "missing_field_coercion": "an absent money field was read as zero (W1, R13)",
    "schema_drift": "money read by the envelope version instead of its JSON type (W2)",
    "currency_or_rounding_drift": (
        "an order in a currency its program does not pay in earned (R12), or a money string "
        "with extra decimals was not rounded half to even (W2)"
    ),
    "partial_backfill": (
        "in a backfill batch, an effect delivered before its order was dropped, not held (R4)"
    ),
    "identity_fragmentation": "a merged duplicate partner record kept earning (R6)",
    "tier_misconfiguration": "a code's cached tier was used instead of its partner's (R7)",
    "gross_net_divergence": "commission computed on the wrong basis (R8)",
    "timezone_boundary": "an order bucketed by its UTC month, not the payout zone's (R9)",
    "retroactive_program_change": "a rate change applied to orders placed before it (R7)",
    "qualification_bar_mismatch": "an order judged against the wrong qualification bar (R10)",
}

TEMPLATE = """\
# Integration contract: {brand} referral program

The platform pays creators commission on orders placed with {brand} through their
referral codes. The brand sends webhook envelopes; the platform's ledger builder books
commission into `ledger_entries`. This contract is the authority on what is owed. Where
the database, the statement or the builder disagree with it, the contract wins.

All money is integer minor units of {currency} (1/100 of a unit). All times are UTC
ISO-8601 instants (`YYYY-MM-DDTHH:MM:SSZ`) unless a rule names a zone.

## Wire format

Each line of `webhooks.jsonl` is one delivery, in the order the platform received it:
`delivery` (position), `event_id`, `type` (`order.created`, `order.updated`,
`order.refunded`), `version` (envelope version), `attempt` (1 for a first delivery),
`backfill` (true for a historical batch re-sent by the brand), `batch` (the batch id or
null), `received_at`, `signature` and `payload`. The signature is `sha256=` followed by
the hex SHA-256 of the payload serialised as JSON with sorted keys and no spaces.

Payload fields in this integration (the names are specific to this brand):

| meaning | field | in |
|---|---|---|
| order id | `{order_field}` | every event |
| referral code | `{code_field}` | order.created |
| gross amount (tax included) | `{gross_field}` | created; optional in updated, refunded |
| tax part of the gross | `{tax_field}` | created; optional in updated, refunded |
| when it happened | `{time_field}` | every event |
| per-order sequence number (created is 1) | `seq` | every event |
| order currency | `currency` | order.created |
| buyer | `customer` | order.created |

An `order.updated` restates the order's gross and/or tax. An `order.refunded` refunds
the stated gross and tax. The brand moved from envelope version 1 to version 2 at
{cutover} (by `received_at`): version 1 sends money as JSON integers of minor units,
version 2 as decimal strings of major units (`"129.90"`).

## Wire-typing rules

- **W1.** A money field absent from an `order.updated` keeps its previous value; absent
  never means zero. An `order.refunded` without a gross (and tax) refunds everything of
  the order not refunded by its earlier refunds (see R13).
- **W2.** The JSON type of a money value decides how it is read, whatever the envelope
  version says: an integer is minor units; a string is a decimal amount in major units,
  converted to minor units exactly and, if it has more than two decimals, rounded half
  to even to the minor unit.

## Accounting rules

- **R1.** A delivery whose `event_id` was already delivered is a retry and has no effect.
- **R2.** An effect is identified by (order id, `seq`). A second event with the same
  order id and `seq` under a different `event_id` is a duplicate emission and has no
  effect; the first delivered counts.
- **R3.** Events of one order apply in `seq` order, whatever order they were delivered
  in. The order's latest state is the one after its highest-`seq` `order.updated`.
- **R4.** An effect delivered before its order's `order.created` is held and applied once
  the order arrives; it is never dropped. Backfill deliveries count like any other.
- **R5.** An order is attributed through its referral code: the `referral_codes` row for
  that code with the latest `valid_from` at or before the order's time gives the partner
  and the program. A code lawfully moves between programs this way. An order whose code
  has no such row earns nothing.
- **R6.** A partner with `merged_into` set is a duplicate record: everything it would
  earn belongs to the partner it was merged into, and it has no balance of its own.
- **R7.** The rate is the schedule below's rate for the order's program and the tier of
  the partner it is attributed to (the `tier` in `partners`, after R6), in force at the
  order's creation time (the version with the latest `effective_from` at or before it).
  Refunds use the same rate as their order. The `tier` column of `referral_codes` is a
  cache and is not authoritative; the schedule is mirrored in the `programs` table.
- **R8.** A `gross` program pays on the gross; a `net` program pays on gross minus tax.
- **R9.** The payout period is the calendar month (`YYYY-MM`) of the event's time in the
  program's payout zone: the order's creation time for its commission, the refund's own
  time for a refund.
- **R10.** An order earns only if its latest gross is at or above its program's
  qualification bar (`min_order_minor`); below it, it earns nothing and its refunds
  reverse nothing.
- **R11.** Commission = basis x rate_bps / 10000, rounded half to even to the minor unit,
  computed once per order (on its latest state) and once per refund (on the refund).
- **R12.** An order in a currency other than its program's earns nothing, nor do its
  refunds.
- **R13.** A refund books minus the commission on the refunded basis (R8, R11), in the
  refund's period (R9). A refund without amounts refunds the order's remaining gross and
  tax (its latest state minus earlier refunds, by `seq`).
- **R14.** `ledger_entries` rows of kind `manual` with a non-empty `approved_by` are
  authorised adjustments: they stand as booked and reconcile against no event.

## The correct ledger

A ledger is correct when its balance projection equals the one these rules define. The
balance projection of `ledger_entries` is, for every `partner_id`, the sum of
`{amount_column}` per `{period_column}`, with zero sums left out. The rules' projection
is the commission of every order (R11, booked in the order's period) plus every refund
(R13, in the refund's period) plus the authorised manual rows (R14), summed the same
way. The rows of a partner whose balance is wrong are free in shape: any set of rows with
the right sums is correct. The rows of a partner whose balance is already right must be
left exactly as they are, every column of every row, even a rewrite with the same sums
counts against the repair. `payouts` are history: never edit them.

`ledger_entries` columns: `entry_id`, `partner_id`, `program_id`, `order_ref`,
`event_id`, `kind` (accrual, adjustment, reversal, manual), `{period_column}`,
`{amount_column}`, `currency`, `approved_by`. `events_ingested` records what the builder
did with each delivery (`applied`, `retry_ignored`, `dead_letter`).

## Programs and commission schedule

| program_id | name | basis | bar (min_order_minor) | payout zone | currency |
|---|---|---|---|---|---|
{program_rows}

| program_id | tier | rate_bps | effective_from |
|---|---|---|---|
{rate_rows}

## The brand's statement

`partner_statement.csv` is the brand's own summary and is authoritative about volume
only: per partner the order's code was issued to (the brand knows nothing of the
platform's merges) and UTC calendar month of the order, the distinct orders it knows
(`orders`) and their latest gross (`gross_minor`). Its commission column follows
the brand's policy, not this contract: the program's `standard` tier rate in force at
the order, on gross, with no qualification bar, no currency check and no refunds netted.

## Reporting defects

A finding names a family, a `partner_id` whose balance the defect moved, and an
`event_id` on an order the defect moved. Recognised families:

{family_rows}

| family | what went wrong |
|---|---|
{family_meanings}
"""


def _money(minor: int, currency: str) -> str:
    return f"{minor} ({minor // 100}.{minor % 100:02d} {currency})"


def render_contract(
    draft: Draft, families: tuple[str, ...], summaries: dict[str, str] | None = None
) -> str:
    s = draft.schema
    meanings = {**FAMILY_SUMMARIES, **(summaries or {})}
    programs = sorted(draft.programs.values(), key=lambda p: p.program_id)
    program_rows = "\n".join(
        f"| `{p.program_id}` | {p.name} | {p.basis} | {_money(p.min_order_minor, p.currency)} "
        f"| {p.payout_zone} | {p.currency} |"
        for p in programs
    )
    rate_rows = "\n".join(
        f"| `{v.program_id}` | {v.tier} | {v.rate_bps} | {v.effective_from} |"
        for v in sorted(draft.schedule, key=lambda v: (v.program_id, v.effective_from, v.tier))
    )
    return TEMPLATE.format(
        brand=draft.brand,
        currency=draft.currency,
        cutover=iso(draft.cutover),
        order_field=s.order_field,
        code_field=s.code_field,
        gross_field=s.gross_field,
        tax_field=s.tax_field,
        time_field=s.time_field,
        amount_column=s.amount_column,
        period_column=s.period_column,
        program_rows=program_rows,
        rate_rows=rate_rows,
        family_rows="\n".join(f"- `{f}`" for f in families),
        family_meanings="\n".join(
            f"| `{f}` | {meanings.get(f, '')} |" for f in families if meanings.get(f)
        ),
    )

"""Record types of an event-recon world: plain frozen data, no accounting in here.

The independent reconciler may import this module (and `zones`), and nothing else of the
generator, so every monetary quantity it reports is derived by its own code.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

FILES = ("db.sqlite", "webhooks.jsonl", "partner_statement.csv", "INTEGRATION.md")
TABLES = ("partners", "programs", "referral_codes", "events_ingested", "ledger_entries", "payouts")

FAMILIES = (
    "duplicate_delivery",
    "out_of_order_delivery",
    "missing_field_coercion",
    "schema_drift",
    "currency_or_rounding_drift",
    "partial_backfill",
    "identity_fragmentation",
    "tier_misconfiguration",
    "gross_net_divergence",
    "timezone_boundary",
    "retroactive_program_change",
    "qualification_bar_mismatch",
)
TIERS = (1, 2, 3, 4)
EVENT_TYPES = ("order.created", "order.updated", "order.refunded")
ENTRY_KINDS = ("accrual", "adjustment", "reversal", "manual")

# {partner_id: {period "YYYY-MM": minor units}}: zero balances are left out, and every
# partner on the roster has a key (an empty dict when it is owed nothing).
Projection = dict[str, dict[str, int]]


@dataclass(frozen=True)
class Schema:
    """The per-seed names: five webhook payload fields and two ledger columns.

    Copying a query from another task then fails on a missing column instead of answering.
    """

    order_field: str
    code_field: str
    gross_field: str
    tax_field: str
    time_field: str
    amount_column: str  # ledger_entries: the signed amount in minor units
    period_column: str  # ledger_entries: the payout period "YYYY-MM"

    def payload_fields(self) -> dict[str, str]:
        return {
            "order": self.order_field,
            "code": self.code_field,
            "gross": self.gross_field,
            "tax": self.tax_field,
            "time": self.time_field,
        }


@dataclass(frozen=True)
class Partner:
    partner_id: str
    name: str
    tier: str
    email: str
    merged_into: str | None = None  # an absorbed duplicate record points at the survivor


@dataclass(frozen=True)
class RateVersion:
    """One row of the commission schedule: a (program, tier) rate from `effective_from`."""

    program_id: str
    tier: str
    rate_bps: int
    effective_from: str  # UTC ISO instant; the rate in force at an order's occurred_at applies


@dataclass(frozen=True)
class Program:
    program_id: str
    name: str
    basis: str  # "gross" or "net" (net = gross - tax)
    min_order_minor: int  # the qualification bar, compared with the order's gross
    payout_zone: str  # IANA zone name: periods are calendar months in this zone
    currency: str


@dataclass(frozen=True)
class ReferralCode:
    """Code `code` belongs to `partner_id` and earns under `program_id` from `valid_from`.

    `tier` is the platform's cached copy of the partner's tier; it is not authoritative.
    """

    code: str
    partner_id: str
    program_id: str
    tier: str
    valid_from: str


# Envelope and LedgerEntry write their own `__init__`: the one dataclass writes for a frozen
# class sets each field through object.__setattr__ (to get past the freeze), twice the cost of
# one `__dict__` update, and a world makes thousands of them per plan it tries
# (tests/event_recon/test_world_generation.py checks each sets exactly its fields).
@dataclass(frozen=True)
class Envelope:
    """One delivery as it appears on the wire (a line of webhooks.jsonl), in delivery order."""

    delivery: int  # 1-based position in the stream
    event_id: str
    event_type: str
    version: int
    attempt: int
    backfill: bool
    batch: str | None
    received_at: str
    payload: dict[str, Any]
    signature: str = ""

    def __init__(
        self,
        delivery: int,
        event_id: str,
        event_type: str,
        version: int,
        attempt: int,
        backfill: bool,
        batch: str | None,
        received_at: str,
        payload: dict[str, Any],
        signature: str = "",
    ) -> None:
        # Written out: see the note above this class.
        self.__dict__.update(
            delivery=delivery,
            event_id=event_id,
            event_type=event_type,
            version=version,
            attempt=attempt,
            backfill=backfill,
            batch=batch,
            received_at=received_at,
            payload=payload,
            signature=signature,
        )


@dataclass(frozen=True)
class LedgerEntry:
    entry_id: str
    partner_id: str
    program_id: str
    order_ref: str | None
    event_id: str | None
    kind: str
    period: str
    amount_minor: int
    currency: str
    approved_by: str | None = None

    def __init__(
        self,
        entry_id: str,
        partner_id: str,
        program_id: str,
        order_ref: str | None,
        event_id: str | None,
        kind: str,
        period: str,
        amount_minor: int,
        currency: str,
        approved_by: str | None = None,
    ) -> None:
        # Written out: see the note above Envelope.
        self.__dict__.update(
            entry_id=entry_id,
            partner_id=partner_id,
            program_id=program_id,
            order_ref=order_ref,
            event_id=event_id,
            kind=kind,
            period=period,
            amount_minor=amount_minor,
            currency=currency,
            approved_by=approved_by,
        )


@dataclass(frozen=True)
class IngestRow:
    event_id: str
    received_at: str
    event_type: str
    order_ref: str | None
    status: str  # "applied", "retry_ignored" or "dead_letter"


@dataclass(frozen=True)
class Payout:
    payout_id: str
    partner_id: str
    period: str
    amount_minor: int
    paid_at: str


@dataclass(frozen=True)
class StatementRow:
    partner_id: str
    partner_name: str
    period: str
    orders: int
    gross_minor: int
    commission_minor: int


@dataclass(frozen=True)
class Defect:
    """One manifest entry: `family` moved `partner_id`'s balance; `evidence` are event ids on
    the orders it moved."""

    family: str
    partner_id: str
    evidence: tuple[str, ...]


@dataclass(frozen=True)
class World:
    """One task, recomputed from its seed; nothing here is stored anywhere."""

    seed: int
    tier: int
    schema: Schema
    currency: str
    brand: str
    partner_ids: tuple[str, ...]
    files: dict[str, bytes]
    manifest: tuple[Defect, ...]
    correct: Projection  # what the contract says is owed
    shipped: Projection  # what the platform's ledger says
    zone_source: str
    families: tuple[str, ...] = FAMILIES  # the families this task's contract publishes
    attempts: int = 1  # plans drawn before one met all ten conditions
    notes: dict[str, Any] = field(default_factory=dict)

    @property
    def broken_partners(self) -> tuple[str, ...]:
        return tuple(p for p in self.partner_ids if self.correct[p] != self.shipped[p])

    @property
    def pairs(self) -> tuple[tuple[str, str], ...]:
        return tuple(sorted({(d.family, d.partner_id) for d in self.manifest}))

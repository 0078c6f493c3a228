"""Word lists for names and the per-seed field and column names."""

from __future__ import annotations

CURRENCIES = ("USD", "EUR", "GBP", "CAD", "AUD", "CHF", "SEK", "NZD")
PARTNER_TIERS = ("standard", "plus", "elite")

BRAND_HEADS = (
    "Lumen",
    "Verdant",
    "North",
    "Copper",
    "Tidal",
    "Ember",
    "Atlas",
    "Juniper",
    "Halcyon",
    "Orbit",
)
BRAND_TAILS = (
    "Goods",
    "Outfitters",
    "Supply",
    "Apparel",
    "Labs",
    "Home",
    "Botanics",
    "Gear",
    "Studio",
    "Co",
)
PROGRAM_NAMES = (
    "Spring Launch",
    "Evergreen",
    "Creator Core",
    "Holiday Push",
    "Loyalty Plus",
    "New Markets",
    "Bundle Boost",
    "Summit",
    "Starter",
    "Signature",
)
FIRST = (
    "Ada",
    "Bea",
    "Cal",
    "Dev",
    "Eli",
    "Fen",
    "Gia",
    "Hal",
    "Ira",
    "Jun",
    "Kai",
    "Lio",
    "Mia",
    "Noa",
    "Oli",
    "Pia",
    "Quin",
    "Ray",
    "Sol",
    "Tao",
    "Uma",
    "Vic",
    "Wen",
    "Yas",
)
LAST = (
    "Arden",
    "Brook",
    "Castell",
    "Dune",
    "Ellery",
    "Frost",
    "Garza",
    "Holm",
    "Iver",
    "Juarez",
    "Kestrel",
    "Lark",
    "Moreau",
    "Nadir",
    "Okafor",
    "Pryce",
    "Quill",
    "Rook",
    "Sato",
    "Thorne",
    "Underhill",
    "Vance",
    "Wilde",
    "Yuen",
)
APPROVERS = ("finance.ops", "controller", "partner.success", "audit.desk")

# Candidate names for the five renamed payload fields and the two renamed ledger columns.
ORDER_FIELDS = ("order_id", "order_ref", "purchase_id", "txn_id", "checkout_id")
CODE_FIELDS = ("referral_code", "ref_code", "promo_code", "creator_code", "ref")
GROSS_FIELDS = ("gross", "gross_amount", "order_total", "amount_gross", "subtotal")
TAX_FIELDS = ("tax", "tax_amount", "vat", "sales_tax", "tax_total")
TIME_FIELDS = ("occurred_at", "placed_at", "event_time", "ts", "happened_at")
AMOUNT_COLUMNS = ("amount_minor", "commission_minor", "value_minor", "accrued_minor", "delta_minor")
PERIOD_COLUMNS = ("period", "payout_period", "pay_period", "cycle", "statement_month")

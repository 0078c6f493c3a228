"""The data contract: constants, the contract text agents read, and the defect vocabulary."""

from __future__ import annotations

from typing import Any

WINDOW_START = "2026-09-01"
WINDOW_END = "2026-09-30"
MAX_AMOUNT = 50_000
CURRENCY = "USD"
STATUSES = ("placed", "shipped", "delivered", "returned", "refunded")
COUNTRIES = ("US", "CA", "GB", "DE", "FR", "KR", "JP", "AU")
DEFECT_TYPES = (
    "duplicate_key",
    "missing_value",
    "invalid_value",
    "orphan_reference",
    "out_of_range",
    "wrong_currency",
    "out_of_window",
)
ORDER_COLUMNS = ("order_id", "customer_id", "amount", "currency", "status", "order_date")
CUSTOMER_COLUMNS = ("customer_id", "email", "country", "signup_date")
COLUMNS = {"orders": ORDER_COLUMNS, "customers": CUSTOMER_COLUMNS}

# Extended families only: the reject limit and the unit-error rule.
MAX_BAD_ROWS = 2
UNIT_RATIO = 10


def contract(extended: bool = False) -> dict[str, Any]:
    """The contract of generated cases, as agents read it (fixture cases carry their own)."""
    orders = {
        "order_id": "must not repeat, neither inside the batch nor against wh_orders",
        "customer_id": "must name a customer already in wh_customers or in a customers batch "
        "loaded before this one in the same session",
        "amount": f"a number, required; greater than 0 and at most {MAX_AMOUNT}, except for "
        f"status 'refunded', where it lies in [-{MAX_AMOUNT}, 0)",
        "currency": f"'{CURRENCY}' only: the revenue mart adds amounts without converting",
        "status": "one of " + ", ".join(STATUSES) + ", written exactly like that",
        "order_date": "YYYY-MM-DD, on or between the reporting window's start and end",
    }
    customers = {
        "customer_id": "must not repeat, neither inside the batch nor against wh_customers",
        "email": "required, never blank",
        "country": "two-letter code, one of " + ", ".join(COUNTRIES),
        "signup_date": "YYYY-MM-DD, not later than the reporting window's end",
    }
    out: dict[str, Any] = {
        "orders": orders,
        "customers": customers,
        "limits": {
            "max_amount": MAX_AMOUNT,
            "currency": CURRENCY,
            "allowed_status": list(STATUSES),
            "allowed_countries": list(COUNTRIES),
        },
        "reporting_window": {"start": WINDOW_START, "end": WINDOW_END},
        "defect_types": list(DEFECT_TYPES),
    }
    if extended:
        orders["order_id"] += "; every row whose order_id occurs twice breaks this rule"
        customers["customer_id"] += "; every row whose customer_id occurs twice breaks this rule"
        orders["amount"] += (
            f"; and, for a customer with orders in wh_orders, at most {UNIT_RATIO} times that "
            "customer's largest amount there (a larger one is a cents/dollars mix-up: "
            "out_of_range)"
        )
        out["limits"]["max_bad_rows"] = MAX_BAD_ROWS
        out["limits"]["unit_ratio"] = UNIT_RATIO
        out["row_rules"] = (
            "Rows are identified by their staging rowid (SELECT rowid, * FROM stg_...). "
            f"A batch in which 1 to {MAX_BAD_ROWS} rows break the contract is loaded with exactly "
            "those rows held back (load_batch hold_back=[rowids]). A batch with more bad rows "
            "is quarantined whole, citing every defect it contains (column and defect type)."
        )
    return out

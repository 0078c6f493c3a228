"""What the workspace-only attack reads off the data without the contract: the per-seed
names, and money as the stream itself types it (shared by the attacker and its widening)."""

from __future__ import annotations

from dataclasses import dataclass
from decimal import ROUND_HALF_EVEN, Decimal, InvalidOperation
from typing import Any


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

"""The generator's side of the contract, forward: commission, period, rate, bar and money.

The platform's ledger builder reuses these (it implements the same contract, with latent bugs
layered on top). The independent reconciler must not import this module.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from decimal import ROUND_HALF_EVEN, Decimal
from functools import lru_cache

from datagauntlet.envs.event_recon.world.records import Program, RateVersion
from datagauntlet.envs.event_recon.world.zones import zone


def round_half_even(numerator: int, denominator: int) -> int:
    """numerator / denominator rounded to the nearest integer, ties to even (R11)."""
    q, r = divmod(numerator, denominator)
    if 2 * r > denominator or (2 * r == denominator and q % 2 == 1):
        q += 1
    return q


def commission(basis_minor: int, rate_bps: int) -> int:
    sign = -1 if basis_minor < 0 else 1
    return sign * round_half_even(abs(basis_minor) * rate_bps, 10_000)


def basis_amount(basis: str, gross: int, tax: int) -> int:
    """R8: gross programs pay on gross, net programs on gross - tax."""
    return gross if basis == "gross" else gross - tax


def month_of(at: datetime) -> str:
    """`at.strftime("%Y-%m")` in `at`'s own zone, at a third of its cost ("%" formats are
    the fastest, f-strings half as fast); "%d" writes the year as glibc's "%Y" does."""
    return "%d-%02d" % (at.year, at.month)  # noqa: UP031


@lru_cache(maxsize=65536)
def period_of(at: datetime, zone_name: str) -> str:
    """R9: the calendar month of the instant in the program's payout zone."""
    return month_of(at.astimezone(zone(zone_name)))


def qualifies(gross: int, program: Program) -> bool:
    """R10: an order at or above the bar (on its latest gross) earns; below it earns nothing."""
    return gross >= program.min_order_minor


def rate_for(schedule: Iterable[RateVersion], program_id: str, tier: str, at: datetime) -> int:
    """R7: the schedule rate for (program, tier) in force at the order's occurred_at."""
    stamp = iso(at)
    best: RateVersion | None = None
    for version in schedule:
        if version.program_id != program_id or version.tier != tier:
            continue
        if version.effective_from <= stamp and (
            best is None or version.effective_from > best.effective_from
        ):
            best = version
    if best is None:
        raise ValueError(f"no rate for {program_id}/{tier} at {stamp}")
    return best.rate_bps


def money_from_wire(value: object) -> int:
    """W2: an integer is minor units; a string is a decimal in major units, half to even."""
    if isinstance(value, bool) or not isinstance(value, int | str):
        raise ValueError(f"money value of type {type(value).__name__}")
    if isinstance(value, int):
        return value
    return int((Decimal(value) * 100).to_integral_value(rounding=ROUND_HALF_EVEN))


@lru_cache(maxsize=65536)
def iso(at: datetime) -> str:
    """`at.strftime("%Y-%m-%dT%H:%M:%SZ")`, formatted as `month_of` is (for its cost)."""
    return "%d-%02d-%02dT%02d:%02d:%02dZ" % (  # noqa: UP031
        at.year, at.month, at.day, at.hour, at.minute, at.second,
    )  # fmt: skip

"""How a policy reads the contract's rules: one switch per rule.

The defaults are the contract as written. Each switch is the plausible misreading of one rule,
which is what a policy that skipped the rule does (`with_rules`, the graded policies) and what a
defect family's latent bug or derivation fault looks like (`diagnose.HYPOTHESES`).
"""

from __future__ import annotations

from dataclasses import dataclass, replace


@dataclass(frozen=True)
class Reading:
    """How the rules are read; the defaults are the contract as written."""

    retries_ignored: bool = True  # R1 (off: every delivery counts)
    dedup_by_seq: bool = True  # R2 (off: dedup on event_id only)
    apply_by_seq: bool = True  # R3 (off: delivery order)
    hold_orphans: bool = True  # R4 (off: an effect before its order is dropped)
    code_row: str = "in_force"  # R5 ("first": the code's earliest row, moves ignored)
    follow_merges: bool = True  # R6 (off: the code's own partner)
    tier_source: str = "partner"  # R7 ("code_cache": referral_codes.tier)
    rate_version: str = "in_force"  # R7 ("latest": the newest schedule row)
    basis: str = "program"  # R8 ("gross": always gross; "flip": the other basis)
    zone: str = "program"  # R9 ("UTC": UTC calendar months)
    bar: str = "latest"  # R10 ("none": every order earns; "never": none does)
    rounding: str = "half_even"  # R11 ("half_up")
    currency_check: bool = True  # R12 (off: a foreign-currency order earns)
    refund_rest: bool = True  # R13 (off: a refund without amounts refunds nothing)
    manual_stands: bool = True  # R14 (off: manual rows are not owed)
    absent_keeps: bool = True  # W1 (off: an absent money field is zero)
    money_by_type: bool = True  # W2 (off: money read by envelope version)


CONTRACT = Reading()
CONTRACT_RULES = (*(f"R{i}" for i in range(1, 15)), "W1", "W2")


# What not knowing each rule does to the reading.
MISREADINGS: dict[str, dict[str, object]] = {
    "R1": {"retries_ignored": False},
    "R2": {"dedup_by_seq": False},
    "R3": {"apply_by_seq": False},
    "R4": {"hold_orphans": False},
    "R5": {"code_row": "first"},
    "R6": {"follow_merges": False},
    "R7": {"tier_source": "code_cache", "rate_version": "latest"},
    "R8": {"basis": "gross"},
    "R9": {"zone": "UTC"},
    "R10": {"bar": "none"},
    "R11": {"rounding": "half_up"},
    "R12": {"currency_check": False},
    "R13": {"refund_rest": False},
    "R14": {"manual_stands": False},
    "W1": {"absent_keeps": False},
    "W2": {"money_by_type": False},
}


def with_rules(known: frozenset[str]) -> Reading:
    """The reading of a policy that knows only `known` of the rules."""
    reading = CONTRACT
    for rule, change in MISREADINGS.items():
        if rule not in known:
            reading = replace(reading, **change)  # type: ignore[arg-type]
    return reading

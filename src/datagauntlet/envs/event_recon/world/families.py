"""The defect families: each plans an injection on a clean draft, then applies it.

Planning picks the partner's orders and every random parameter up front, so applying one
injection alone, or all of a plan's together, edits exactly the same orders the same way.
Two injections of a plan never share an order (`claimed`).

A family is an object with `name`, `where`, `rule`, `latent_bug`, `contract_reasoning`,
`plan(draft, partner_id, severity, keyed, claimed) -> Injection | None` and
`apply(draft, injection)`; a `family_module` may supply more of them. `apply` may edit only
the orders its injection lists (a defect alone is built over those orders). Optional:
`bookkeeping_only` (a drawing hint), `summary` (its line in INTEGRATION.md),
`named(injection)` (partners it names, if not just the one), `activates(injection)` (the
latent bug, when it depends on the mode) and `breaks(injection)` (the rule, likewise). A
module's family also brings its reference step, the only way the env's reference can name it:
`misreadings`, `seen_on(world, order_id)` and `refines` (solver/diagnose.py).
"""

from __future__ import annotations

from datagauntlet.envs.event_recon.world.delivery_families import (
    DuplicateDelivery,
    OutOfOrderDelivery,
    PartialBackfill,
)
from datagauntlet.envs.event_recon.world.derivation_families import (
    GrossNetDivergence,
    QualificationBarMismatch,
    RetroactiveProgramChange,
    TimezoneBoundary,
)
from datagauntlet.envs.event_recon.world.family_kit import (
    Family,
    Injection,
    earning,
    new_event_id,
    partner_orders,
    pick,
    plain,
    program_of,
    single_row,
)
from datagauntlet.envs.event_recon.world.payload_families import (
    CurrencyOrRoundingDrift,
    MissingFieldCoercion,
    SchemaDrift,
)
from datagauntlet.envs.event_recon.world.reference_families import (
    IdentityFragmentation,
    TierMisconfiguration,
)

# What a family module builds on (datagauntlet_heldout's families import it from here).
__all__ = [
    "Family",
    "Injection",
    "activated_bug",
    "broken_rule",
    "builtin_families",
    "earning",
    "new_event_id",
    "partner_orders",
    "pick",
    "plain",
    "program_of",
    "single_row",
]


def activated_bug(family: Family, inj: Injection) -> str:
    """The latent builder bug this injection activates ("" for a derivation fault)."""
    activates = getattr(family, "activates", None)
    return str(activates(inj)) if activates else family.latent_bug


def broken_rule(family: Family, inj: Injection) -> str:
    """The contract rule this injection breaks (a family's `rule`, unless its mode decides)."""
    breaks = getattr(family, "breaks", None)
    return str(breaks(inj)) if breaks else family.rule


def builtin_families() -> dict[str, Family]:
    families: list[Family] = [
        DuplicateDelivery(),
        OutOfOrderDelivery(),
        MissingFieldCoercion(),
        SchemaDrift(),
        CurrencyOrRoundingDrift(),
        PartialBackfill(),
        IdentityFragmentation(),
        TierMisconfiguration(),
        GrossNetDivergence(),
        TimezoneBoundary(),
        RetroactiveProgramChange(),
        QualificationBarMismatch(),
    ]
    return {f.name: f for f in families}

"""The families planted in reference data: a merged partner that still owns a code (R6)
and a code that caches the wrong tier (R7)."""

from __future__ import annotations

from dataclasses import replace

from datagauntlet.core.seeding import Keyed
from datagauntlet.envs.event_recon.world.draft import Draft
from datagauntlet.envs.event_recon.world.family_kit import (
    FamilyBase,
    Injection,
    earning,
    partner_orders,
    pick,
    single_row,
)
from datagauntlet.envs.event_recon.world.names import PARTNER_TIERS
from datagauntlet.envs.event_recon.world.records import Partner


class IdentityFragmentation(FamilyBase):
    """A duplicate partner record merged into the real one still owns a code: R6 follows
    the merge, B7 trusts the code's cached partner. Names the survivor and the duplicate.

    Two modes. `same_tier`: the duplicate was opened at the survivor's tier (re-keying its
    rows repairs the survivor). `stale_tier`: it was opened at another tier and its code
    caches that one, so the survivor's rows must also be re-rated (R6 then R7: the
    contract is needed). The duplicate itself is always finished by a re-key, which is why
    no tier-1 or tier-2 task can carry this family (see docs/envs/event-recon.md).
    """

    def __init__(self) -> None:
        super().__init__("identity_fragmentation", "reference", "R6", "B7", False, True)

    def plan(
        self, draft: Draft, partner_id: str, severity: int, k: Keyed, claimed: set[str]
    ) -> Injection | None:
        pool = single_row(draft, earning(draft, partner_orders(draft, partner_id, claimed)))
        if not pool:
            return None
        code = k.choice("frag-code", 0, sorted({o.code for o in pool}))
        chosen = pick(k, "frag", [o for o in pool if o.code == code], severity + 1)
        assert chosen
        p = draft.partners[partner_id]
        tier = p.tier
        if k.chance("frag-stale", 0, 0.5):
            tier = k.choice("frag-tier", 0, [t for t in PARTNER_TIERS if t != p.tier])
        return Injection(
            self.name,
            partner_id,
            tuple(o.order_id for o in chosen),
            {
                "fragment": "prt_" + k.token("frag-id", 0, 8),
                "code": code + k.token("frag-code-sfx", 0, 2).upper(),
                "email": p.email.replace("@", "+shop@"),
                "tier": tier,
            },
        )

    def apply(self, draft: Draft, inj: Injection) -> None:
        p = draft.partners[inj.partner_id]
        frag = inj.params["fragment"]
        tier = inj.params.get("tier", p.tier)
        draft.partners[frag] = Partner(
            frag, p.name, tier, inj.params["email"], merged_into=p.partner_id
        )
        original = draft.order(inj.orders[0]).code
        row = draft.code_rows(original)[0]
        draft.codes.append(replace(row, code=inj.params["code"], partner_id=frag, tier=tier))
        for oid in inj.orders:
            draft.order(oid).code = inj.params["code"]

    def named(self, inj: Injection) -> tuple[str, ...]:
        return (inj.partner_id, inj.params["fragment"])


class TierMisconfiguration(FamilyBase):
    """A referral code caches the wrong tier: R7 rates by the partner's tier, B7 by the cache."""

    def __init__(self) -> None:
        super().__init__("tier_misconfiguration", "reference", "R7", "B7", False)

    def plan(
        self, draft: Draft, partner_id: str, severity: int, k: Keyed, claimed: set[str]
    ) -> Injection | None:
        mine = [c.code for c in draft.codes if c.partner_id == partner_id]
        for code in k.shuffled("tier-codes", sorted(set(mine))):
            orders = [o for o in draft.orders if o.code == code]
            touched = claimed | draft.reserved
            if any(o.order_id in touched for o in orders) or not earning(draft, orders):
                continue
            tier = draft.partners[partner_id].tier
            others = [t for t in PARTNER_TIERS if t != tier]
            wrong = k.choice("tier-wrong", severity, others)
            return Injection(
                self.name,
                partner_id,
                tuple(o.order_id for o in orders),
                {"code": code, "tier": wrong},
            )
        return None

    def apply(self, draft: Draft, inj: Injection) -> None:
        draft.codes = [
            replace(c, tier=inj.params["tier"]) if c.code == inj.params["code"] else c
            for c in draft.codes
        ]

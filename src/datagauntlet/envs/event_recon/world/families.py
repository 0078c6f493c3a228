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

from dataclasses import dataclass, field, replace
from datetime import timedelta
from typing import Any, Protocol

from datagauntlet.core.seeding import Keyed
from datagauntlet.envs.event_recon.grading import accounting as acc
from datagauntlet.envs.event_recon.grading.truth import order_lines
from datagauntlet.envs.event_recon.world.base_world import add_months, month_start
from datagauntlet.envs.event_recon.world.draft import Delivery, Draft, Effect, Extra, Order
from datagauntlet.envs.event_recon.world.names import CURRENCIES, PARTNER_TIERS
from datagauntlet.envs.event_recon.world.records import Partner, Program, ReferralCode
from datagauntlet.envs.event_recon.world.zones import zone


@dataclass(frozen=True)
class Injection:
    family: str
    partner_id: str
    orders: tuple[str, ...]  # orders this injection edits (claimed from the plan)
    params: dict[str, Any] = field(default_factory=dict)


class Family(Protocol):
    name: str
    where: str  # "wire", "reference" or "derivation"
    rule: str  # the contract rule it breaks
    latent_bug: str  # the builder bug it activates ("" for a derivation fault)
    contract_reasoning: bool  # detection needs idempotency, ordering or wire typing

    def plan(
        self, draft: Draft, partner_id: str, severity: int, k: Keyed, claimed: set[str]
    ) -> Injection | None: ...

    def apply(self, draft: Draft, inj: Injection) -> None: ...


# --- helpers -------------------------------------------------------------------------


def partner_orders(draft: Draft, partner_id: str, claimed: set[str]) -> list[Order]:
    """Unclaimed orders attributed directly to the partner, outside any backfill batch."""
    out = []
    for o in draft.orders:
        if o.order_id in claimed or o.order_id in draft.reserved:
            continue
        row = draft.code_row_at(o.code, acc.iso(o.at))
        if row is None or row.partner_id != partner_id:
            continue
        if any(draft.wire[e].backfill for e in o.events()):
            continue
        out.append(o)
    return out


def earning(draft: Draft, orders: list[Order]) -> list[Order]:
    return [o for o in orders if any(order_lines(draft, o).values())]


def plain(orders: list[Order]) -> list[Order]:
    return [o for o in orders if not o.effects]


def single_row(draft: Draft, orders: list[Order]) -> list[Order]:
    return [o for o in orders if len(draft.code_rows(o.code)) == 1]


def pick(k: Keyed, label: str, orders: list[Order], n: int) -> list[Order] | None:
    if not orders:
        return None
    return k.sample(label, orders, min(n, len(orders)))


def program_of(draft: Draft, order: Order) -> tuple[Program, ReferralCode]:
    row = draft.code_row_at(order.code, acc.iso(order.at))
    assert row is not None
    return draft.programs[row.program_id], row


def new_event_id(k: Keyed, label: str, i: int | str) -> str:
    return "evt_" + k.token(label, i, 16)


@dataclass
class _Base:
    name: str = ""
    where: str = ""
    rule: str = ""
    latent_bug: str = ""
    contract_reasoning: bool = False
    # "Every mode can be finished by bookkeeping alone": a hint for drawing plans only
    # (invariant 7 itself judges repairability on the built task, never by this flag).
    bookkeeping_only: bool = False


# --- on the wire ---------------------------------------------------------------------


class DuplicateDelivery(_Base):
    """The brand re-emits an event under a new event_id; R2 makes it a no-op, B1 books it.

    Two modes. `repeat`: an order's creation or first refund re-emitted (dropping the
    re-emission's rows repairs it). `restart`: the creation re-emitted between two
    amendments, so the platform restarts the order and books the later amendment against
    the restarted state (dropping the re-emission leaves the later delta wrong: the
    contract is needed). Tiers 1-2 draw `restart` only, where invariant 7 admits no
    contract-free partner.
    """

    def __init__(self) -> None:
        super().__init__("duplicate_delivery", "wire", "R2", "B1", True)

    def plan(
        self, draft: Draft, partner_id: str, severity: int, k: Keyed, claimed: set[str]
    ) -> Injection | None:
        pool = earning(draft, partner_orders(draft, partner_id, claimed))
        restart = draft.tier <= 2 or k.chance("dup-mode", 0, 0.5)
        if restart:
            return self._plan_restart(draft, partner_id, plain(pool), k)
        chosen = pick(k, "dup", pool, min(severity, 2))
        if not chosen:
            return None
        sources = []
        for i, o in enumerate(chosen):
            refunds = [e for e in o.effects if e.kind == "order.refunded"]
            src = refunds[0].event_id if refunds and k.chance("dup-refund", i, 0.5) else o.event_id
            delay = k.randint("dup-delay", i, 600, 3 * 86400)
            sources.append((src, new_event_id(k, "dup-id", i), delay))
        return Injection(
            self.name,
            partner_id,
            tuple(o.order_id for o in chosen),
            {"mode": "repeat", "emissions": sources},
        )

    def _plan_restart(
        self, draft: Draft, partner_id: str, pool: list[Order], k: Keyed
    ) -> Injection | None:
        pool = [o for o in pool if o.at < draft.end - timedelta(days=3)]
        chosen = pick(k, "dup-restart", pool, 1)
        if not chosen:
            return None
        o = chosen[0]
        program, _ = program_of(draft, o)
        g2 = o.gross * k.randint("dup-f2", 0, 115, 160) // 100
        g3 = max(program.min_order_minor, o.gross * k.randint("dup-f3", 0, 70, 95) // 100)
        spec = {
            "order": o.order_id,
            "ids": (new_event_id(k, "dup-a2", 0), new_event_id(k, "dup-a3", 0)),
            "re_id": new_event_id(k, "dup-id", 0),
            "gross": (g2, g3),
            "tax": (g2 * o.tax // max(o.gross, 1), g3 * o.tax // max(o.gross, 1)),
            "minutes": (k.randint("dup-m2", 0, 60, 900), k.randint("dup-m3", 0, 600, 2400)),
        }
        return Injection(self.name, partner_id, (o.order_id,), {"mode": "restart", "spec": spec})

    def apply(self, draft: Draft, inj: Injection) -> None:
        if inj.params.get("mode") == "restart":
            spec = inj.params["spec"]
            o = draft.order(spec["order"])
            at2 = o.at + timedelta(minutes=spec["minutes"][0])
            at3 = at2 + timedelta(minutes=spec["minutes"][1])
            id2, id3 = spec["ids"]
            o.effects += [
                Effect(id2, "order.updated", 2, at2, spec["gross"][0], spec["tax"][0]),
                Effect(id3, "order.updated", 3, at3, spec["gross"][1], spec["tax"][1]),
            ]
            draft.wire[id2] = Delivery(at2 + timedelta(seconds=20))
            draft.wire[id3] = Delivery(at3 + timedelta(seconds=20))
            middle = at2 + (at3 - at2) / 2
            draft.extras.append(Extra(o.event_id, spec["re_id"], 1, middle))
            return
        for src, new_id, delay in inj.params["emissions"]:
            at = draft.wire[src].received_at + timedelta(seconds=delay)
            draft.extras.append(Extra(src, new_id, 1, at))


class OutOfOrderDelivery(_Base):
    """Two amendments arrive in reverse seq order; R3 keeps the highest seq, B2 the last one.

    Two modes. `stale`: the late amendment overwrites the later one (dropping its rows
    repairs it). `under_bar`: the late amendment is under the bar and a refund follows it,
    so the platform books no reversal for an order it believes does not qualify (dropping
    the stale rows leaves the reversal missing: the contract is needed). Tiers 1-2 draw
    `under_bar` only.
    """

    def __init__(self) -> None:
        super().__init__("out_of_order_delivery", "wire", "R3", "B2", True)

    def plan(
        self, draft: Draft, partner_id: str, severity: int, k: Keyed, claimed: set[str]
    ) -> Injection | None:
        pool = plain(earning(draft, partner_orders(draft, partner_id, claimed)))
        under_bar = draft.tier <= 2 or k.chance("ooo-mode", 0, 0.5)
        if under_bar:
            pool = [o for o in pool if o.at < draft.end - timedelta(days=4)]
        chosen = pick(k, "ooo", pool, 1 if under_bar else 1 + (severity >= 3))
        if not chosen:
            return None
        specs = []
        for i, o in enumerate(chosen):
            program, _ = program_of(draft, o)
            bar = program.min_order_minor
            f2 = k.randint("ooo-f2", i, 105, 140)
            f3 = k.randint("ooo-f3", i, 75, 97)
            g2, g3 = o.gross * f2 // 100, max(bar, o.gross * f3 // 100)
            if under_bar:
                g2 = max(100, bar - k.randint("ooo-under", i, 1, 600))
            spec = {
                "order": o.order_id,
                "ids": (new_event_id(k, "ooo-id2", i), new_event_id(k, "ooo-id3", i)),
                "gross": (g2, g3),
                "tax": (g2 * o.tax // max(o.gross, 1), g3 * o.tax // max(o.gross, 1)),
                "minutes": (k.randint("ooo-m2", i, 40, 600), k.randint("ooo-m3", i, 40, 600)),
                "lag": k.randint("ooo-lag", i, 900, 6 * 3600),
            }
            if under_bar:
                spec["refund"] = {
                    "id": new_event_id(k, "ooo-refund", i),
                    "share": k.randint("ooo-share", i, 15, 60),
                    "hours": k.randint("ooo-hours", i, 8, 48),
                }
            specs.append(spec)
        mode = "under_bar" if under_bar else "stale"
        return Injection(
            self.name,
            partner_id,
            tuple(o.order_id for o in chosen),
            {"mode": mode, "specs": specs},
        )

    def apply(self, draft: Draft, inj: Injection) -> None:
        for spec in inj.params["specs"]:
            o = draft.order(spec["order"])
            at2 = o.at + timedelta(minutes=spec["minutes"][0])
            at3 = at2 + timedelta(minutes=spec["minutes"][1])
            id2, id3 = spec["ids"]
            o.effects += [
                Effect(id2, "order.updated", 2, at2, spec["gross"][0], spec["tax"][0]),
                Effect(id3, "order.updated", 3, at3, spec["gross"][1], spec["tax"][1]),
            ]
            draft.wire[id3] = Delivery(at3 + timedelta(seconds=30))
            late = at3 + timedelta(seconds=30 + spec["lag"])
            draft.wire[id2] = Delivery(late)
            refund = spec.get("refund")
            if refund:  # after the late amendment, on the latest (seq 3) amounts
                g3, t3 = spec["gross"][1], spec["tax"][1]
                at = late + timedelta(hours=refund["hours"])
                o.effects.append(
                    Effect(
                        refund["id"],
                        "order.refunded",
                        4,
                        at,
                        g3 * refund["share"] // 100,
                        t3 * refund["share"] // 100,
                    )
                )
                draft.wire[refund["id"]] = Delivery(at + timedelta(seconds=25))


class MissingFieldCoercion(_Base):
    """An amendment without the gross field, or a refund without an amount (W1 / R13).
    B4 reads absent as zero."""

    def __init__(self) -> None:
        super().__init__("missing_field_coercion", "wire", "W1", "B4", True)

    def plan(
        self, draft: Draft, partner_id: str, severity: int, k: Keyed, claimed: set[str]
    ) -> Injection | None:
        pool = plain(earning(draft, partner_orders(draft, partner_id, claimed)))
        if draft.tier <= 2:
            # An amendment without a gross on a gross program is repaired by dropping it, and
            # a bare refund by reversing what was booked: tiers 1-2 draw the net-basis
            # amendment only, the mode that needs the contract.
            pool = [o for o in pool if program_of(draft, o)[0].basis == "net"]
        chosen = pick(k, "mfc", pool, min(severity, 2))
        if not chosen:
            return None
        specs = []
        for i, o in enumerate(chosen):
            # A bare refund is nearly always finishable by reversing what was booked, so it
            # is the rarer mode (invariant 7 would reject most plans drawing it).
            refund = draft.tier >= 3 and k.chance("mfc-mode", i, 0.25)
            mode = "refund" if refund else "amendment"
            specs.append(
                {
                    "order": o.order_id,
                    "mode": mode,
                    "id": new_event_id(k, "mfc-id", i),
                    "tax": o.tax * k.randint("mfc-tax", i, 60, 140) // 100 + 1,
                    "minutes": k.randint("mfc-min", i, 60, 20 * 1440),
                }
            )
        return Injection(self.name, partner_id, tuple(o.order_id for o in chosen), {"specs": specs})

    def apply(self, draft: Draft, inj: Injection) -> None:
        for spec in inj.params["specs"]:
            o = draft.order(spec["order"])
            at = min(o.at + timedelta(minutes=spec["minutes"]), draft.end - timedelta(hours=3))
            if spec["mode"] == "amendment":
                o.effects.append(
                    Effect(spec["id"], "order.updated", 2, at, None, min(spec["tax"], o.gross))
                )
            else:
                o.effects.append(Effect(spec["id"], "order.refunded", 2, at, None, None))
            draft.wire[spec["id"]] = Delivery(at + timedelta(seconds=45))


class SchemaDrift(_Base):
    """Money typed against the envelope version: W2 reads by JSON type, B5 by version."""

    def __init__(self) -> None:
        super().__init__("schema_drift", "wire", "W2", "B5", True)

    def plan(
        self, draft: Draft, partner_id: str, severity: int, k: Keyed, claimed: set[str]
    ) -> Injection | None:
        chosen = pick(
            k, "drift", earning(draft, partner_orders(draft, partner_id, claimed)), min(severity, 3)
        )
        if not chosen:
            return None
        return Injection(self.name, partner_id, tuple(o.order_id for o in chosen), {})

    def apply(self, draft: Draft, inj: Injection) -> None:
        for oid in inj.orders:
            o = draft.order(oid)
            d = draft.wire[o.event_id]
            d.money_style = "string" if d.received_at < draft.cutover else "integer"


class CurrencyOrRoundingDrift(_Base):
    """Currency mode: an order billed in a currency the program does not pay in (R12, B6).
    Rounding mode: a money string with a third decimal (W2 half-even, B5 truncates)."""

    def __init__(self) -> None:
        super().__init__("currency_or_rounding_drift", "wire", "R12", "B6", False)

    def plan(
        self, draft: Draft, partner_id: str, severity: int, k: Keyed, claimed: set[str]
    ) -> Injection | None:
        pool = plain(earning(draft, partner_orders(draft, partner_id, claimed)))
        # Dropping a foreign-currency order needs no contract: tiers 1-2 draw rounding only.
        mode = "rounding" if draft.tier <= 2 else k.choice("cur-mode", 0, ("currency", "rounding"))
        if mode == "rounding":
            pool = [o for o in pool if draft.wire[o.event_id].received_at >= draft.cutover]
        chosen = pick(k, "cur", pool, min(severity, 2))
        if not chosen:
            return None
        specs = []
        for i, o in enumerate(chosen):
            program, row = program_of(draft, o)
            other = [c for c in CURRENCIES if c != program.currency]
            gross = o.gross
            if mode == "rounding":  # nudge the order so one minor unit moves its commission
                rate = acc.rate_for(
                    draft.schedule,
                    program.program_id,
                    draft.partners[draft.survivor(row.partner_id)].tier,
                    o.at,
                )
                for g in range(o.gross, o.gross + 400):
                    if g - 1 < program.min_order_minor:
                        continue
                    a = acc.commission(acc.basis_amount(program.basis, g, o.tax), rate)
                    b = acc.commission(acc.basis_amount(program.basis, g - 1, o.tax), rate)
                    if a != b:
                        gross = g
                        break
            specs.append(
                {
                    "order": o.order_id,
                    "currency": k.choice("cur-other", i, other),
                    "gross": gross,
                    "digit": k.randint("cur-digit", i, 6, 9),
                }
            )
        return Injection(
            self.name, partner_id, tuple(o.order_id for o in chosen), {"mode": mode, "specs": specs}
        )

    def activates(self, inj: Injection) -> str:
        return "B6" if inj.params["mode"] == "currency" else "B5"

    def breaks(self, inj: Injection) -> str:
        return "R12" if inj.params["mode"] == "currency" else "W2"

    def apply(self, draft: Draft, inj: Injection) -> None:
        for spec in inj.params["specs"]:
            o = draft.order(spec["order"])
            if inj.params["mode"] == "currency":
                o.currency = spec["currency"]
            else:
                o.gross = spec["gross"]
                draft.wire[o.event_id].money_style = f"sub_minor:{spec['digit']}"


class PartialBackfill(_Base):
    """A backfill batch whose refunds arrived before the orders they refund: R4 holds them,
    B3 dead-letters them."""

    def __init__(self) -> None:
        super().__init__("partial_backfill", "wire", "R4", "B3", True)

    def plan(
        self, draft: Draft, partner_id: str, severity: int, k: Keyed, claimed: set[str]
    ) -> Injection | None:
        span = int((draft.end - draft.start).total_seconds())
        at = draft.start + timedelta(
            seconds=k.randint("pbf-at", 0, int(span * 0.75), int(span * 0.9))
        )
        pool = plain(earning(draft, partner_orders(draft, partner_id, claimed)))
        pool = [o for o in pool if o.at < at - timedelta(days=2)]  # refunded before the batch
        chosen = pick(k, "pbf", pool, min(severity, 2))
        if not chosen:
            return None
        specs = [
            {
                "order": o.order_id,
                "id": new_event_id(k, "pbf-id", i),
                "share": k.randint("pbf-share", i, 20, 100),
                # the refunded tax is not the gross's share (a part taxed at another rate)
                "tax_share": k.randint("pbf-tax-share", i, 0, 100),
                "days": k.randint("pbf-days", i, 1, 15),
            }
            for i, o in enumerate(chosen)
        ]
        return Injection(
            self.name,
            partner_id,
            tuple(o.order_id for o in chosen),
            {
                "specs": specs,
                "batch": "bf_" + k.token("pbf-batch", 0, 8),
                "at": acc.iso(at),
                "gap": k.randint("pbf-gap", 0, 900, 2 * 86400),
            },
        )

    def apply(self, draft: Draft, inj: Injection) -> None:
        from datagauntlet.envs.event_recon.world.builder import parse_time

        first = parse_time(inj.params["at"])
        second = first + timedelta(seconds=inj.params["gap"])
        for i, spec in enumerate(inj.params["specs"]):
            o = draft.order(spec["order"])
            at = min(o.at + timedelta(days=spec["days"]), first - timedelta(hours=1))
            o.effects.append(
                Effect(
                    spec["id"],
                    "order.refunded",
                    2,
                    at,
                    o.gross * spec["share"] // 100,
                    min(o.tax * spec["tax_share"] // 100, o.gross * spec["share"] // 100),
                )
            )
            batch = inj.params["batch"]
            draft.wire[spec["id"]] = Delivery(first + timedelta(seconds=10 * i), True, batch)
            draft.wire[o.event_id] = Delivery(second + timedelta(seconds=10 * i), True, batch)


# --- in reference data ---------------------------------------------------------------


class IdentityFragmentation(_Base):
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


class TierMisconfiguration(_Base):
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


# --- in the derivation ---------------------------------------------------------------


class _Fault(_Base):
    fault: dict[str, Any]

    def candidates(self, draft: Draft, orders: list[Order]) -> list[Order]:
        return orders

    def plan(
        self, draft: Draft, partner_id: str, severity: int, k: Keyed, claimed: set[str]
    ) -> Injection | None:
        pool = self.candidates(draft, earning(draft, partner_orders(draft, partner_id, claimed)))
        chosen = pick(k, self.name, pool, severity)
        if not chosen:
            return None
        return Injection(
            self.name, partner_id, tuple(o.order_id for o in chosen), self.params(draft, chosen, k)
        )

    def params(self, draft: Draft, chosen: list[Order], k: Keyed) -> dict[str, Any]:
        return {}

    def apply(self, draft: Draft, inj: Injection) -> None:
        for oid in inj.orders:
            draft.faults[oid] = {**draft.faults.get(oid, {}), **self.fault_for(inj, oid)}

    def fault_for(self, inj: Injection, order_id: str) -> dict[str, Any]:
        return dict(self.fault)


class GrossNetDivergence(_Fault):
    """Commission computed on the other basis (R8)."""

    def __init__(self) -> None:
        super().__init__("gross_net_divergence", "derivation", "R8", "", False)
        self.fault = {"basis": "flip"}

    def candidates(self, draft: Draft, orders: list[Order]) -> list[Order]:
        return [
            o
            for o in orders
            if o.tax > 0 and all(e.tax != 0 for e in o.effects if e.kind == "order.updated")
        ]


class TimezoneBoundary(_Fault):
    """An order at a month boundary bucketed by the UTC month, not the program zone's (R9)."""

    def __init__(self) -> None:
        super().__init__("timezone_boundary", "derivation", "R9", "", False, True)
        self.fault = {"zone": "UTC"}

    def candidates(self, draft: Draft, orders: list[Order]) -> list[Order]:
        return plain(single_row(draft, orders))

    def params(self, draft: Draft, chosen: list[Order], k: Keyed) -> dict[str, Any]:
        year, month = int(draft.months[0][:4]), int(draft.months[0][5:])
        moves = {}
        for i, o in enumerate(chosen):
            program, _ = program_of(draft, o)
            edge = month_start(*add_months(year, month, 1 + k.randint("tz-edge", i, 0, 1)))
            offset = zone(program.payout_zone).utcoffset(edge.replace(tzinfo=None)) or timedelta()
            minutes = int(offset.total_seconds() // 60)
            step = k.randint("tz-step", i, 1, max(1, abs(minutes) - 1))
            moves[o.order_id] = acc.iso(
                edge - timedelta(minutes=step) if minutes > 0 else edge + timedelta(minutes=step)
            )
        return {"at": moves}

    def apply(self, draft: Draft, inj: Injection) -> None:
        from datagauntlet.envs.event_recon.world.builder import parse_time

        for oid in inj.orders:
            o = draft.order(oid)
            o.at = parse_time(inj.params["at"][oid])
            old = draft.wire[o.event_id].received_at
            draft.wire[o.event_id] = Delivery(o.at + timedelta(seconds=40))
            shift = draft.wire[o.event_id].received_at - old
            draft.extras = [  # its retries move with it
                replace(x, received_at=x.received_at + shift) if x.source_event == o.event_id else x
                for x in draft.extras
            ]
        super().apply(draft, inj)


class RetroactiveProgramChange(_Fault):
    """A mid-window rate change applied to orders placed before it (R7: the rate in force)."""

    def __init__(self) -> None:
        super().__init__("retroactive_program_change", "derivation", "R7", "", False)
        self.fault = {"rate": "latest"}

    def candidates(self, draft: Draft, orders: list[Order]) -> list[Order]:
        out = []
        for o in orders:
            program, _ = program_of(draft, o)
            stamp = acc.iso(o.at)
            if any(
                v.program_id == program.program_id and v.effective_from > stamp
                for v in draft.schedule
            ):
                out.append(o)
        return out


class QualificationBarMismatch(_Fault):
    """The shipped ledger applied a different bar than the program's (R10)."""

    def __init__(self) -> None:
        super().__init__("qualification_bar_mismatch", "derivation", "R10", "", False)

    def plan(
        self, draft: Draft, partner_id: str, severity: int, k: Keyed, claimed: set[str]
    ) -> Injection | None:
        orders = partner_orders(draft, partner_id, claimed)
        over = [o for o in plain(earning(draft, orders))]
        under = []
        for o in plain(orders):
            program, _ = program_of(draft, o)
            if o.gross < program.min_order_minor and o.currency == program.currency:
                under.append(o)
        # Dropping an under-bar order's rows needs no contract: the rarer mode.
        mode = "lowered" if under and k.chance("bar-mode", 0, 0.25) else "raised"
        chosen = pick(k, "bar", under if mode == "lowered" else over, min(severity, 2))
        if not chosen:
            return None
        bars = {}
        for i, o in enumerate(chosen):
            if mode == "raised":
                bars[o.order_id] = o.gross + k.randint("bar-up", i, 1, 800)
            else:
                bars[o.order_id] = max(1, o.gross - k.randint("bar-down", i, 0, 300))
        return Injection(
            self.name, partner_id, tuple(o.order_id for o in chosen), {"bars": bars, "mode": mode}
        )

    def fault_for(self, inj: Injection, order_id: str) -> dict[str, Any]:
        return {"bar": inj.params["bars"][order_id]}


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

"""The clean world of a seed: roster, programs, schedule, codes, orders and their delivery,
with every distractor the contract allows. No defect is planted here.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from datagauntlet.core.seeding import Keyed
from datagauntlet.envs.event_recon.grading.accounting import iso
from datagauntlet.envs.event_recon.world import names
from datagauntlet.envs.event_recon.world.draft import Delivery, Draft, Effect, Extra, Order
from datagauntlet.envs.event_recon.world.records import (
    LedgerEntry,
    Partner,
    Program,
    RateVersion,
    ReferralCode,
    Schema,
)
from datagauntlet.envs.event_recon.world.zones import PAYOUT_ZONES

# Roster bounds at scale 1.0, the original's size: about 3,055 partner projections over the
# 120 public tasks, so a tier-4 delivery stream needs several `read_file` pages.
PARTNERS_BY_TIER = {1: (18, 23), 2: (20, 25), 3: (23, 30), 4: (27, 35)}
DEFAULT_SCALE = 1.0
SCALE_RANGE = (0.25, 4.0)
ORDERS_PER_PARTNER = {1: (4, 7), 2: (4, 7), 3: (5, 8), 4: (5, 9)}
RETRY_RATE = {1: 0.06, 2: 0.07, 3: 0.08, 4: 0.12}
DENSITY = {1: 1, 2: 1, 3: 2, 4: 3}  # distractor multiplier


def add_months(year: int, month: int, n: int) -> tuple[int, int]:
    total = year * 12 + (month - 1) + n
    return total // 12, total % 12 + 1


def month_start(year: int, month: int) -> datetime:
    return datetime(year, month, 1, tzinfo=UTC)


def schema_for(k: Keyed) -> Schema:
    return Schema(
        order_field=k.choice("f-order", 0, names.ORDER_FIELDS),
        code_field=k.choice("f-code", 0, names.CODE_FIELDS),
        gross_field=k.choice("f-gross", 0, names.GROSS_FIELDS),
        tax_field=k.choice("f-tax", 0, names.TAX_FIELDS),
        time_field=k.choice("f-time", 0, names.TIME_FIELDS),
        amount_column=k.choice("c-amount", 0, names.AMOUNT_COLUMNS),
        period_column=k.choice("c-period", 0, names.PERIOD_COLUMNS),
    )


def _distinct_rates(k: Keyed, label: str, n: int, taken: set[int]) -> list[int]:
    out: list[int] = []
    i = 0
    while len(out) < n:
        rate = 25 * k.randint(label, i, 12, 60)  # 3.00% .. 15.00% in steps of 0.25%
        i += 1
        if all(abs(rate - t) >= 50 for t in taken | set(out)):
            out.append(rate)
    return sorted(out)


def roster_bounds(tier: int, scale: float) -> tuple[int, int]:
    """The roster's size range for a tier at `scale` (1.0: the original's size)."""
    if not SCALE_RANGE[0] <= scale <= SCALE_RANGE[1]:
        raise ValueError(f"scale must be in {SCALE_RANGE[0]:g}..{SCALE_RANGE[1]:g}, got {scale:g}")
    lo, hi = PARTNERS_BY_TIER[tier]
    lo = max(3, round(lo * scale))
    return lo, max(lo, round(hi * scale))


def base_draft(seed: int, tier: int, attempt: int = 0, scale: float = DEFAULT_SCALE) -> Draft:
    lo, hi = roster_bounds(tier, scale)
    # Another scale is another world of the same seed: its draws are keyed apart.
    suffix = "" if scale == DEFAULT_SCALE else f"/x{scale:g}"
    k = Keyed(f"event-recon/{seed}/{tier}/{attempt}{suffix}")
    density = DENSITY[tier]
    # Distractors grow with the roster, so a bigger world is not a thinner one.
    spread = max(1, round(density * scale))
    schema = schema_for(k)
    currency = k.choice("currency", 0, names.CURRENCIES)
    brand = f"{k.choice('brand', 0, names.BRAND_HEADS)} {k.choice('brand', 1, names.BRAND_TAILS)}"
    year, month = k.randint("year", 0, 2025, 2027), k.randint("month", 0, 1, 10)
    months = tuple(f"{y:04d}-{m:02d}" for y, m in (add_months(year, month, i) for i in range(3)))
    start = month_start(year, month)
    end = month_start(*add_months(year, month, 3))
    span = int((end - start).total_seconds())

    def instant(label: str, i: int, lo: float, hi: float) -> datetime:
        return start + timedelta(seconds=k.randint(label, i, int(span * lo), int(span * hi)))

    cutover = instant("cutover", 0, 0.3, 0.7)

    # Programs and the authoritative schedule.
    n_programs = k.randint("n-programs", 0, 2, 3)
    zones = k.sample("zones", PAYOUT_ZONES, n_programs)
    program_names = k.sample("program-names", names.PROGRAM_NAMES, n_programs)
    programs: dict[str, Program] = {}
    schedule: list[RateVersion] = []
    valid_from = iso(start - timedelta(days=k.randint("valid-from", 0, 30, 200)))
    for i in range(n_programs):
        pid = "prg_" + k.token("program", i, 6)
        programs[pid] = Program(
            program_id=pid,
            name=program_names[i],
            basis=k.choice("basis", i, ("gross", "net")),
            min_order_minor=100 * k.randint("bar", i, 15, 45),
            payout_zone=zones[i],
            currency=currency,
        )
        rates = _distinct_rates(k, f"rates-{i}", 3, set())
        changes = i == 0 or k.chance("rate-change", i, 0.5)
        later = _distinct_rates(k, f"rates-later-{i}", 3, set(rates)) if changes else []
        change_at = iso(instant("rate-change-at", i, 0.3, 0.7))
        for t, tier_name in enumerate(names.PARTNER_TIERS):
            schedule.append(RateVersion(pid, tier_name, rates[t], valid_from))
            if later:
                schedule.append(RateVersion(pid, tier_name, later[t], change_at))
    program_ids = list(programs)

    # Roster and referral codes.
    partners: dict[str, Partner] = {}
    codes: list[ReferralCode] = []
    partner_codes: dict[str, list[str]] = {}
    for i in range(k.randint("n-partners", 0, lo, hi)):
        pid = "prt_" + k.token("partner", i, 8)
        first = k.choice("first", i, names.FIRST)
        last = k.choice("last", i, names.LAST)
        tier_name = k.choice("tier", i, names.PARTNER_TIERS)
        email = f"{first.lower()}.{last.lower()}{k.randint('email', i, 1, 99)}@example.com"
        partners[pid] = Partner(pid, f"{first} {last}", tier_name, email)
        partner_codes[pid] = []
        for j in range(k.randint("n-codes", i, 1, 2 if tier <= 2 else 3)):
            code = f"{first.upper()}{k.token('code', f'{i}/{j}', 5).upper()}"
            program = k.choice("code-program", f"{i}/{j}", program_ids)
            codes.append(ReferralCode(code, pid, program, tier_name, valid_from))
            partner_codes[pid].append(code)
    partner_ids = list(partners)

    # A code that lawfully moves to another program mid-window (a distractor).
    moving = 0
    for n in range(64 * spread if n_programs > 1 else 0):
        if moving == spread:
            break
        row = k.choice("moving-code", n, codes)
        if len(_rows(codes, row.code)) > 1:
            continue
        moving += 1
        other = [p for p in program_ids if p != row.program_id]
        moved_at = iso(instant("moving-at", n, 0.35, 0.65))
        codes.append(
            ReferralCode(
                row.code, row.partner_id, k.choice("moving-to", n, other), row.tier, moved_at
            )
        )

    orders: list[Order] = []
    wire: dict[str, Delivery] = {}
    extras: list[Extra] = []
    olo, ohi = ORDERS_PER_PARTNER[tier]
    ids = k.stream("ids")

    def event_id() -> str:
        return "evt_" + ids.token(16)

    def new_order(pid_code: str, at: datetime, gross: int, customer: str, idx: str) -> Order:
        tax = gross * k.randint("tax-rate", idx, 0, 25) // 100
        return Order(
            order_id="ord_" + ids.token(10),
            code=pid_code,
            customer=customer,
            currency=currency,
            at=at,
            gross=gross,
            tax=tax,
            event_id=event_id(),
        )

    for i, pid in enumerate(partner_ids):
        for j in range(k.randint("n-orders", i, olo, ohi)):
            idx = f"{i}/{j}"
            code = k.choice("order-code", idx, partner_codes[pid])
            at = instant("order-at", idx, 0.02, 0.96)
            if k.chance("under-bar", idx, 0.12 * density):  # legitimately under the bar
                gross = k.randint("gross-low", idx, 400, 1400)
            else:
                gross = k.randint("gross", idx, 1500, 32000)
            order = new_order(code, at, gross, "cus_" + k.token("customer", idx, 8), idx)
            orders.append(order)

    # Several distinct same-day orders from one buyer.
    sameday: list[Order] = []
    for n in range(spread):
        pid = k.choice("sameday-partner", n, partner_ids)
        day = instant("sameday-at", n, 0.05, 0.9)
        base = day.replace(hour=2, minute=0, second=0)  # all of them on one UTC day
        customer = "cus_" + k.token("sameday-customer", n, 8)
        gross = k.randint("sameday-gross", n, 2000, 12000)
        for m in range(k.randint("sameday-count", n, 2, 3)):
            at = base + timedelta(minutes=k.randint("sameday-gap", f"{n}/{m}", 5, 120) * (m + 1))
            sameday.append(new_order(partner_codes[pid][0], at, gross, customer, f"sd{n}/{m}"))
    orders.extend(sameday)

    # Orders at a month boundary (bucketed correctly: zone distractors).
    for n in range(2 * spread):
        pid = k.choice("edge-partner", n, partner_ids)
        edge = month_start(*add_months(year, month, 1 + n % 2))
        at = edge + timedelta(minutes=k.randint("edge-offset", n, -600, 600))
        code = k.choice("edge-code", n, partner_codes[pid])
        gross = k.randint("edge-gross", n, 3000, 20000)
        orders.append(new_order(code, at, gross, "cus_" + k.token("edge-customer", n, 8), f"e{n}"))

    # An order carrying a code on no referral row: the platform dead-letters it, correctly.
    for n in range(1 + spread // 2):
        at = instant("orphan-at", n, 0.05, 0.9)
        code = "ZZ" + k.token("orphan-code", n, 6).upper()
        orders.append(
            new_order(
                code,
                at,
                k.randint("orphan-gross", n, 2000, 9000),
                "cus_" + k.token("orphan-customer", n, 8),
                f"o{n}",
            )
        )

    orders.sort(key=lambda o: (o.at, o.order_id))
    known = [n for n, o in enumerate(orders) if not o.code.startswith("ZZ")]
    forced_instalments = k.choice("forced-instalments", 0, known)
    forced_retry = k.choice("forced-retry", 0, known)

    # Amendments (always carrying both money fields) and refunds, instalments included.
    for n, order in enumerate(orders):
        seq = 1
        at = order.at
        if k.chance("amend", n, 0.18):
            for m in range(k.randint("amend-count", n, 1, 2)):
                seq += 1
                factor = k.randint("amend-factor", f"{n}/{m}", 70, 130)
                gross = max(100, order.gross * factor // 100)
                at += timedelta(minutes=k.randint("amend-at", f"{n}/{m}", 30, 3000))
                order.effects.append(
                    Effect(
                        event_id(),
                        "order.updated",
                        seq,
                        at,
                        gross,
                        gross * k.randint("amend-tax", f"{n}/{m}", 0, 25) // 100,
                    )
                )
        final_gross = order.effects[-1].gross if order.effects else order.gross
        final_tax = order.effects[-1].tax if order.effects else order.tax
        assert final_gross is not None and final_tax is not None
        roll = k.unit("refund", n)
        parts = 0
        if roll < 0.06:
            parts = -1  # full refund, amount stated
        elif roll < 0.16:
            parts = 1
        elif roll < 0.16 + 0.05 * density:
            parts = k.randint("instalments", n, 2, 3)
        if n == forced_instalments:  # every task has at least one refund in instalments
            parts = 2
        last = order.effects[-1].at if order.effects else order.at
        if parts == -1:
            at = min(
                last + timedelta(days=k.randint("refund-days", n, 1, 25)), end - timedelta(hours=6)
            )
            seq += 1
            order.effects.append(
                Effect(event_id(), "order.refunded", seq, at, final_gross, final_tax)
            )
        at = last
        for m in range(max(parts, 0)):
            share = k.randint("refund-share", f"{n}/{m}", 10, 30)
            at = min(
                at + timedelta(days=k.randint("refund-days", f"{n}/{m}", 1, 12)),
                end - timedelta(hours=6 - m),
            )
            seq += 1
            order.effects.append(
                Effect(
                    event_id(),
                    "order.refunded",
                    seq,
                    at,
                    final_gross * share // 100,
                    final_tax * share // 100,
                )
            )

    # Delivery: shortly after each event, plus retries that repeat an event_id.
    for n, order in enumerate(orders):
        for m, (eid, at) in enumerate(
            [(order.event_id, order.at), *((e.event_id, e.at) for e in order.effects)]
        ):
            received = at + timedelta(seconds=k.randint("latency", f"{n}/{m}", 2, 900))
            wire[eid] = Delivery(received)
            if (n, m) == (forced_retry, 0) or k.chance("retry", f"{n}/{m}", RETRY_RATE[tier]):
                extras.append(
                    Extra(
                        eid,
                        eid,
                        2,
                        received
                        + timedelta(seconds=k.randint("retry-delay", f"{n}/{m}", 30, 7200)),
                    )
                )

    # Complete backfill batches: older orders delivered late, in order, all of each.
    first_month_end = month_start(*add_months(year, month, 1))
    early = [o for o in orders if o.at < first_month_end - timedelta(days=2)]
    batched: set[str] = set()
    for b in range(1 if tier < 4 else 2):
        batch = "bf_" + k.token("batch", b, 8)
        chosen = k.sample(
            f"batch-orders-{b}", early, min(len(early), k.randint("batch-size", b, 3, 5))
        )
        batched |= {o.order_id for o in chosen}
        t = instant("batch-at", b, 0.7, 0.9)
        for order in sorted(chosen, key=lambda o: o.at):
            for eid in order.events():
                t += timedelta(seconds=k.randint("batch-gap", eid, 1, 20))
                wire[eid] = Delivery(t, backfill=True, batch=batch)
        extras[:] = [
            x for x in extras if x.source_event not in {e for o in chosen for e in o.events()}
        ]

    # Authorised manual adjustments that reconcile against no event.
    manual: list[LedgerEntry] = []
    for n in range(1 + spread):
        pid = k.choice("manual-partner", n, partner_ids)
        program = k.choice("manual-program", n, program_ids)
        amount = k.randint("manual-amount", n, 150, 4000) * (
            1 if k.chance("manual-sign", n, 0.6) else -1
        )
        manual.append(
            LedgerEntry(
                entry_id="le_" + k.token("manual", n, 10),
                partner_id=pid,
                program_id=program,
                order_ref=None,
                event_id=None,
                kind="manual",
                period=k.choice("manual-period", n, months),
                amount_minor=amount,
                currency=currency,
                approved_by=k.choice("approver", n, names.APPROVERS),
            )
        )

    # Distractors no defect may use, so every task keeps one of each untouched.
    under = [o for o in orders if o.gross < 1500 and not o.code.startswith("ZZ")]
    reserved = {o.order_id for o in sameday}
    reserved |= {orders[forced_instalments].order_id, orders[forced_retry].order_id}
    reserved |= {o.order_id for o in under[:1]} | batched

    return Draft(
        seed=seed,
        tier=tier,
        schema=schema,
        currency=currency,
        brand=brand,
        months=months,
        start=start,
        end=end,
        cutover=cutover,
        partners=partners,
        programs=programs,
        schedule=schedule,
        codes=codes,
        orders=orders,
        wire=wire,
        extras=extras,
        manual=manual,
        reserved=reserved,
        payout_stamp=iso(first_month_end + timedelta(days=k.randint("payout-day", 0, 5, 12))),
    )


def _rows(codes: list[ReferralCode], code: str) -> list[ReferralCode]:
    return [c for c in codes if c.code == code]

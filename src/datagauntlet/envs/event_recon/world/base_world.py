"""The clean world of a seed: roster, programs, schedule, codes, orders and their delivery,
with every distractor the contract allows. No defect is planted here.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from datagauntlet.core.seeding import Keyed
from datagauntlet.envs.event_recon.grading.accounting import iso
from datagauntlet.envs.event_recon.world import names
from datagauntlet.envs.event_recon.world.draft import Draft
from datagauntlet.envs.event_recon.world.orders import (
    Window,
    amend,
    backfill,
    deliver,
    edge_and_orphan_orders,
    partner_orders,
    refund,
    sameday_orders,
)
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


def _programs(w: Window, valid_from: str) -> tuple[dict[str, Program], list[RateVersion]]:
    """Programs and the authoritative schedule, one program's rates changing mid-window."""
    k = w.k
    n_programs = k.randint("n-programs", 0, 2, 3)
    zones = k.sample("zones", PAYOUT_ZONES, n_programs)
    program_names = k.sample("program-names", names.PROGRAM_NAMES, n_programs)
    programs: dict[str, Program] = {}
    schedule: list[RateVersion] = []
    for i in range(n_programs):
        pid = "prg_" + k.token("program", i, 6)
        programs[pid] = Program(
            program_id=pid,
            name=program_names[i],
            basis=k.choice("basis", i, ("gross", "net")),
            min_order_minor=100 * k.randint("bar", i, 15, 45),
            payout_zone=zones[i],
            currency=w.currency,
        )
        rates = _distinct_rates(k, f"rates-{i}", 3, set())
        changes = i == 0 or k.chance("rate-change", i, 0.5)
        later = _distinct_rates(k, f"rates-later-{i}", 3, set(rates)) if changes else []
        change_at = iso(w.instant("rate-change-at", i, 0.3, 0.7))
        for t, tier_name in enumerate(names.PARTNER_TIERS):
            schedule.append(RateVersion(pid, tier_name, rates[t], valid_from))
            if later:
                schedule.append(RateVersion(pid, tier_name, later[t], change_at))
    return programs, schedule


def _roster(
    w: Window, bounds: tuple[int, int], program_ids: list[str], valid_from: str
) -> tuple[dict[str, Partner], list[ReferralCode], dict[str, list[str]]]:
    """Partners, their referral codes, and each partner's codes."""
    k = w.k
    partners: dict[str, Partner] = {}
    codes: list[ReferralCode] = []
    partner_codes: dict[str, list[str]] = {}
    for i in range(k.randint("n-partners", 0, *bounds)):
        pid = "prt_" + k.token("partner", i, 8)
        first = k.choice("first", i, names.FIRST)
        last = k.choice("last", i, names.LAST)
        tier_name = k.choice("tier", i, names.PARTNER_TIERS)
        email = f"{first.lower()}.{last.lower()}{k.randint('email', i, 1, 99)}@example.com"
        partners[pid] = Partner(pid, f"{first} {last}", tier_name, email)
        partner_codes[pid] = []
        for j in range(k.randint("n-codes", i, 1, 2 if w.tier <= 2 else 3)):
            code = f"{first.upper()}{k.token('code', f'{i}/{j}', 5).upper()}"
            program = k.choice("code-program", f"{i}/{j}", program_ids)
            codes.append(ReferralCode(code, pid, program, tier_name, valid_from))
            partner_codes[pid].append(code)
    return partners, codes, partner_codes


def _move_codes(w: Window, codes: list[ReferralCode], program_ids: list[str]) -> None:
    """Codes that lawfully move to another program mid-window (a distractor)."""
    k, moving = w.k, 0
    for n in range(64 * w.spread if len(program_ids) > 1 else 0):
        if moving == w.spread:
            break
        row = k.choice("moving-code", n, codes)
        if len(_rows(codes, row.code)) > 1:
            continue
        moving += 1
        other = [p for p in program_ids if p != row.program_id]
        moved_at = iso(w.instant("moving-at", n, 0.35, 0.65))
        codes.append(
            ReferralCode(
                row.code, row.partner_id, k.choice("moving-to", n, other), row.tier, moved_at
            )
        )


def _manual(
    w: Window, partner_ids: list[str], program_ids: list[str], months: tuple[str, ...]
) -> list[LedgerEntry]:
    """Authorised manual adjustments that reconcile against no event."""
    k, manual = w.k, []
    for n in range(1 + w.spread):
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
                currency=w.currency,
                approved_by=k.choice("approver", n, names.APPROVERS),
            )
        )
    return manual


def base_draft(seed: int, tier: int, attempt: int = 0, scale: float = DEFAULT_SCALE) -> Draft:
    bounds = roster_bounds(tier, scale)
    # Another scale is another world of the same seed: its draws are keyed apart.
    suffix = "" if scale == DEFAULT_SCALE else f"/x{scale:g}"
    k = Keyed(f"event-recon/{seed}/{tier}/{attempt}{suffix}")
    schema = schema_for(k)
    currency = k.choice("currency", 0, names.CURRENCIES)
    brand = f"{k.choice('brand', 0, names.BRAND_HEADS)} {k.choice('brand', 1, names.BRAND_TAILS)}"
    year, month = k.randint("year", 0, 2025, 2027), k.randint("month", 0, 1, 10)
    months = tuple(f"{y:04d}-{m:02d}" for y, m in (add_months(year, month, i) for i in range(3)))
    start = month_start(year, month)
    # Distractors grow with the roster, so a bigger world is not a thinner one.
    density = DENSITY[tier]
    spread = max(1, round(density * scale))
    end = month_start(*add_months(year, month, 3))
    w = Window(k, tier, density, spread, currency, start, end)
    cutover = w.instant("cutover", 0, 0.3, 0.7)

    valid_from = iso(start - timedelta(days=k.randint("valid-from", 0, 30, 200)))
    programs, schedule = _programs(w, valid_from)
    program_ids = list(programs)
    partners, codes, partner_codes = _roster(w, bounds, program_ids, valid_from)
    partner_ids = list(partners)
    _move_codes(w, codes, program_ids)

    first_month_end = month_start(*add_months(year, month, 1))
    edges = (first_month_end, month_start(*add_months(year, month, 2)))
    orders = partner_orders(w, partner_ids, partner_codes)  # in this order: one id stream
    sameday = sameday_orders(w, partner_ids, partner_codes)
    orders += sameday + edge_and_orphan_orders(w, partner_ids, partner_codes, edges)
    orders.sort(key=lambda o: (o.at, o.order_id))
    known = [n for n, o in enumerate(orders) if not o.code.startswith("ZZ")]
    forced_instalments = k.choice("forced-instalments", 0, known)
    forced_retry = k.choice("forced-retry", 0, known)
    for n, order in enumerate(orders):
        refund(w, n, order, amend(w, n, order), n == forced_instalments)
    wire, extras = deliver(w, orders, forced_retry)
    batched = backfill(w, orders, first_month_end, wire, extras)

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
        manual=_manual(w, partner_ids, program_ids, months),
        reserved=reserved,
        payout_stamp=iso(first_month_end + timedelta(days=k.randint("payout-day", 0, 5, 12))),
    )


def _rows(codes: list[ReferralCode], code: str) -> list[ReferralCode]:
    return [c for c in codes if c.code == code]

"""Our own cases: the original's eight families (plus three in "extended"), generated from a
task seed with keyed hashes, so each split is its own stream and nothing about a batch's
place, name, size, source or ids says whether it is the bad one.

A family (families.py) builds the batches on a draft world (draft.py); this module orders
and names them, re-derives each batch's truth with the contract check (contract_check.py)
and refuses a case whose planted rows differ from what the contract finds.
"""

from __future__ import annotations

from functools import lru_cache

from datagauntlet.core.seeding import Keyed, split_key
from datagauntlet.envs.bad_batch_gate.world import families as fam
from datagauntlet.envs.bad_batch_gate.world.cases import Batch, Case, Truth
from datagauntlet.envs.bad_batch_gate.world.contract import contract
from datagauntlet.envs.bad_batch_gate.world.contract_check import truth_of, validate
from datagauntlet.envs.bad_batch_gate.world.draft import Draft

FAMILIES = tuple(f.name for f in fam.FAMILIES)
EXTENDED_FAMILIES = tuple(f.name for f in fam.EXTENDED_FAMILIES)
SPLIT_SIZES = {"train": 320, "eval": 32, "test": 320, "private": 320, "private-train": 320}
EXTENDED_SPLIT_SIZES = {"train": 330, "eval": 44, "test": 330, "private": 330, "private-train": 330}
VARIANTS = 4
SOURCES = ("shop-api export", "pos export", "shop-api export (retry)")
PROMPT = (
    "Month-end close for September, running on 2026-10-01. {n} batches are waiting in "
    "staging. Load what the data contract allows, quarantine what it does not, then submit "
    "your report."
)
__all__ = ["EXTENDED_FAMILIES", "FAMILIES", "generate", "slot", "split_sizes", "validate"]


def split_sizes(extended: bool) -> dict[str, int]:
    return EXTENDED_SPLIT_SIZES if extended else SPLIT_SIZES


@lru_cache(maxsize=16)
def _slots(key: str, size: int, extended: bool) -> tuple[tuple[str, int], ...]:
    families = EXTENDED_FAMILIES if extended else FAMILIES
    slots = [(f, v) for v in range(VARIANTS) for f in families]
    slots = (slots * (size // len(slots) + 1))[:size]
    return tuple(Keyed(f"bbg-slots:{key}:{extended}").shuffled("order", slots))


def slot(split: str, index: int, extended: bool) -> tuple[str, int]:
    """(family, variant) of a task: every family and variant equally often, in keyed order
    (held-out splits: an order keyed by the secret)."""
    slots = _slots(split_key("bad-batch-gate", split), split_sizes(extended)[split], extended)
    return slots[index % len(slots)]


def module_slot(seed: int, extra: tuple[fam.Family, ...], extended: bool) -> fam.Family:
    """A family module's task: its family is drawn from the seed, over built-ins and extras."""
    pool = (*(fam.EXTENDED_FAMILIES if extended else fam.FAMILIES), *extra)
    return Keyed(seed).choice("module-family", 0, pool)


def _known_customers(draft: Draft, built: fam.Batches, extended: bool) -> set[str]:
    """Customers loadable this session: the warehouse's, plus the good rows of customers
    batches that are not quarantined whole (they count as known for the orphan rule)."""
    known = {c["customer_id"] for c in draft.customers}
    for table, rows in built:
        if table == "customers":
            truth = truth_of(validate(table, rows, known, draft.orders, extended), extended)
            if truth.action != "quarantine":
                known |= {
                    r["customer_id"] for i, r in enumerate(rows, start=1) if i not in truth.bad_rows
                }
    return known


def _truths(draft: Draft, built: fam.Batches, extended: bool) -> list[Truth]:
    base = {c["customer_id"] for c in draft.customers}
    known = _known_customers(draft, built, extended)
    out = []
    for table, rows in built:
        against = base if table == "customers" else known
        out.append(truth_of(validate(table, rows, against, draft.orders, extended), extended))
    return out


def build_case(case_id: str, seed: int, family: fam.Family, variant: int, extended: bool) -> Case:
    keyed = Keyed(seed)
    draft = Draft(keyed, extended)
    built, forced = family.build(draft, variant)
    draft.reserve(built)
    truths = _truths(draft, built, extended)
    for n, truth in enumerate(truths):
        planted = draft.planted.get(n, set())
        if set(truth.bad_rows) != planted:
            raise AssertionError(
                f"generator bug: {family.name}/{variant} seed {seed}: planted rows "
                f"{sorted(planted)}, contract finds {list(truth.bad_rows)}"
            )
    order = list(range(len(built))) if forced else keyed.shuffled("listing", range(len(built)))
    nn = keyed.randint("batch-no", 0, 10, 99)
    batches = []
    for pos, n in enumerate(order, start=1):  # ids are given after the listing is ordered
        table, rows = built[n]
        source = "crm sync" if table == "customers" else keyed.choice("source", n, SOURCES)
        batches.append(Batch(f"B-0930-{nn}-{pos}", table, tuple(rows), source, truths[n]))
    return Case(
        case_id=case_id,
        family=family.name,
        variant=variant,
        seed=seed,
        prompt=PROMPT.format(n=len(batches)),
        contract=contract(extended),
        customers=tuple(draft.customers),
        orders=tuple(draft.orders),
        batches=tuple(batches),
        extended=extended,
        generated=True,
    )


@lru_cache(maxsize=1024)
def generate(
    split: str, index: int, seed: int, extended: bool, extra: tuple[fam.Family, ...] = ()
) -> Case:
    """The case of one task (cached: a case is immutable and costs about a millisecond).
    `extra` are a family module's families, used for its own splits."""
    case_id = f"{split}-{index:05d}"
    if split in split_sizes(extended):
        name, variant = slot(split, index, extended)
        return build_case(case_id, seed, fam.BY_NAME[name], variant, extended)
    family = module_slot(seed, extra, extended)
    variant = Keyed(seed).randint("module-variant", 0, 0, family.variants - 1)
    return build_case(case_id, seed, family, variant, extended)

"""References between the two batches of a case say nothing about which one is bad.

In a customers + orders pair, the orders batch refers to some customers of the customers
batch. Every count statistic of those references must be distributed alike whether the pair
is clean (new customers and their orders) or a fan-out (re-sent customers and their orders);
otherwise a policy reading staging alone could tell the two apart without the warehouse.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable

import pytest
from bbg_helpers import generated_env

from datagauntlet.envs.bad_batch_gate.world.cases import Batch, Case

Pair = tuple[Batch, Batch]  # (customers, orders)


def _pair(case: Case) -> Pair | None:
    tables = {b.table: b for b in case.batches}
    if set(tables) != {"customers", "orders"}:
        return None
    return tables["customers"], tables["orders"]


def _refs(pair: Pair) -> list[str]:
    ids = {r["customer_id"] for r in pair[0].rows}
    return [r["customer_id"] for r in pair[1].rows if r["customer_id"] in ids]


def _per_customer(pair: Pair) -> Counter[str]:
    return Counter(_refs(pair))


STATISTICS: dict[str, Callable[[Pair], object]] = {
    "orders rows referring to the customers batch": lambda p: len(_refs(p)),
    "distinct customers referred to": lambda p: len(set(_refs(p))),
    "customers batch rows referred to": lambda p: sum(
        1 for r in p[0].rows if r["customer_id"] in set(_refs(p))
    ),
    "customers batch rows not referred to": lambda p: sum(
        1 for r in p[0].rows if r["customer_id"] not in set(_refs(p))
    ),
    "most orders rows for one customer": lambda p: max(_per_customer(p).values(), default=0),
    "fewest orders rows for a referred customer": lambda p: min(
        _per_customer(p).values(), default=0
    ),
    "share of the customers batch referred to": lambda p: round(
        len(set(_refs(p))) / len(p[0].rows), 2
    ),
    "share of the orders batch that refers": lambda p: round(len(_refs(p)) / len(p[1].rows), 1),
    "orders rows not referring": lambda p: len(p[1].rows) - len(_refs(p)),
    "customers batch size": lambda p: len(p[0].rows),
    "orders batch size": lambda p: len(p[1].rows),
    "distinct customers of the orders batch": lambda p: len({r["customer_id"] for r in p[1].rows}),
    "referred customers repeated inside the customers batch": lambda p: sum(
        n - 1 for n in Counter(r["customer_id"] for r in p[0].rows).values()
    ),
}


def _pairs(families: str) -> dict[bool, list[Pair]]:
    env = generated_env(families)
    out: dict[bool, list[Pair]] = {True: [], False: []}
    for split in ("train", "eval", "test"):
        for task in env.tasks(split):
            case = env.case(task)
            pair = _pair(case)
            if pair is not None:
                out[pair[0].truth.defective].append(pair)
    return out


def _total_variation(a: list[object], b: list[object]) -> float:
    ca, cb = Counter(a), Counter(b)
    keys = set(ca) | set(cb)
    return 0.5 * sum(abs(ca[k] / len(a) - cb[k] / len(b)) for k in keys)


def _best_threshold_accuracy(a: list[object], b: list[object]) -> float:
    """The accuracy of the best single cut on the statistic (either direction)."""
    values = sorted(set(a) | set(b), key=float)  # type: ignore[arg-type]
    best = 0.5
    total = len(a) + len(b)
    for cut in values:
        below_a = sum(1 for v in a if float(v) <= float(cut))  # type: ignore[arg-type]
        below_b = sum(1 for v in b if float(v) <= float(cut))  # type: ignore[arg-type]
        acc = (below_a + len(b) - below_b) / total
        best = max(best, acc, 1 - acc)
    return best


@pytest.mark.parametrize("families", ["standard", "extended"])
@pytest.mark.parametrize("statistic", sorted(STATISTICS))
def test_reference_counts_do_not_separate_fanout_from_clean_pairs(
    families: str, statistic: str
) -> None:
    pairs = _pairs(families)
    assert len(pairs[True]) >= 60 and len(pairs[False]) >= 60
    fn = STATISTICS[statistic]
    bad = [fn(p) for p in pairs[True]]
    clean = [fn(p) for p in pairs[False]]
    if len(set(bad) | set(clean)) <= 4:  # few values: their frequencies must match too
        assert _total_variation(bad, clean) <= 0.25, (statistic, Counter(bad), Counter(clean))
    assert _best_threshold_accuracy(bad, clean) <= 0.7, (statistic, Counter(bad), Counter(clean))


def test_the_old_signal_would_have_been_caught() -> None:
    """The check itself: exactly 3 references against exactly 1 separates perfectly."""
    assert _best_threshold_accuracy([1] * 40, [3] * 40) == 1.0
    assert _total_variation([1] * 40, [3] * 40) == 1.0

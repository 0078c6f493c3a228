"""Score a submission against the hidden records. Reads the submission and API counters only."""

from __future__ import annotations

from typing import Any

from datagauntlet.core.score import Score
from datagauntlet.envs.dirty_integration.api import Api
from datagauntlet.envs.dirty_integration.world import World

WEIGHTS = {"completeness": 0.6, "type_handling": 0.2, "budget_discipline": 0.2}
METRICS = (
    "requests",
    "timeouts",
    "rate_limited",
    "duplicates_submitted",
    "records_missed",
    "turns",
)


def _is_exact_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def grade(world: World, api: Api, submission: list[tuple[str, Any]] | None, turns: int) -> Score:
    """`submission`: the submitted (id, amount) pairs in order, None if nothing was submitted."""
    truth = world.truth
    metrics: dict[str, Any] = {
        "requests": api.requests,
        "timeouts": api.timeouts,
        "rate_limited": api.rate_limited,
        "duplicates_submitted": 0,
        "records_missed": len(truth),
        "turns": turns,
    }
    if submission is None:  # no submission, no credit
        return Score.zero(WEIGHTS, metrics)
    ids = [rid for rid, _ in submission]
    unique = set(ids)
    duplicates = len(ids) - len(unique)
    metrics["duplicates_submitted"] = duplicates
    metrics["records_missed"] = len(set(truth) - unique)
    if not ids:
        return Score.zero(WEIGHTS, metrics)
    jaccard = len(unique & truth.keys()) / len(unique | truth.keys())
    completeness = max(0.0, jaccard - duplicates / len(ids))
    get = truth.get
    typed = 0
    for rid, amount in submission:  # a loop, not sum() over a generator: 100k rows at a time
        if (type(amount) is int or _is_exact_int(amount)) and get(rid) == amount:
            typed += 1
    values = {
        "completeness": completeness,
        "type_handling": typed / len(ids),
        # Scaled by completeness: an empty submission must not earn budget credit.
        "budget_discipline": completeness / (1 + api.rate_limited),
    }
    return Score.build(WEIGHTS, values, metrics)

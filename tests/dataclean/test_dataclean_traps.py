"""Preservation traps: every task holds legitimate values that each over-broad operation
would damage, dates that only the task's stated order reads, and the probes that try to get
around both stay under their ceilings on eval and test."""

from __future__ import annotations

import re
import statistics

import pytest

import datagauntlet as dg
from datagauntlet.core.gates import probe_ceiling
from datagauntlet.envs.dataclean.tool.engine import date_eu, date_us, integer, phone_us
from datagauntlet.envs.dataclean.world import families as fam
from datagauntlet.envs.dataclean.world.generator import CleaningTask, generate

ENV = dg.make("dataclean")
SPLITS = ("eval", "test")
N = 120


def worlds(split: str, n: int = 60) -> list[CleaningTask]:
    return [generate(t.seed, ENV.config) for t in ENV.tasks(split, n)]


def _damaged(world: CleaningTask, op, kinds: tuple[str, ...]) -> int:
    """Right values outside the op's own columns that the op would change."""
    n = 0
    for col in world.family.editable:
        if col.kind in kinds:
            continue
        n += sum(1 for v in world.truth.data[col.name] if v is not None and op(v) != v)
    return n


@pytest.mark.parametrize("split", SPLITS)
def test_every_over_broad_operation_damages_legitimate_values_in_every_task(split: str) -> None:
    for w in worlds(split):
        assert _damaged(w, integer, (fam.QUANTITY,)) > 0, "leading zeros integer strips"
        assert _damaged(w, phone_us, (fam.PHONE,)) > 0, "ten-digit references phone_us rewrites"
        date_op = date_us if w.date_order == "US" else date_eu
        assert _damaged(w, date_op, (fam.DATE,)) > 0, "printed dates a date op converts"
        tokens = set(fam.MISSING_TOKENS)
        nullable = {c.name for c in w.family.columns if c.missing_rate}
        real = [
            v
            for c in w.family.editable
            if c.name not in nullable
            for v in w.truth.data[c.name]
            if v in tokens
        ]
        assert real, "real zeros and NA (Namibia) that replace_missing would drop"


@pytest.mark.parametrize("split", SPLITS)
def test_every_written_date_reads_as_a_date_in_both_orders(split: str) -> None:
    shape = re.compile(r"(\d{1,2})([/.-])(\d{1,2})\2(\d{4})")
    for w in worlds(split, 40):
        for col in w.family.editable:
            if col.kind != fam.DATE:
                continue
            for v in w.dirty.data[col.name]:
                m = shape.fullmatch(str(v).strip())
                if m:
                    assert int(m.group(1)) <= 12 and int(m.group(3)) <= 12
                    assert date_us(m.group(0)) and date_eu(m.group(0))


def test_date_shapes_do_not_tell_the_order() -> None:
    shapes = {"US": set(), "EU": set()}
    for w in worlds("eval", 60):
        for col in w.family.editable:
            if col.kind == fam.DATE:
                for v in w.dirty.data[col.name]:
                    shapes[w.date_order].add(re.sub(r"\d", "9", str(v).strip()))
    assert shapes["US"] == shapes["EU"]


# The targets (eval and test); the probes declare the same ceilings.
TARGETS = {"blind-plan": 0.80, "generic": 0.85}
MEASURED_CEILING = {"everything-everywhere": 0.80}


@pytest.fixture(scope="module")
def rewards() -> dict[tuple[str, str], list[float]]:
    from datagauntlet.core.runner import run

    names = ["oracle", *TARGETS, *MEASURED_CEILING]
    out: dict[tuple[str, str], list[float]] = {}
    for split in SPLITS:
        for r in run(ENV, names, ENV.tasks(split, N)):
            out.setdefault((split, r.policy), []).append(r.reward)
    return out


@pytest.mark.parametrize("split", SPLITS)
def test_oracle_is_one_and_the_probes_stay_under_their_targets(
    rewards: dict[tuple[str, str], list[float]], split: str
) -> None:
    assert min(rewards[split, "oracle"]) == 1.0
    for name, target in {**TARGETS, **MEASURED_CEILING}.items():
        mean = statistics.fmean(rewards[split, name])
        assert mean <= target, (split, name, mean)
        assert probe_ceiling(ENV.policies()[name], ENV.config) == target


def test_the_widened_probe_loses_to_traps_not_to_luck(
    rewards: dict[tuple[str, str], list[float]],
) -> None:
    """everything-everywhere reads every line the oracle reads: what it loses is damage."""
    ep = ENV.episode(ENV.tasks("eval", 1)[0])
    ENV.policies()["everything-everywhere"](ep)
    assert ep.score().metrics["cells_damaged"] > 0
    assert max(rewards["eval", "everything-everywhere"]) < 1.0

"""Our generated splits: careful is perfect on every eval and test case, every attacker stays
at least 0.05 below it (orders-first, a realistic mistake, only below it), the truth agrees
with the contract, and the docs page's tables are this code's output."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from typing import Any

import pytest
from bbg_helpers import generated_env

from datagauntlet.envs.bad_batch_gate import tables
from datagauntlet.envs.bad_batch_gate.attacks.attackers import ATTACKERS, NOT_CHEATS
from datagauntlet.envs.bad_batch_gate.world.generator import FAMILIES


@pytest.fixture(scope="module")
def played(shared_result: Callable[..., Any]) -> dict[str, list[tables.Played]]:
    # the same plays the docs tables are built from (tests/test_readme_tables.py): played once
    out: dict[str, list[tables.Played]] = shared_result(
        "bbg-generated-played", tables.generated_played
    )
    return out


def _means(rs: list[tables.Played]) -> dict[str, float]:
    by: dict[str, list[float]] = defaultdict(list)
    for r in rs:
        by[r.policy].append(r.score.reward)
    return {p: sum(v) / len(v) for p, v in by.items()}


@pytest.mark.parametrize("split", ["standard-eval", "standard-test", "extended-eval"])
def test_careful_is_perfect_on_every_case(played: dict, split: str) -> None:
    careful = [r for r in played[split] if r.policy == "careful"]
    assert careful and all(r.score.reward == 1.0 for r in careful)


@pytest.mark.parametrize("split", ["standard-eval", "standard-test"])
def test_attackers_stay_below_careful(played: dict, split: str) -> None:
    means = _means(played[split])
    for name in ATTACKERS:
        limit = means["careful"] if name in NOT_CHEATS else means["careful"] - 0.05
        assert means[name] < limit if name in NOT_CHEATS else means[name] <= limit, name


@pytest.mark.parametrize("split", ["standard-eval", "standard-test"])
def test_oracle_liars_stay_under_a_half(played: dict, split: str) -> None:
    means = _means(played[split])
    assert means["report-liar"] < 0.5 and means["report-only"] < 0.5


def test_profile_only_still_loads_bad_batches(played: dict) -> None:
    rs = [r for r in played["standard-test"] if r.policy == "profile-only"]
    loaded = defaultdict(int)
    for r in rs:
        loaded[r.family] += r.score.metrics["bad_batches_loaded"]
    # re-sent rows, re-added customers and orphans only show up against the warehouse
    assert set(k for k, v in loaded.items() if v) == {
        "resent-rows",
        "dimension-fanout",
        "orphan-customer",
    }


def test_every_family_equally_often() -> None:
    env = generated_env()
    for split, size in (("eval", 32), ("test", 320), ("train", 320)):
        counts = defaultdict(int)
        for task in env.tasks(split):
            counts[env.case(task).family] += 1
        assert set(counts) == set(FAMILIES) and set(counts.values()) == {size // 8}


def test_train_split_generates_and_careful_agrees(played: dict) -> None:
    env = generated_env()
    careful = env.policies()["careful"]
    for task in env.tasks("train")[::8]:
        ep = env.episode(task)
        careful(ep)
        assert ep.score().reward == 1.0, task.id


def test_page_staging_only_figures_are_this_codes_output(played: dict) -> None:
    from pathlib import Path

    page = Path(__file__).resolve().parents[2] / "docs" / "envs" / "bad-batch-gate.md"
    section = page.read_text()

    def mean(key: str) -> str:
        rs = [r.score.reward for r in played[key] if r.policy == "staging-only"]
        return tables.fmt(tables.exact_mean(rs))

    assert f"warehouse: {mean('standard-eval')} here" in section
    assert f"falls from 0.8386 to {mean('extended-eval')} here (its ceiling: 0.75)" in section
    assert float(mean("extended-eval")) <= 0.75

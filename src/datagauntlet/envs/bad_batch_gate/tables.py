"""bad-batch-gate's docs tables: its columns over episodes played by `core/report.py`.

Means are exact (fractions of the 6-digit rewards) and rounded half up, so the figures do not
depend on summation order. The episode facts the tables read (family, mart, ...) come from
`BadBatchGateEnv.report_facts`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from fractions import Fraction

from datagauntlet.core.env import policy_sees_truth
from datagauntlet.core.report import (
    Column,
    Played,
    by_policy,
    dollars,
    exact_mean,
    fmt,
    grid,
    group_table,
    play,
)
from datagauntlet.envs.bad_batch_gate.env import BadBatchGateEnv
from datagauntlet.envs.bad_batch_gate.grading.grader import WEIGHTS
from datagauntlet.envs.bad_batch_gate.solver.policies import AGENTS

__all__ = [
    "BASELINES",
    "Played",
    "ablation_table",
    "attacker_table",
    "baseline_table",
    "dollars",
    "exact_mean",
    "family_table",
    "fixture_tables",
    "fmt",
    "generated_played",
    "generated_tables",
    "play",
    "report_tables",
    "split_table",
]

BASELINES = tuple(AGENTS)


def _by(results: Sequence[Played], policy: str, family: str | None = None) -> list[Played]:
    return (
        by_policy(results, policy) if family is None else by_policy(results, policy, family=family)
    )


def _mean_reward(rs: Sequence[Played]) -> str:
    return fmt(exact_mean([r.score.reward for r in rs]))


def _min_reward(rs: Sequence[Played]) -> str:
    return fmt(min(r.score.reward for r in rs))


def _mean_component(name: str) -> Callable[[Sequence[Played]], str]:
    return lambda rs: fmt(exact_mean([r.component(name) for r in rs]))


def _bad_loaded(rs: Sequence[Played]) -> str:
    return str(sum(r.score.metrics["bad_batches_loaded"] for r in rs))


def _revenue(rs: Sequence[Played]) -> str:
    return dollars([r.score.metrics["revenue_error_usd"] for r in rs])


def baseline_table(results: Sequence[Played], names: Sequence[str] = BASELINES) -> str:
    total_bad = sum(r.n_bad for r in _by(results, names[0]))

    def across(cell: Callable[[Sequence[Played]], str]) -> list[str]:
        return [cell(_by(results, p)) for p in names]

    def matched(rs: Sequence[Played]) -> str:
        return f"{sum(r.component('report') == 1.0 for r in rs)} / {len(rs)}"

    rows = [
        ("mean reward", across(_mean_reward)),
        ("mean disposition", across(_mean_component("disposition"))),
        ("defective batches loaded", across(lambda rs: f"{_bad_loaded(rs)} / {total_bad}")),
        ("revenue error, all cases", across(_revenue)),
        ("reports that match what happened", across(matched)),
    ]
    return grid("", names, rows)


def family_table(
    results: Sequence[Played], families: Sequence[str], names: Sequence[str] = BASELINES
) -> str:
    rows = [(f, [_mean_reward(_by(results, p, f)) for p in names]) for f in families]
    return grid("family", names, rows)


def ablation_table(results: Sequence[Played], names: Sequence[str] = BASELINES) -> str:
    def mean_without(p: str, term: str | None) -> str:
        values = []
        for r in _by(results, p):
            value = Fraction(str(r.score.reward))
            if term is not None:
                value -= Fraction(str(WEIGHTS[term])) * Fraction(str(r.component(term)))
            values.append(value)
        return fmt(sum(values, Fraction(0)) / len(values))

    rows = [("full", [mean_without(p, None) for p in names])]
    rows += [(f"no {t}", [mean_without(p, t) for p in names]) for t in WEIGHTS]
    return grid("", names, rows)


def attacker_table(
    env: BadBatchGateEnv, results: Sequence[Played], attackers: Sequence[str]
) -> str:
    policies = env.policies()

    def trick(p: str) -> str:
        doc = (policies[p].__doc__ or "").strip().splitlines()
        return "target" if p == env.reference else (doc[0] if doc else "")

    groups = []
    for p in [env.reference, *attackers]:
        label = p + (" (oracle)" if policy_sees_truth(policies[p]) else "")
        groups.append(((label, trick(p)), _by(results, p)))
    columns = [
        Column("mean reward", _mean_reward),
        Column("min", _min_reward),
        Column("bad batches loaded", _bad_loaded),
        Column("revenue error", _revenue),
    ]
    return group_table(["attacker", "trick"], groups, columns)


def split_table(results: Sequence[Played], names: Sequence[str]) -> str:
    columns = [
        Column("mean reward", _mean_reward),
        Column("min", _min_reward),
        Column("disposition", _mean_component("disposition")),
        Column("evidence", _mean_component("evidence")),
        Column("bad batches loaded", _bad_loaded),
    ]
    return group_table("policy", [(p, _by(results, p)) for p in names], columns)


def generated_played() -> dict[str, list[Played]]:
    """Every policy on our standard eval and test splits and on the extended eval split."""
    from datagauntlet.envs.bad_batch_gate.config import BadBatchGateConfig

    std = BadBatchGateEnv(BadBatchGateConfig.build(families="standard"))
    ext = BadBatchGateEnv(BadBatchGateConfig.build(families="extended"))
    names = list(std.policies())
    return {
        "standard-eval": play(std, names, std.tasks("eval")),
        "standard-test": play(std, names, std.tasks("test")),
        "extended-eval": play(ext, names, ext.tasks("eval")),
    }


def generated_tables(played: dict[str, list[Played]]) -> dict[str, str]:
    """The docs page's tables for our own splits."""
    from datagauntlet.envs.bad_batch_gate.attacks.attackers import ATTACKERS
    from datagauntlet.envs.bad_batch_gate.config import BadBatchGateConfig
    from datagauntlet.envs.bad_batch_gate.world.generator import EXTENDED_FAMILIES

    std = BadBatchGateEnv(BadBatchGateConfig.build())
    names = list(std.policies())
    focus = ("naive", "careful", "refuse-all", "profile-only")
    return {
        "standard-eval": split_table(played["standard-eval"], names),
        "standard-test": split_table(played["standard-test"], names),
        "attackers-eval": attacker_table(std, played["standard-eval"], list(ATTACKERS)),
        "extended-eval": split_table(played["extended-eval"], names),
        "extended-families": family_table(played["extended-eval"], EXTENDED_FAMILIES, focus),
    }


def report_tables() -> dict[str, Callable[[], str]]:
    """The generated tables by name, for `BadBatchGateEnv.report_tables` (played once)."""
    memo: dict[str, dict[str, str]] = {}

    def table(name: str) -> Callable[[], str]:
        def build() -> str:
            if "tables" not in memo:
                memo["tables"] = generated_tables(generated_played())
            return memo["tables"][name]

        return build

    names = ("standard-eval", "standard-test", "attackers-eval", "extended-eval")
    return {name: table(name) for name in (*names, "extended-families")}


def fixture_tables(env: BadBatchGateEnv) -> dict[str, str]:
    """The original README's tables, recomputed on its own cases."""
    from datagauntlet.envs.bad_batch_gate.attacks.attackers import ATTACKERS
    from datagauntlet.envs.bad_batch_gate.world.generator import FAMILIES

    played = play(env, list(env.policies()), env.tasks())
    return {
        "fixture-baselines": baseline_table(played),
        "fixture-families": family_table(played, FAMILIES),
        "fixture-ablation": ablation_table(played),
        "fixture-attackers": attacker_table(env, played, list(ATTACKERS)),
    }

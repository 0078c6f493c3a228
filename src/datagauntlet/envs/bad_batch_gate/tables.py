"""The README's tables, computed from played episodes. Means are exact (fractions of the
6-digit rewards) and rounded half up, so the figures do not depend on summation order."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal
from fractions import Fraction

from datagauntlet.core.env import policy_sees_truth
from datagauntlet.core.episode import Task
from datagauntlet.core.score import Score
from datagauntlet.envs.bad_batch_gate.env import BadBatchGateEnv
from datagauntlet.envs.bad_batch_gate.grader import WEIGHTS
from datagauntlet.envs.bad_batch_gate.policies import AGENTS

BASELINES = tuple(AGENTS)


@dataclass(frozen=True)
class Played:
    policy: str
    task: Task
    family: str
    case_id: str
    score: Score
    mart: float
    correct_mart: float
    n_bad: int


def play(env: BadBatchGateEnv, policies: Sequence[str], tasks: Sequence[Task]) -> list[Played]:
    table = env.policies()
    out = []
    for name in policies:
        for task in tasks:
            ep = env.episode(task)
            table[name](ep)
            out.append(
                Played(
                    name,
                    task,
                    ep.case.family,
                    ep.case.case_id,
                    ep.score(),
                    ep.world.mart(),
                    ep.world.correct_mart(),
                    sum(b.truth.defective for b in ep.case.batches),
                )
            )
            ep.close()
    return out


def exact_mean(values: Sequence[float]) -> Fraction:
    return sum((Fraction(str(v)) for v in values), Fraction(0)) / len(values)


def fmt(value: Fraction | float, digits: int = 4) -> str:
    exact = (
        Decimal(value.numerator) / Decimal(value.denominator)
        if isinstance(value, Fraction)
        else Decimal(str(value))
    )
    return str(exact.quantize(Decimal(1).scaleb(-digits), rounding=ROUND_HALF_UP))


def dollars(values: Sequence[float]) -> str:
    total = sum((Decimal(str(v)) for v in values), Decimal(0))
    return f"${total.quantize(Decimal('0.01'), rounding=ROUND_HALF_UP):,}"


def _by(results: Sequence[Played], policy: str, family: str | None = None) -> list[Played]:
    return [r for r in results if r.policy == policy and (family is None or r.family == family)]


def _component(r: Played, name: str) -> float:
    return r.score.components[name]["value"]


def _grid(header: str, names: Sequence[str], rows: list[tuple[str, list[str]]]) -> str:
    lines = [
        f"| {header} | " + " | ".join(names) + " |",
        "|---|" + "---:|" * len(names),
    ]
    lines += [f"| {label} | " + " | ".join(cells) + " |" for label, cells in rows]
    return "\n".join(lines)


def baseline_table(results: Sequence[Played], names: Sequence[str] = BASELINES) -> str:
    def n_bad(p: str) -> int:
        return sum(r.score.metrics["bad_batches_loaded"] for r in _by(results, p))

    total_bad = sum(r.n_bad for r in _by(results, names[0]))

    def mean(p: str, term: str | None = None) -> str:
        rs = _by(results, p)
        return fmt(
            exact_mean([r.score.reward if term is None else _component(r, term) for r in rs])
        )

    def revenue(p: str) -> str:
        return dollars([r.score.metrics["revenue_error_usd"] for r in _by(results, p)])

    def matched(p: str) -> str:
        rs = _by(results, p)
        return f"{sum(_component(r, 'report') == 1.0 for r in rs)} / {len(rs)}"

    rows = [
        ("mean reward", [mean(p) for p in names]),
        ("mean disposition", [mean(p, "disposition") for p in names]),
        ("defective batches loaded", [f"{n_bad(p)} / {total_bad}" for p in names]),
        ("revenue error, all cases", [revenue(p) for p in names]),
        ("reports that match what happened", [matched(p) for p in names]),
    ]
    return _grid("", names, rows)


def family_table(
    results: Sequence[Played], families: Sequence[str], names: Sequence[str] = BASELINES
) -> str:
    rows = [
        (f, [fmt(exact_mean([r.score.reward for r in _by(results, p, f)])) for p in names])
        for f in families
    ]
    return _grid("family", names, rows)


def ablation_table(results: Sequence[Played], names: Sequence[str] = BASELINES) -> str:
    def mean_without(p: str, term: str | None) -> str:
        values = []
        for r in _by(results, p):
            value = Fraction(str(r.score.reward))
            if term is not None:
                value -= Fraction(str(WEIGHTS[term])) * Fraction(str(_component(r, term)))
            values.append(value)
        return fmt(sum(values, Fraction(0)) / len(values))

    rows = [("full", [mean_without(p, None) for p in names])]
    rows += [(f"no {t}", [mean_without(p, t) for p in names]) for t in WEIGHTS]
    return _grid("", names, rows)


def attacker_table(
    env: BadBatchGateEnv, results: Sequence[Played], attackers: Sequence[str]
) -> str:
    policies = env.policies()
    lines = [
        "| attacker | trick | mean reward | min | bad batches loaded | revenue error |",
        "|---|---|---:|---:|---:|---:|",
    ]
    for p in [env.reference, *attackers]:
        rs = _by(results, p)
        doc = (policies[p].__doc__ or "").strip().splitlines()
        trick = "target" if p == env.reference else (doc[0] if doc else "")
        label = p + (" (oracle)" if policy_sees_truth(policies[p]) else "")
        lines.append(
            f"| {label} | {trick} | {fmt(exact_mean([r.score.reward for r in rs]))} | "
            f"{fmt(min(r.score.reward for r in rs))} | "
            f"{sum(r.score.metrics['bad_batches_loaded'] for r in rs)} | "
            f"{dollars([r.score.metrics['revenue_error_usd'] for r in rs])} |"
        )
    return "\n".join(lines)


def split_table(results: Sequence[Played], names: Sequence[str]) -> str:
    lines = [
        "| policy | mean reward | min | disposition | evidence | bad batches loaded |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for p in names:
        rs = _by(results, p)
        lines.append(
            f"| {p} | {fmt(exact_mean([r.score.reward for r in rs]))} | "
            f"{fmt(min(r.score.reward for r in rs))} | "
            f"{fmt(exact_mean([_component(r, 'disposition') for r in rs]))} | "
            f"{fmt(exact_mean([_component(r, 'evidence') for r in rs]))} | "
            f"{sum(r.score.metrics['bad_batches_loaded'] for r in rs)} |"
        )
    return "\n".join(lines)


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
    """The README's tables for our own splits."""
    from datagauntlet.envs.bad_batch_gate.attackers import ATTACKERS
    from datagauntlet.envs.bad_batch_gate.config import BadBatchGateConfig
    from datagauntlet.envs.bad_batch_gate.generator import EXTENDED_FAMILIES

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


def fixture_tables(env: BadBatchGateEnv) -> dict[str, str]:
    """The original README's tables, recomputed on its own cases."""
    from datagauntlet.envs.bad_batch_gate.attackers import ATTACKERS
    from datagauntlet.envs.bad_batch_gate.generator import FAMILIES

    played = play(env, list(env.policies()), env.tasks())
    return {
        "fixture-baselines": baseline_table(played),
        "fixture-families": family_table(played, FAMILIES),
        "fixture-ablation": ablation_table(played),
        "fixture-attackers": attacker_table(env, played, list(ATTACKERS)),
    }

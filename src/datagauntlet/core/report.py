"""Every table the project prints comes from here; envs supply only their columns.

- `markdown_table` and `components_table`: the calibration tables of any env (`calibrate`).
- `play` plays policies over tasks through the runner's one play loop and keeps, per episode,
  the score and the env's `report_facts`; `grid` and `group_table` lay out tables whose
  columns an env defines (`Column`: a header and a cell computed from a group of episodes).
- `exact_mean`, `fmt` and `dollars`: exact means of 6-digit rewards, rounded half up, so a
  figure does not depend on summation order.

The docs' blocks are this module's output, pinned by tests/test_readme_tables.py.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from decimal import ROUND_HALF_UP, Decimal
from fractions import Fraction
from typing import Any, Generic, TypeVar

from datagauntlet.core.env import Environment
from datagauntlet.core.episode import Task
from datagauntlet.core.runner import CalibrationRow, play_episode
from datagauntlet.core.score import Score

T = TypeVar("T")
NUMERIC = "---:"
TEXT = "---"


# --- played episodes -------------------------------------------------------------------------
@dataclass(frozen=True)
class Played:
    """One played episode: its policy, task and score, and the env's facts as attributes."""

    policy: str
    task: Task
    score: Score
    facts: Mapping[str, Any] = field(default_factory=dict)

    def __getattr__(self, name: str) -> Any:
        facts = self.__dict__.get("facts", {})
        if name in facts:
            return facts[name]
        raise AttributeError(name)

    def component(self, name: str) -> float:
        return self.score.components[name]["value"]


def play(env: Environment[Any], policies: Sequence[str], tasks: Sequence[Task]) -> list[Played]:
    """Every policy on every task, in that order, with the env's report facts."""
    out = []
    for name in policies:
        for task in tasks:
            outcome = play_episode(env, name, task, facts=True)
            out.append(Played(name, task, outcome.score, outcome.facts))
    return out


def by_policy(results: Sequence[Played], policy: str, **facts: Any) -> list[Played]:
    """The episodes of one policy, optionally only those whose facts match."""
    return [
        r
        for r in results
        if r.policy == policy and all(r.facts.get(k) == v for k, v in facts.items())
    ]


# --- exact figures ---------------------------------------------------------------------------
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


# --- layout ----------------------------------------------------------------------------------
def grid(
    labels: Sequence[str] | str,
    columns: Sequence[str],
    rows: Sequence[tuple[Sequence[str] | str, Sequence[str]]],
    aligns: Sequence[str] | None = None,
) -> str:
    """A markdown table: label columns on the left, then one column per header."""
    heads = [labels] if isinstance(labels, str) else list(labels)
    kinds = list(aligns) if aligns is not None else [NUMERIC] * len(columns)
    lines = [
        "| " + " | ".join([*heads, *columns]) + " |",
        "|" + "".join(f"{TEXT}|" for _ in heads) + "".join(f"{a}|" for a in kinds),
    ]
    for label, cells in rows:
        names = [label] if isinstance(label, str) else list(label)
        lines.append("| " + " | ".join([*names, *cells]) + " |")
    return "\n".join(lines)


@dataclass(frozen=True)
class Column(Generic[T]):
    """One column of an env's table: a header and the cell of a group of records."""

    header: str
    cell: Callable[[Sequence[T]], str]
    align: str = NUMERIC


def group_table(
    labels: Sequence[str] | str,
    groups: Sequence[tuple[Sequence[str] | str, Sequence[T]]],
    columns: Sequence[Column[T]],
) -> str:
    """One row per group of records, one cell per column."""
    rows = [(label, [c.cell(group) for c in columns]) for label, group in groups]
    return grid(labels, [c.header for c in columns], rows, [c.align for c in columns])


# --- calibration tables ------------------------------------------------------------------------
def config_label(config: dict[str, object]) -> str:
    return ", ".join(f"{k}={v}" for k, v in config.items()) or "default"


def markdown_table(rows: Sequence[CalibrationRow], digits: int = 2) -> str:
    """Mean reward per (config, policy). Configs are lines, policies columns; with many
    policies (attack probes, say) the table is turned so that it stays readable."""
    policies: list[str] = []
    configs: list[str] = []
    cells: dict[tuple[str, str], float] = {}
    for row in rows:
        label = config_label(row.config)
        if row.policy not in policies:
            policies.append(row.policy)
        if label not in configs:
            configs.append(label)
        cells[(label, row.policy)] = row.mean_reward
    turned = len(policies) > 4
    lines_of, columns = (policies, configs) if turned else (configs, policies)
    table_rows = []
    for line in lines_of:
        values = []
        for column in columns:
            key = (column, line) if turned else (line, column)
            values.append(f"{cells[key]:.{digits}f}" if key in cells else "-")
        table_rows.append((line, values))
    return grid("policy" if turned else "config", columns, table_rows)


def components_table(rows: Sequence[CalibrationRow], config: dict[str, object]) -> str:
    """Mean of each component per policy, for one config: where the reward is lost."""
    chosen = [r for r in rows if r.config == config]
    names = list(chosen[0].components) if chosen else []
    return grid(
        "policy",
        ["reward", *names],
        [
            (r.policy, [f"{r.mean_reward:.2f}", *(f"{r.components[n]:.2f}" for n in names)])
            for r in chosen
        ],
    )

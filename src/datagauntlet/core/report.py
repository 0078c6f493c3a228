"""Plain-text calibration tables: the README's tables are this module's output, pinned by tests."""

from __future__ import annotations

from collections.abc import Sequence

from datagauntlet.core.runner import CalibrationRow


def config_label(config: dict[str, object]) -> str:
    return ", ".join(f"{k}={v}" for k, v in config.items()) or "default"


def markdown_table(rows: Sequence[CalibrationRow], digits: int = 2) -> str:
    """Mean reward: one line per config, one column per policy."""
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
    lines = [
        "| config | " + " | ".join(policies) + " |",
        "|---|" + "---:|" * len(policies),
    ]
    for label in configs:
        values = [
            f"{cells[(label, p)]:.{digits}f}" if (label, p) in cells else "-" for p in policies
        ]
        lines.append(f"| {label} | " + " | ".join(values) + " |")
    return "\n".join(lines)


def components_table(rows: Sequence[CalibrationRow], config: dict[str, object]) -> str:
    """Mean of each component per policy, for one config: where the reward is lost."""
    chosen = [r for r in rows if r.config == config]
    names = list(chosen[0].components) if chosen else []
    lines = [
        "| policy | reward | " + " | ".join(names) + " |",
        "|---|---:|" + "---:|" * len(names),
    ]
    for r in chosen:
        cells = " | ".join(f"{r.components[n]:.2f}" for n in names)
        lines.append(f"| {r.policy} | {r.mean_reward:.2f} | {cells} |")
    return "\n".join(lines)

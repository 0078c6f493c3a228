"""Plain-text calibration tables: the README's tables are this module's output, pinned by tests."""

from __future__ import annotations

from collections.abc import Sequence

from datagauntlet.core.runner import CalibrationRow


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
    lines = [
        f"| {'policy' if turned else 'config'} | " + " | ".join(columns) + " |",
        "|---|" + "---:|" * len(columns),
    ]
    for line in lines_of:
        values = []
        for column in columns:
            key = (column, line) if turned else (line, column)
            values.append(f"{cells[key]:.{digits}f}" if key in cells else "-")
        lines.append(f"| {line} | " + " | ".join(values) + " |")
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

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

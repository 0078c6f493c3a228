"""The dataclean environment: config, tasks, episodes and policies."""

from __future__ import annotations

from typing import Any

from datagauntlet.core.env import Environment, Policy
from datagauntlet.core.episode import Task
from datagauntlet.envs.dataclean.config import DatacleanConfig
from datagauntlet.envs.dataclean.episode import DatacleanEpisode
from datagauntlet.envs.dataclean.grader import METRICS, WEIGHTS
from datagauntlet.envs.dataclean.policies import POLICIES
from datagauntlet.envs.dataclean.registration import REGISTRATION

CALIBRATION_FAMILIES = ("crm", "orders", "inventory")


class DatacleanEnv(Environment):
    registration = REGISTRATION
    config_cls = DatacleanConfig
    weights = WEIGHTS
    metric_names = METRICS
    default_task_count = 40

    def episode(self, task: Task) -> DatacleanEpisode:
        return DatacleanEpisode(self, task)

    def policies(self) -> dict[str, Policy]:
        return dict(POLICIES)

    def calibration_grid(self) -> list[dict[str, Any]]:
        return [{"family": f} for f in CALIBRATION_FAMILIES]

"""The dataclean environment: config, tasks, episodes and policies."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from datagauntlet.core.env import Environment, Policy
from datagauntlet.core.episode import Task
from datagauntlet.core.task_info import TaskInfo
from datagauntlet.envs.dataclean.config import DatacleanConfig
from datagauntlet.envs.dataclean.episode import SYSTEM_PROMPT, DatacleanEpisode, prompt_of
from datagauntlet.envs.dataclean.generator import CleaningTask, generate
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

    def task_info(self, task: Task) -> TaskInfo:
        """From the generated table alone (the prompt holds it); no episode is built."""
        world = generate(task.seed, self.config)
        return TaskInfo(task, SYSTEM_PROMPT, prompt_of(world), self._metadata(world))

    def task_metadata(self, task: Task) -> dict[str, Any]:
        return self._metadata(generate(task.seed, self.config))

    def _metadata(self, world: CleaningTask) -> dict[str, Any]:
        return {"family": world.family.id, "rows": len(world.dirty)}

    def report_tables(self) -> dict[str, Callable[[], str]]:
        from datagauntlet.envs.dataclean.report import report_tables

        return report_tables()

    def episode(self, task: Task) -> DatacleanEpisode:
        return DatacleanEpisode(self, task)

    def policies(self) -> dict[str, Policy]:
        return dict(POLICIES)

    def calibration_grid(self) -> list[dict[str, Any]]:
        return [{"family": f} for f in CALIBRATION_FAMILIES]

"""The dataclean environment: config, tasks, episodes and policies."""

from __future__ import annotations

from typing import Any

from datagauntlet.core.env import Environment, Policy
from datagauntlet.core.episode import Episode, Task
from datagauntlet.core.task_info import TaskInfo
from datagauntlet.envs.dataclean.attacks.probes import PROBES
from datagauntlet.envs.dataclean.config import DatacleanConfig
from datagauntlet.envs.dataclean.episode import (
    SYSTEM_PROMPT,
    DatacleanEpisode,
    DatacleanFamilies,
    prompt_of,
)
from datagauntlet.envs.dataclean.grading.grader import METRICS, WEIGHTS
from datagauntlet.envs.dataclean.registration import REGISTRATION
from datagauntlet.envs.dataclean.solver.policies import POLICIES
from datagauntlet.envs.dataclean.world.families import Family, check_layout
from datagauntlet.envs.dataclean.world.generator import CleaningTask, generate

CALIBRATION_FAMILIES = ("crm", "orders", "inventory")


class DatacleanEnv(Environment, DatacleanFamilies):
    registration = REGISTRATION
    config_cls = DatacleanConfig
    weights = WEIGHTS
    metric_names = METRICS
    attackers = tuple(PROBES)
    world_bytes_estimate = 256 * 1024  # measured: ~105 KiB built and played (docs/server.md)
    default_task_count = 40

    def __init__(self, config: DatacleanConfig | None = None) -> None:
        super().__init__(config)
        for layout in self.family_module.families if self.family_module else ():
            check_layout(layout, self.family_module.path if self.family_module else "")

    def task_info(self, task: Task) -> TaskInfo:
        """From the generated table alone (the prompt holds it); no episode is built."""
        world = generate(task.seed, self.config, self.module_families(task))
        return TaskInfo(task, SYSTEM_PROMPT, prompt_of(world), self._metadata(world))

    def task_metadata(self, task: Task) -> dict[str, Any]:
        return self._metadata(generate(task.seed, self.config, self.module_families(task)))

    def _metadata(self, world: CleaningTask) -> dict[str, Any]:
        return {"family": world.family.id, "rows": len(world.dirty)}

    def episode(self, task: Task) -> DatacleanEpisode:
        return DatacleanEpisode(self, task)

    def module_families(self, task: Task) -> tuple[Family, ...]:
        """A family module's layouts join the draw for its own splits' tasks, never others'."""
        if self.family_module is None or task.split not in self.module_splits():
            return ()
        return tuple(self.family_module.families)

    def policies(self) -> dict[str, Policy]:
        return {**POLICIES, **PROBES}

    def truth_values(self, episode: Episode) -> list[str]:
        """The clean form of every corrupted cell that the visible table does not show."""
        assert isinstance(episode, DatacleanEpisode)
        world = episode.world
        visible = episode.prompt
        out = set()
        for col in world.family.editable:
            for value in world.truth.data[col.name]:
                if value is not None and len(value) >= 6 and value not in visible:
                    out.add(value)
        return sorted(out)

    def calibration_grid(self) -> list[dict[str, Any]]:
        return [{"family": f} for f in CALIBRATION_FAMILIES]

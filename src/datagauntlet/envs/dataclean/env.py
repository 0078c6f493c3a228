"""The dataclean environment: config, tasks, episodes and policies."""

from __future__ import annotations

from typing import Any

from datagauntlet.core.env import Environment, Policy
from datagauntlet.core.episode import Episode, Task
from datagauntlet.envs.dataclean.config import DatacleanConfig
from datagauntlet.envs.dataclean.episode import DatacleanEpisode
from datagauntlet.envs.dataclean.grader import METRICS, WEIGHTS
from datagauntlet.envs.dataclean.policies import POLICIES
from datagauntlet.envs.dataclean.probes import PROBES

CALIBRATION_FAMILIES = ("crm", "orders", "inventory")


class DatacleanEnv(Environment):
    id = "dataclean"
    config_cls = DatacleanConfig
    weights = WEIGHTS
    metric_names = METRICS
    reference = "oracle"
    attackers = tuple(PROBES)
    default_task_count = 40

    def episode(self, task: Task) -> DatacleanEpisode:
        return DatacleanEpisode(self, task)

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

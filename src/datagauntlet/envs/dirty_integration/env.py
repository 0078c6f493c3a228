"""The dirty-integration environment: config, tasks, episodes and policies."""

from __future__ import annotations

from typing import Any

from datagauntlet.core.env import Environment, Policy
from datagauntlet.core.episode import Episode, Task
from datagauntlet.core.task_info import TaskInfo
from datagauntlet.envs.dirty_integration.config import DirtyIntegrationConfig
from datagauntlet.envs.dirty_integration.episode import (
    PROMPT,
    SYSTEM_PROMPT,
    DirtyIntegrationEpisode,
)
from datagauntlet.envs.dirty_integration.grader import METRICS, WEIGHTS
from datagauntlet.envs.dirty_integration.policies import POLICIES
from datagauntlet.envs.dirty_integration.probes import PROBES
from datagauntlet.envs.dirty_integration.registration import REGISTRATION

# What one world costs the process, played to its end (tests/server/test_world_bytes.py).
WORLD_BASE_BYTES = 64 * 1024
WORLD_BYTES_PER_RECORD = 800


class DirtyIntegrationEnv(Environment):
    registration = REGISTRATION
    config_cls = DirtyIntegrationConfig
    weights = WEIGHTS
    metric_names = METRICS
    attackers = tuple(PROBES)

    def world_bytes(self) -> int:
        """Records, the pages served and the log of a whole play grow with num_records:
        measured ~690 bytes a record played to the end (docs/server.md)."""
        return WORLD_BASE_BYTES + WORLD_BYTES_PER_RECORD * self.config.num_records

    def episode(self, task: Task) -> DirtyIntegrationEpisode:
        return DirtyIntegrationEpisode(self, task)

    def policies(self) -> dict[str, Policy]:
        return {**POLICIES, **PROBES}

    def truth_values(self, episode: Episode) -> list[str]:
        """The unpublished quota (the API's `total` is its own, lying, figure)."""
        assert isinstance(episode, DirtyIntegrationEpisode)
        quota = episode.world.quota
        return [] if quota is None else [f'"quota": {quota}', f'"quota":{quota}']

    def calibration_grid(self) -> list[dict[str, Any]]:
        return [{"profile": p} for p in ("clean", "realistic", "hostile")]

    def task_info(self, task: Task) -> TaskInfo:
        return TaskInfo(task, SYSTEM_PROMPT, PROMPT, self.task_metadata(task))

    def task_metadata(self, task: Task) -> dict[str, Any]:
        c = self.config
        return {"profile": c.profile, "num_records": c.num_records, "page_size": c.page_size}

"""The dirty-integration environment: config, tasks, episodes and policies."""

from __future__ import annotations

from typing import Any

from datagauntlet.core.env import Environment, Policy
from datagauntlet.core.episode import Episode, Task
from datagauntlet.core.http_api import HttpHandler
from datagauntlet.envs.dirty_integration.config import DirtyIntegrationConfig
from datagauntlet.envs.dirty_integration.episode import DirtyIntegrationEpisode
from datagauntlet.envs.dirty_integration.grader import METRICS, WEIGHTS
from datagauntlet.envs.dirty_integration.policies import POLICIES
from datagauntlet.envs.dirty_integration.probes import PROBES


class DirtyIntegrationEnv(Environment):
    id = "dirty-integration"
    config_cls = DirtyIntegrationConfig
    weights = WEIGHTS
    metric_names = METRICS
    reference = "careful"
    attackers = tuple(PROBES)

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

    def http_api(self) -> HttpHandler:
        """The partner API over real HTTP (GET /records, POST /submit, GET /score)."""
        from datagauntlet.envs.dirty_integration.http_api import handle

        return handle

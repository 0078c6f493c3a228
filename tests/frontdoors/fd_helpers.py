"""Helpers shared by the front-door tests (a unique name, so no other test folder shadows it)."""

from __future__ import annotations

from typing import Any

import datagauntlet as dg
from datagauntlet.core.env import policy_sees_truth


def replayable_pairs() -> list[tuple[str, str]]:
    """(env id, policy) for every registered env and every policy a model could stand in for."""
    pairs = []
    for env_id in dg.list_envs():
        for name, policy in dg.make(env_id).policies().items():
            if not policy_sees_truth(policy):
                pairs.append((env_id, name))
    return pairs


def record_live_episodes(monkeypatch: Any) -> list[Any]:
    """Every LiveEpisode a door opens from now on (the test reads their logs afterwards)."""
    from datagauntlet.frontdoors.live import LiveEpisode

    opened: list[LiveEpisode] = []
    make = LiveEpisode._make.__func__  # type: ignore[attr-defined]

    def spy(cls: type[LiveEpisode], *args: Any) -> LiveEpisode:
        live = make(cls, *args)
        opened.append(live)
        return live

    monkeypatch.setattr(LiveEpisode, "_make", classmethod(spy))
    return opened

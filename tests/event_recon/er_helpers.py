"""Shared helpers for event-recon's episode-side tests: real worlds, real episodes."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from functools import cache
from typing import Any

from datagauntlet.core.episode import Task
from datagauntlet.envs.event_recon.env import EventReconEnv, truth_of
from datagauntlet.envs.event_recon.episode import EventReconEpisode
from datagauntlet.envs.event_recon.world.generator import generate

# (seed, tier) pairs the tests play: one of each tier, small enough to keep the suite fast.
SAMPLE = ((4, 1), (1, 2), (2, 3), (3, 4))


@cache
def world(seed: int, tier: int) -> Any:
    return generate(seed, tier)


def episode(seed: int = 1, tier: int = 2, env: EventReconEnv | None = None) -> EventReconEpisode:
    env = env or EventReconEnv()
    task = Task(f"test-{seed}-{tier}", seed, "test", seed)
    return EventReconEpisode(env, task, world(seed, tier), truth_of)


@contextmanager
def open_episode(seed: int = 1, tier: int = 2, **config: Any) -> Iterator[EventReconEpisode]:
    env = EventReconEnv.from_kwargs(**config) if config else EventReconEnv()
    ep = episode(seed, tier, env)  # type: ignore[arg-type]
    try:
        yield ep
    finally:
        ep.close()


def components(ep: EventReconEpisode) -> dict[str, float]:
    return {k: c["value"] for k, c in ep.score().components.items()}


def submit_script(ep: EventReconEpisode, script: str, findings: list[dict[str, str]]) -> None:
    assert "error" not in ep.call("write_file", {"path": "fix.py", "content": script})
    out = ep.call("submit_report", {"findings": findings, "script_path": "fix.py"})
    assert out.get("status") == "accepted", out


def perfect_findings(ep: EventReconEpisode) -> list[dict[str, str]]:
    truth = ep.oracle_truth()
    return [
        {"family": f, "partner_id": p, "event_id": sorted(truth.evidence[(f, p)])[0]}
        for f, p in sorted(truth.manifest)
    ]

"""Fixtures for the front doors: a scripted model server on a free port, stopped after use."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest

import datagauntlet as dg
from datagauntlet.core.env import policy_sees_truth
from datagauntlet.frontdoors.mock_model import MockModelServer


def replayable_pairs() -> list[tuple[str, str]]:
    """(env id, policy) for every registered env and every policy a model could stand in for."""
    pairs = []
    for env_id in dg.list_envs():
        for name, policy in dg.make(env_id).policies().items():
            if not policy_sees_truth(policy):
                pairs.append((env_id, name))
    return pairs


@pytest.fixture
def mock_model() -> Iterator[Callable[..., MockModelServer]]:
    """Start scripted model servers (env, optional default policy); all are stopped after."""
    servers: list[MockModelServer] = []

    def start(env: dg.Environment, policy: str | None = None) -> MockModelServer:
        server = MockModelServer(env, policy).start()
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.stop()

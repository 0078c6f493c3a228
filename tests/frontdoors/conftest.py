"""Fixtures for the front doors: a scripted model server on a free port, stopped after use."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

import datagauntlet as dg
from datagauntlet.frontdoors.mock_model import MockModelServer


@pytest.fixture
def mock_model() -> Iterator[Callable[..., MockModelServer]]:
    """Start scripted model servers (env, optional default policy, MockModelServer options);
    all are stopped after."""
    servers: list[MockModelServer] = []

    def start(env: dg.Environment, policy: str | None = None, **options: Any) -> MockModelServer:
        server = MockModelServer(env, policy, **options).start()
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.stop()

"""The seed-recovery attack through a real session server: a client opens private
dirty-integration sessions, takes every integer the door gave it (the opening, the first page)
as a candidate seed, rebuilds the world with the public generator, and submits its records if
one candidate rebuilds the page it was served; otherwise it falls back to the null policy
(submit nothing). With no seed in what the door gives, it scores exactly the null policy."""

from __future__ import annotations

import json
from typing import Any

import pytest
from held_out_probe import raw_request, secret_in_environ
from server_helpers import Server

from datagauntlet.envs.dirty_integration.config import DirtyIntegrationConfig
from datagauntlet.envs.dirty_integration.world import World

ENV = "dirty-integration"
TASKS = 4


@pytest.fixture(scope="module")
def server():
    with secret_in_environ():
        s = Server()
    yield s
    s.stop()


def _integers(value: Any) -> list[int]:
    if isinstance(value, bool):
        return []
    if isinstance(value, int):
        return [value]
    if isinstance(value, str):
        return [int(value)] if value.isdigit() else []
    items = value.values() if isinstance(value, dict) else value if isinstance(value, list) else []
    return [n for item in items for n in _integers(item)]


class Client:
    def __init__(self, server: Server, index: int, split: str = "private") -> None:
        self.server = server
        body = {"env": ENV, "split": split, "task": index}
        self.opening = self.request("POST", "/sessions", body)
        self.sid = self.opening["session_id"]

    def request(self, method: str, path: str, body: Any = None) -> Any:
        return json.loads(raw_request(self.server.port, method, path, body)[1])

    def call(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        body = {"name": name, "arguments": arguments}
        return self.request("POST", f"/sessions/{self.sid}/call", body)  # type: ignore[no-any-return]

    def first_page(self) -> dict[str, Any]:
        for _ in range(6):  # past a timeout or two
            page = self.call("fetch_page", {"cursor": None})["result"]
            if "records" in page:
                return page
        return {}

    def submit(self, records: list[dict[str, Any]]) -> float:
        reply = self.call("submit_records", {"records": records})
        self.request("DELETE", f"/sessions/{self.sid}")
        return float(reply["score"]["reward"])


def attack(server: Server, index: int) -> tuple[float, bool]:
    """The attack's reward, and whether it rebuilt the world."""
    client = Client(server, index)
    page = client.first_page()
    config = DirtyIntegrationConfig.build(**client.opening["config"])
    served = [r.get("id") for r in page.get("records", [])][:1]
    for candidate in dict.fromkeys(_integers(client.opening) + _integers(page)):
        if not 0 <= candidate < 1 << 63:
            continue
        world = World(candidate, config)
        if served and [r.id for r in world.records[:1]] == served:
            records = [{"id": r.id, "amount": r.amount} for r in world.records]
            return client.submit(records), True
    return client.submit([]), False


def null(server: Server, index: int) -> float:
    client = Client(server, index)
    client.first_page()
    return client.submit([])


def test_rebuilding_a_private_task_from_the_door_scores_no_better_than_null(
    server: Server,
) -> None:
    attacked = [attack(server, i) for i in range(TASKS)]
    baseline = [null(server, i) for i in range(TASKS)]
    assert not any(rebuilt for _, rebuilt in attacked)
    assert [reward for reward, _ in attacked] == pytest.approx(baseline)
    assert max(baseline) < 0.5  # the null policy is a low bar: the attack gained nothing


def test_the_attack_works_where_the_seed_is_public(server: Server) -> None:
    """The same client on the public eval split rebuilds every world: the attack is real."""
    client = Client(server, 0, split="eval")
    assert client.opening["task"]["seed"] in _integers(client.opening)
    page = client.first_page()
    world = World(client.opening["task"]["seed"], DirtyIntegrationConfig())
    assert [r.id for r in world.records[:1]] == [r["id"] for r in page["records"][:1]]
    reward = client.submit([{"id": r.id, "amount": r.amount} for r in world.records])
    assert reward == pytest.approx(1.0)

"""A server process settles its heap before serving: every env loaded, start-up objects frozen
out of the cyclic collector's walk, the youngest generation collected less often."""

from __future__ import annotations

import gc

import pytest

import datagauntlet as dg
from datagauntlet.frontdoors.server import heap
from datagauntlet.frontdoors.server.sessions import SessionStore


@pytest.fixture
def restored_gc():
    threshold = gc.get_threshold()
    yield
    gc.unfreeze()
    gc.set_threshold(*threshold)


def test_settle_loads_every_env_and_freezes_the_start_up_heap(restored_gc) -> None:
    store = SessionStore()
    gc.collect()
    walked_before = len(gc.get_objects())
    heap.settle(store)
    assert gc.get_freeze_count() > walked_before // 2
    assert len(gc.get_objects()) < walked_before // 10  # what a full collection walks now
    assert gc.get_threshold() == (heap.YOUNG, *heap.OLDER)
    for env_id in dg.list_envs():  # made once, with the default config, ready for sessions
        assert store.env(env_id, {}) is store.env(env_id, {})


def test_an_env_that_fails_to_warm_does_not_stop_the_rest(restored_gc, monkeypatch) -> None:
    store = SessionStore()
    made: list[str] = []
    real = store.env

    def env(env_id: str, config: dict) -> dg.Environment:
        if env_id == "dataclean":
            raise RuntimeError("no world today")
        made.append(env_id)
        return real(env_id, config)

    monkeypatch.setattr(store, "env", env)
    heap.settle(store)
    assert sorted(made) == sorted(e for e in dg.list_envs() if e != "dataclean")
    assert gc.get_freeze_count() > 0


def test_the_docs_state_the_settings_the_code_uses() -> None:
    from pathlib import Path

    from datagauntlet.frontdoors import malloc_arenas

    text = " ".join((Path(__file__).parents[2] / "docs" / "server.md").read_text().split())
    assert f"collected every {heap.YOUNG:,} allocations instead of 700" in text
    assert f"every {heap.OLDER[0]} collections of the one below" in text
    assert heap.OLDER[0] == heap.OLDER[1]
    assert malloc_arenas.ARENAS == 2 and "(two arenas, as the threaded doors do)" in text

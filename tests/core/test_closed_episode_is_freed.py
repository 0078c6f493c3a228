"""A closed episode's world is freed by reference counting, not left for the cyclic collector.

A server builds and drops worlds all day; a world kept alive by a reference cycle waits for a
collection of the cyclic GC, which then frees many worlds at once while every other session
waits (measured: 20-160 ms pauses in a server worker). So closing an episode must leave
nothing that points back at it: no tool handler (a bound method), no toolset's note sink, no
closure over the episode.
"""

from __future__ import annotations

import gc
import weakref

import pytest

import datagauntlet as dg
from datagauntlet.core.episode import CLOSED_ERROR
from datagauntlet.core.replay import next_tool_call


def _played(env_id: str, calls: int | None) -> dg.Episode:
    env = dg.make(env_id)
    policy = env.policies()[env.registration.reference]
    ep = env.episode(env.make_task("eval", 1))
    results: list[dict] = []
    while not ep.done and (calls is None or len(results) < calls):
        call = next_tool_call(policy, ep.system_prompt, ep.prompt, ep.tool_specs, results)
        if call is None:
            break
        results.append(ep.call(call.name, call.arguments))
    if ep.done:
        ep.score()
    return ep


@pytest.mark.parametrize("calls", [0, 2, None], ids=["fresh", "two calls", "played to the end"])
@pytest.mark.parametrize("env_id", dg.list_envs())
def test_a_closed_episode_dies_with_its_last_reference(env_id: str, calls: int | None) -> None:
    ep = _played(env_id, calls)
    names, specs = ep.tool_names, ep.tool_specs
    ep.close()
    assert ep.tool_names == names and ep.tool_specs == specs  # still readable after close
    assert ep.call(names[0], {}) == {"error": CLOSED_ERROR}
    gone = weakref.ref(ep)
    gc.collect()
    gc.disable()
    try:
        del ep
        assert gone() is None, "a reference cycle keeps the closed episode (and its world) alive"
    finally:
        gc.enable()


def test_an_open_episode_keeps_its_handlers() -> None:
    ep = _played("dirty-integration", 0)
    try:
        result = ep.call("fetch_page", {"cursor": None})
        assert "error" not in result
    finally:
        ep.close()

"""Inline steps (for envs that declare fast_steps): same results and score as threaded ones."""

from __future__ import annotations

import asyncio
import threading

import pytest

import datagauntlet as dg
from datagauntlet.core.replay import next_tool_call
from datagauntlet.frontdoors.live import InlineSteps, LiveEpisode


def test_only_envs_whose_steps_never_block_declare_fast_steps() -> None:
    declared = {e for e in dg.list_envs() if dg.make(e).registration.fast_steps}
    assert declared == {"dirty-integration"}


def test_an_error_in_an_inline_step_is_a_failed_future() -> None:
    future = InlineSteps().submit(lambda: 1 / 0)
    with pytest.raises(ZeroDivisionError):
        future.result()


@pytest.mark.parametrize("inline", [True, False])
def test_inline_and_threaded_play_alike(inline: bool) -> None:
    env = dg.make("dirty-integration", profile="hostile")
    policy = env.policies()["careful"]
    threads: set[int] = set()

    async def play() -> dict:
        live = await LiveEpisode.open(env, env.make_task("eval", 3), inline=inline)
        results: list[dict] = []
        while True:
            call = next_tool_call(policy, live.system_prompt, live.prompt, live.tool_specs, results)
            assert call is not None
            step = await live.call(call.name, call.arguments)
            threads.add(live.run_sync(lambda ep: threading.get_ident()) if not inline else 0)
            if step.score is not None:
                await live.close()
                return step.score.as_dict()
            results.append(step.result)

    score = asyncio.run(play())
    ep = env.episode(env.make_task("eval", 3))
    policy(ep)
    assert score == ep.score().as_dict()
    assert len(threads) == 1

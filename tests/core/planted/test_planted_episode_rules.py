"""The episode's own rules: a fresh one's state, which calls count as turns, the limits,
what a finished or closed episode answers, close and release (survivors of the from-scratch
mutation run, docs/mutation/)."""

from __future__ import annotations

import math

import pytest
from planted_envs import GuessConfig, GuessEnv, TickEnv, TickEpisode, tick_episode

from datagauntlet.core.episode import Task
from datagauntlet.core.limits import Limits


def test_a_fresh_episode_is_open_not_done_and_has_made_no_call() -> None:
    ep = tick_episode()
    assert (ep.done, ep.closed, ep.stop_reason) == (False, False, None)
    assert (ep.calls, ep.executed_calls, ep.max_calls) == (0, 0, None)
    assert ep.tool_names == ["tick"]


def test_executed_calls_are_turns_when_the_env_says_so_and_only_executed_ones() -> None:
    ep = tick_episode(3)
    ep.call("tick", {"n": -1})  # refused by the tool: not a turn
    ep.call("nope", {})  # unknown: not a turn
    ep.call("tick", {"n": 13})  # an internal error: not executed, not a turn
    assert ep.executed_calls == 0 and not ep.done
    ep.call("tick", {"n": 1})
    ep.call("tick", {"n": 2})
    assert ep.executed_calls == 2 and not ep.done
    ep.call("tick", {"n": 3})
    assert ep.done and ep.stop_reason == "turn limit" and ep.executed_calls == 3
    over = ep.call("tick", {"n": 4})
    assert over == {"error": "the episode is over (turn limit); no more tool calls"}
    # without the env's say-so, executed calls are not turns
    plain = GuessEnv(GuessConfig(max_turns=1))
    guess = plain.episode(plain.tasks("eval", 1)[0])
    guess.call("say", {"n": -1})
    assert guess.executed_calls == 0 and not guess.done


def test_more_episode_rules_each_logged_or_raised_as_stated() -> None:
    from datagauntlet.core.episode import EpisodeClosed

    ep = tick_episode(10)
    assert ep.call("tick", "   ") == {"error": "tick: missing required argument 'n'"}  # blank: {}
    ep.call("tick", {"n": math.nan})  # not plain JSON: refused under the tool's name
    ep.call("nope", {"n": 1})
    blank, not_plain, unknown = ep.log.entries
    assert (blank.tool, blank.args, unknown.tool, unknown.args) == ("tick", {}, "nope", {"n": 1})
    assert not_plain.tool == "tick" and not not_plain.executed
    ep.finish("enough")
    ep.call("tick", {"n": 1})
    after = ep.log.entries[-1]
    assert (after.tool, after.args, after.executed) == ("tick", {"n": 1}, False)
    assert after.summary == '{"error":"the episode is over (enough); no more tool calls"}'
    ep.close()
    with pytest.raises(EpisodeClosed) as caught:
        ep.score()
    assert str(caught.value) == "the episode was closed before it was scored"


def test_plain_envs_do_not_count_executed_calls_as_turns_and_backstops_are_set() -> None:
    class PlainTickEnv(TickEnv):
        limits = Limits(max_turns=1, max_calls=5)

    env = PlainTickEnv(GuessConfig(max_turns=1))
    ep = env.episode(env.tasks("eval", 1)[0])
    assert ep.max_calls == 5
    ep.call("tick", {"n": 1})
    ep.call("tick", {"n": 2})
    assert not ep.done and ep.executed_calls == 2  # counted, but not as turns


def test_a_failing_release_is_raised_by_close_once_everything_is_closed() -> None:
    class Leaky(TickEpisode):
        def release(self) -> None:
            raise OSError("could not release the world")

    class LeakyEnv(TickEnv):
        def episode(self, task: Task) -> Leaky:  # type: ignore[override]
            return Leaky(self, task)

    env = LeakyEnv(GuessConfig())
    ep = env.episode(env.tasks("eval", 1)[0])
    with pytest.raises(OSError, match=r"^could not release the world$"):
        ep.close()
    assert ep.closed


def test_an_episode_may_take_keyword_arguments_of_its_own() -> None:
    class Knobbed(TickEpisode):
        def __init__(self, env: TickEnv, task: Task, *, knob: int = 0) -> None:
            super().__init__(env, task)
            self.knob = knob

    env = TickEnv(GuessConfig())
    ep = Knobbed(env, env.tasks("eval", 1)[0], knob=7)
    assert ep.knob == 7 and ep.tool_names == ["tick"]


def test_a_lone_surrogate_in_what_an_episode_shows_is_hashed_not_raised() -> None:
    class Odd(TickEpisode):
        prompt = "tick \ud800 until told"  # type: ignore[assignment]

    class OddEnv(TickEnv):
        def episode(self, task: Task) -> Odd:  # type: ignore[override]
            return Odd(self, task)

    env = OddEnv(GuessConfig())
    task = env.tasks("eval", 1)[0]
    first, second = env.episode(task), env.episode(task)
    assert first.version_stamp() == second.version_stamp()

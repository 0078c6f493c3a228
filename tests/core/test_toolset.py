"""Toolsets: a tool is declared with its handler, toolsets own resources, episodes close."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest

from datagauntlet.core.config import EnvConfig
from datagauntlet.core.env import Environment, Policy
from datagauntlet.core.episode import Episode, EpisodeClosed, Task
from datagauntlet.core.score import Score
from datagauntlet.core.toolset import ToolError, Toolset, declared_tools, params, tool

WEIGHTS = {"done": 1.0}
EVENTS: list[str] = []


@dataclass(frozen=True)
class CounterConfig(EnvConfig):
    limit: int = 3
    fail_open: bool = False


class Counter(Toolset):
    """A toolset with a resource: a list that exists only while open."""

    def __init__(self, name: str, limit: int, fail_open: bool = False) -> None:
        self.name = name
        self.limit = limit
        self.fail_open = fail_open
        self.values: list[int] | None = None
        self.closes = 0

    def open(self) -> None:
        EVENTS.append(f"open {self.name}")
        if self.fail_open:
            raise OSError("no resource")
        self.values = []

    def close(self) -> None:
        EVENTS.append(f"close {self.name}")
        self.closes += 1
        self.values = None

    @tool(
        lambda self: f"Add one to the counter (at most {self.limit} times).",
        params({"by": {"type": "integer", "description": "step"}}, required=[]),
        mutates=True,
    )
    def bump(self, by: int = 1) -> dict[str, Any]:
        assert self.values is not None
        if len(self.values) >= self.limit:
            raise ToolError("counter is full")
        self.values.append(by)
        self.note(step=by)
        return {"total": sum(self.values)}

    @tool("Read the counter.", when=lambda self: self.limit > 1)
    def peek(self) -> dict[str, Any]:
        return {"values": list(self.values or [])}

    def state_digest(self) -> str:
        return repr(self.values)


class CounterEpisode(Episode[CounterConfig]):
    def __init__(self, env: Environment[CounterConfig], task: Task) -> None:
        super().__init__(env, task)
        self.counter = Counter("a", self.config.limit, self.config.fail_open)
        self.released = 0
        self.submitted = False

    def toolsets(self) -> list[Toolset]:
        return [self.counter]

    def release(self) -> None:
        EVENTS.append("release")
        self.released += 1

    system_prompt = "count"  # type: ignore[assignment]
    prompt = "bump then submit"  # type: ignore[assignment]

    @tool("Submit.", mutates=True)
    def submit(self) -> dict[str, Any]:
        self.submitted = True
        self.finish("submitted")
        return {"ok": True}

    @tool("Crash.")
    def crash(self) -> dict[str, Any]:
        raise KeyError("bug")

    def _grade(self) -> Score:
        return Score.build(WEIGHTS, {"done": float(self.submitted)})

    def fingerprint(self) -> str:
        return repr((self.submitted, self.toolset_digests()))


class CounterEnv(Environment[CounterConfig]):
    id = "counter"
    config_cls = CounterConfig
    weights = WEIGHTS

    def episode(self, task: Task) -> CounterEpisode:
        return CounterEpisode(self, task)

    def policies(self) -> dict[str, Policy]:
        return {"careful": lambda ep: (ep.call("bump"), ep.call("submit"))}  # type: ignore[dict-item]


def episode(**config: Any) -> CounterEpisode:
    env = CounterEnv(CounterConfig.build(**config))
    return env.episode(env.tasks("eval", 1)[0])


def test_tools_come_with_their_handlers_in_declaration_order() -> None:
    ep = episode()
    assert ep.tool_names == ["bump", "peek", "submit", "crash"]
    bump = ep.tool_specs[0]["function"]
    assert bump["description"] == "Add one to the counter (at most 3 times)."
    assert bump["parameters"]["required"] == []
    assert ep.call("bump", {"by": 2}) == {"total": 2}
    assert ep.log.entries[-1].detail == {"step": 2} and ep.log.entries[-1].executed
    assert ep.tools[0].mutates and not ep.tools[1].mutates


def test_a_tool_can_depend_on_its_owner() -> None:
    ep = episode(limit=1)
    assert ep.tool_names == ["bump", "submit", "crash"]  # peek needs limit > 1
    assert "at most 1 times" in ep.tool_specs[0]["function"]["description"]


def test_tool_specs_are_the_callers_to_edit() -> None:
    ep = episode()
    ep.tool_specs[0]["function"]["name"] = "hacked"
    assert ep.tool_specs[0]["function"]["name"] == "bump"


def test_refusals_and_handler_bugs_become_errors() -> None:
    ep = episode(limit=1)
    ep.call("bump")
    assert ep.call("bump") == {"error": "counter is full"}
    out = ep.call("crash")
    assert out["error"].startswith("internal error in crash: KeyError")
    assert [e.executed for e in ep.log.entries] == [True, False, False]
    assert ep.log.chain_intact()


def test_an_override_keeps_its_slot_and_a_plain_override_removes_the_tool() -> None:
    class Loud(Counter):
        @tool("Add, loudly.", params({}), mutates=True)
        def bump(self) -> dict[str, Any]:  # type: ignore[override]
            return {"total": "LOUD"}

        def peek(self) -> dict[str, Any]:  # no longer a tool
            return {}

    names = [b.tool.name for b in declared_tools(Loud("x", 3))]
    assert names == ["bump"]
    assert next(declared_tools(Loud("x", 3))).handler() == {"total": "LOUD"}


def test_two_toolsets_declaring_one_name_is_refused_and_releases_what_opened() -> None:
    class Twice(CounterEpisode):
        def toolsets(self) -> list[Toolset]:
            return [self.counter, Counter("dup", 2)]

    EVENTS.clear()
    env = CounterEnv()
    with pytest.raises(TypeError, match="'bump' is declared twice"):
        Twice(env, env.tasks("eval", 1)[0])
    assert EVENTS == ["open a", "open dup", "close dup", "close a", "release"]


def test_a_failed_open_closes_the_toolsets_already_opened() -> None:
    EVENTS.clear()
    with pytest.raises(OSError, match="no resource"):
        episode(fail_open=True)
    assert EVENTS == ["open a", "close a", "release"]


def test_close_releases_everything_once_and_refuses_calls_after() -> None:
    EVENTS.clear()
    ep = episode()
    ep.call("bump")
    ep.close()
    ep.close()
    assert EVENTS == ["open a", "close a", "release"]
    assert ep.counter.closes == 1 and ep.released == 1 and ep.counter.values is None
    before = len(ep.log)
    assert ep.call("submit") == {"error": "the episode is closed; no more tool calls"}
    assert ep.call("no_such", "{bad json") == {"error": "the episode is closed; no more tool calls"}
    assert len(ep.log) == before and not ep.submitted


def test_close_in_a_with_block() -> None:
    with episode() as ep:
        ep.call("submit")
    assert ep.closed


def test_score_after_close_is_the_last_score_or_an_error() -> None:
    ep = episode()
    ep.call("submit")
    taken = ep.score()
    ep.close()
    assert ep.score() is taken
    unscored = episode()
    unscored.call("bump")
    unscored.score()
    unscored.call("submit")  # changed since the last score
    unscored.close()
    with pytest.raises(EpisodeClosed, match="closed before it was scored"):
        unscored.score()


def test_a_failing_close_still_releases_the_rest() -> None:
    class Fragile(Toolset):
        def close(self) -> None:
            EVENTS.append("close fragile")
            raise OSError("disk gone")

    class WithFragile(CounterEpisode):
        def toolsets(self) -> list[Toolset]:
            return [self.counter, Fragile()]

    env = CounterEnv()
    ep = WithFragile(env, env.tasks("eval", 1)[0])
    EVENTS.clear()
    with pytest.raises(OSError, match="disk gone"):
        ep.close()
    assert EVENTS == ["close fragile", "close a", "release"]
    assert ep.closed
    ep.close()  # already closed: nothing runs twice
    assert EVENTS == ["close fragile", "close a", "release"]


def test_the_runner_closes_every_episode() -> None:
    from datagauntlet.core import runner

    EVENTS.clear()
    env = CounterEnv()
    results = runner.run(env, ["careful"], env.tasks("eval", 4))
    assert [r.reward for r in results] == [1.0] * 4
    assert EVENTS.count("release") == 4 == EVENTS.count("close a")


def test_a_refused_call_keeps_a_bounded_preview_of_what_it_was_sent() -> None:
    from datagauntlet.core.action_log import canonical_json
    from datagauntlet.core.call_text import REFUSED_ARGS_CHARS

    ep = episode()
    ep.call("no_such_tool", {"blob": "x" * 1_000_000})
    ep.call("bump", "{" + "y" * 1_000_000)
    ep.call("z" * 100_000, {})
    ep.call("bump", {"by": "small"})  # small refusals keep their arguments whole
    big, text, name, small = ep.log.entries
    assert big.args["_characters"] == len(canonical_json({"blob": "x" * 1_000_000}))
    assert len(canonical_json(big.args)) < REFUSED_ARGS_CHARS
    assert len(canonical_json(text.args)) < REFUSED_ARGS_CHARS and len(name.tool) <= 200
    assert small.args == {"by": "small"} and ep.log.chain_intact()


def test_parameters_that_depend_on_the_owner_are_made_for_each_owner() -> None:
    # A static description with per-owner parameters: each owner declares its own schema, and
    # a tool wholly static is the same object for every owner.
    class Sized(Toolset):
        def __init__(self, n: int) -> None:
            self.n = n

        @tool("Echo a short text.", lambda self: params({"q": {"maxLength": self.n}}))
        def echo(self, q: str) -> dict[str, Any]:
            return {"q": q}

        @tool("Say hello.")
        def hello(self) -> dict[str, Any]:
            return {}

    small, large = Sized(2), Sized(9)
    echo_small, hello_small = (b.tool for b in small.tools())
    echo_large, hello_large = (b.tool for b in large.tools())
    assert echo_small.parameters["properties"]["q"] == {"maxLength": 2}
    assert echo_large.parameters["properties"]["q"] == {"maxLength": 9}
    assert not echo_large.accepts({"q": "x" * 10}) and echo_large.accepts({"q": "x" * 9})
    assert hello_small is hello_large  # made once: nothing in it depends on the owner

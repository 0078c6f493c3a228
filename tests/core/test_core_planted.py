"""Core rules that survived planted bugs until these tests existed.

Planted by hand (issue 18) and by mutation testing (docs/mutation/): each test states one rule
of the seeding, the action log, tool declaration, scores or the episode's door, and fails when
that rule breaks.
"""

from __future__ import annotations

import dataclasses
import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from datagauntlet.core import seeding
from datagauntlet.core.action_log import GENESIS, ActionLog, _digest, canonical_json
from datagauntlet.core.call_text import loads_strict
from datagauntlet.core.config import EnvConfig
from datagauntlet.core.env import Environment, Policy
from datagauntlet.core.episode import Episode, Task
from datagauntlet.core.final_answer import FinalAnswer
from datagauntlet.core.limits import Limits
from datagauntlet.core.score import Score
from datagauntlet.core.seeding import Keyed, SecretMissing, hash64, task_seed, unit
from datagauntlet.core.toolset import ToolError, Toolset, params, tool

WEIGHTS = {"a": 0.5, "b": 0.5}


@pytest.mark.parametrize(("given", "kept"), [(1.7, 1.0), (-0.4, 0.0), (0.25, 0.25)])
def test_score_caps_every_component_value_to_unit_range(given: float, kept: float) -> None:
    s = Score.build(WEIGHTS, {"a": given, "b": 1.0})
    assert s.components["a"]["value"] == kept
    assert s.reward == pytest.approx(0.5 * kept + 0.5)
    assert 0.0 <= s.reward <= 1.0


def _log_of(n: int) -> ActionLog:
    log = ActionLog()
    for i in range(n):
        entry = log.open_entry("tool", {"i": i})
        log.close_entry(entry, True, f"ok {i}")
    return log


def test_renumbered_entries_with_a_rehashed_chain_are_not_intact() -> None:
    """Every hash recomputed after renumbering is still a forgery: seq must equal position."""
    log = _log_of(3)
    assert log.chain_intact()
    prev = GENESIS
    for i, entry in enumerate(log.entries):
        entry.seq = i + 1
        entry.prev_hash = prev
        # a closed entry no longer keeps its arguments' text: hash what chain_intact re-derives
        entry.hash = _digest(entry, canonical_json(entry.args))
        prev = entry.hash
    assert not log.chain_intact()
    for i, entry in enumerate(log.entries):  # the same forgery with the true numbers passes
        entry.seq = i
    prev = GENESIS
    for entry in log.entries:
        entry.prev_hash = prev
        entry.hash = _digest(entry, canonical_json(entry.args))
        prev = entry.hash
    assert log.chain_intact()


def test_entry_seq_is_its_position() -> None:
    log = _log_of(4)
    assert [e.seq for e in log.entries] == [0, 1, 2, 3]
    swapped = _log_of(2)
    a, b = swapped.entries
    swapped.entries = [dataclasses.replace(b), dataclasses.replace(a)]
    assert not swapped.chain_intact()


def test_two_draws_from_one_stream_differ() -> None:
    stream = Keyed(7).stream("label")
    draws = [stream.unit() for _ in range(200)]
    assert len(set(draws)) == len(draws)
    ints = Keyed(7).stream("label")
    assert len({ints.randint(0, 10**9) for _ in range(50)}) == 50
    tokens = Keyed(7).stream("label")
    assert tokens.token() != tokens.token()


def test_a_stream_draw_is_the_keyed_draw_of_its_label_and_position() -> None:
    keyed = Keyed(7)
    stream = keyed.stream("label")
    assert [stream.token(10) for _ in range(3)] == [keyed.token("label", i, 10) for i in range(3)]
    assert len(keyed.stream("label").token()) == 12 and len(keyed.stream("label").token(5)) == 5
    assert keyed.stream("a").token() != keyed.stream("b").token()
    ints = keyed.stream("n")
    assert [ints.randint(0, 10**6) for _ in range(3)] == [
        keyed.randint("n", i, 0, 10**6) for i in range(3)
    ]


def test_a_score_as_a_dict_names_its_three_parts() -> None:
    s = Score.build(WEIGHTS, {"a": 1.0, "b": 0.5}, {"m": 3})
    out = s.as_dict()
    assert out["reward"] == s.reward == 0.75
    assert out["components"] == s.components and out["metrics"] == {"m": 3}


SECRET = "a-secret-of-the-leaderboard-0001"


# --- seeding -------------------------------------------------------------------------------
def test_the_module_unit_is_the_hash_scaled_into_the_unit_interval() -> None:
    for i in range(200):
        u = unit("label", i)
        assert 0.0 <= u < 1.0
        assert u == hash64("label", i) / 2**64


def test_a_stream_uniform_stays_in_its_range_and_is_the_streams_unit() -> None:
    stream, twin = Keyed(7).stream("u"), Keyed(7).stream("u")
    for _ in range(200):
        x = stream.uniform(-3.0, 5.0)
        assert -3.0 <= x < 5.0
        assert x == pytest.approx(-3.0 + 8.0 * twin.unit(), abs=1e-12)
    assert {round(Keyed(1).stream("v").uniform(10.0, 10.0), 9)} == {10.0}


def test_a_stream_shuffle_is_the_keyed_shuffle_of_its_label_and_position() -> None:
    items = list(range(12))
    keyed = Keyed(11)
    stream = keyed.stream("order")
    first, second = stream.shuffled(items), stream.shuffled(items)
    assert first == keyed.shuffled("order#0", items)
    assert second == keyed.shuffled("order#1", items)
    assert sorted(first) == items and first != second
    assert keyed.stream("other").shuffled(items) != first  # the label keys it
    assert stream.token() == keyed.token("order", 2)  # a shuffle moves the counter by one


@pytest.fixture
def no_secret(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(seeding.SECRET_FILE_ENV, raising=False)
    monkeypatch.delenv(seeding.SECRET_ENV, raising=False)


def test_has_secret_says_whether_one_is_set(
    no_secret: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert not seeding.has_secret()
    monkeypatch.setenv(seeding.SECRET_ENV, SECRET)
    assert seeding.has_secret()


def test_a_secret_of_exactly_the_minimum_length_is_accepted(
    no_secret: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(seeding.SECRET_ENV, "k" * seeding.MIN_SECRET_BYTES)
    assert task_seed("dataclean", "private", 0) > 0
    monkeypatch.setenv(seeding.SECRET_ENV, "k" * (seeding.MIN_SECRET_BYTES - 1))
    with pytest.raises(SecretMissing, match="at least 16 bytes"):
        task_seed("dataclean", "private", 0)


def test_the_missing_secret_message_names_both_ways_to_give_one(no_secret: None) -> None:
    with pytest.raises(SecretMissing) as caught:
        task_seed("dataclean", "private", 0)
    assert str(caught.value) == (
        "held-out splits (private, private-train) need a secret: set DATAGAUNTLET_SECRET "
        "or pass --secret-file PATH"
    )


def test_an_empty_secret_file_is_refused_by_name(
    no_secret: None, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    empty = tmp_path / "empty"
    empty.write_text("  \n")
    monkeypatch.setenv(seeding.SECRET_FILE_ENV, str(empty))
    with pytest.raises(SecretMissing) as caught:
        task_seed("dataclean", "private", 0)
    assert str(caught.value) == f"the secret file {str(empty)!r} is empty"


def test_held_out_seeds_stay_what_they_were_for_a_given_secret(
    no_secret: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A leaderboard regenerates its private tasks from its secret: the key derivation (its
    # personalisation included) must never move them.
    monkeypatch.setenv(seeding.SECRET_ENV, SECRET)
    assert [task_seed("dataclean", "private", i) for i in range(2)] == PRIVATE_SEEDS
    assert seeding.split_key("dataclean", "private") == PRIVATE_SPLIT_KEY


PRIVATE_SEEDS = [1570820098733745426, 5807438047091872421]
PRIVATE_SPLIT_KEY = "private:5fef99dd0f1b04495d0f73cd126b5790"


# --- the action log ------------------------------------------------------------------------
def test_a_listed_entry_carries_every_field_and_its_hash() -> None:
    log = ActionLog()
    e = log.open_entry("peek", {"n": 1})
    log.close_entry(e, True, "seen", {"tables": ["t"]})
    f = log.open_entry("answer", {"n": 2})
    log.close_entry(f, False, "refused")
    listed = log.as_list()
    assert listed[0] == {
        "seq": 0,
        "tool": "peek",
        "args": {"n": 1},
        "executed": True,
        "summary": "seen",
        "detail": {"tables": ["t"]},
        "prev_hash": "genesis",
        "hash": e.hash,
    }
    assert listed[1]["prev_hash"] == e.hash and listed[1]["hash"] == f.hash
    assert json.loads(json.dumps(listed)) == listed


def test_executed_filters_by_tool_and_by_outcome() -> None:
    log = ActionLog()
    for tool_name, ran in [("a", True), ("b", True), ("a", False), ("a", True)]:
        log.close_entry(log.open_entry(tool_name, {}), ran, "")
    assert [e.seq for e in log.executed()] == [0, 1, 3]
    assert [e.seq for e in log.executed("a")] == [0, 3]
    assert [e.seq for e in log.executed("b")] == [1]
    assert log.executed("c") == []


# --- declaring tools -----------------------------------------------------------------------
def test_a_tool_declared_with_defaults_takes_no_arguments_and_does_not_mutate() -> None:
    class Box(Toolset):
        @tool("Look in the box.")
        def look(self) -> dict[str, Any]:
            return {"seen": True}

        @tool("Put a thing in.", params({"thing": {"type": "string"}}), mutates=True)
        def put(self, thing: str) -> dict[str, Any]:
            return {"put": thing}

        @tool("Only sometimes.", when=lambda self: False)
        def hidden(self) -> dict[str, Any]:
            return {}

    box = Box()
    tools = {b.tool.name: b.tool for b in box.tools()}
    assert set(tools) == {"look", "put"}  # `when` leaves hidden out
    look, put = tools["look"], tools["put"]
    assert look.description == "Look in the box." and not look.mutates
    assert look.parameters == params({})
    assert look.spec()["function"]["parameters"]["properties"] == {}
    assert put.mutates and put.parameters["properties"] == {"thing": {"type": "string"}}
    assert Box().state_digest() == ""  # a toolset without state has nothing to digest


# --- the episode's door --------------------------------------------------------------------
def test_duplicate_keys_are_refused_with_the_key_cut_and_values_kept() -> None:
    assert loads_strict('{"a": 1, "b": {"c": [2, 3]}}') == {"a": 1, "b": {"c": [2, 3]}}
    long = "k" * 50
    with pytest.raises(ValueError) as caught:
        loads_strict(f'{{"{long}": 1, "{long}": 2}}')
    assert str(caught.value) == f"duplicate key {'k' * 40!r} in one object"


GUESS_WEIGHTS = {"right": 1.0}


@dataclass(frozen=True)
class GuessConfig(EnvConfig):
    pass


class GuessEpisode(Episode[GuessConfig]):
    system_prompt = "guess"  # type: ignore[assignment]
    prompt = "say a number"  # type: ignore[assignment]

    def __init__(self, env: GuessEnv, task: Task) -> None:
        super().__init__(env, task)
        self.said: int | None = None

    @tool("Say the number.", params({"n": {"type": "integer"}}), mutates=True)
    def say(self, n: int) -> dict[str, Any]:
        if n < 0:
            raise ToolError("n must not be negative")
        self.said = n
        self.finish("said")
        return {"status": "received", "n": n}

    def _grade(self) -> Score:
        return Score.build(GUESS_WEIGHTS, {"right": float(self.said == 7)})

    def fingerprint(self) -> str:
        return repr(self.said)


def _read(text: str) -> dict[str, Any]:
    if not text.strip().isdigit():
        raise ValueError(f"not a number: {text[:20]!r}")
    return {"n": int(text)}


class GuessEnv(Environment[GuessConfig]):
    id = "guess"
    config_cls = GuessConfig
    weights = GUESS_WEIGHTS
    reference = "seven"
    declared: FinalAnswer | None = FinalAnswer("say", _read, lambda a: str(a["n"]))

    def episode(self, task: Task) -> GuessEpisode:
        return GuessEpisode(self, task)

    def policies(self) -> dict[str, Policy]:
        return {"seven": lambda ep: ep.call("say", {"n": 7})}

    @property
    def final_answer(self) -> FinalAnswer | None:
        return self.declared


def _episode(declared: FinalAnswer | None = GuessEnv.declared) -> GuessEpisode:
    env = GuessEnv(GuessConfig())
    env.declared = declared
    return env.episode(env.tasks("eval", 1)[0])


def test_a_final_answer_is_one_logged_checked_call_of_the_declared_tool() -> None:
    ep = _episode()
    assert ep.reads_final_answer
    assert ep.final_answer(" 7 ") == {"status": "received", "n": 7}
    assert ep.said == 7 and ep.done and ep.score().reward == 1.0
    [entry] = ep.log.entries
    assert (entry.tool, entry.args, entry.executed) == ("say", {"n": 7}, True)
    assert ep.executed_calls == 1
    assert ep.final_answer("8")["error"].startswith("the episode is over (said)")


def test_an_unreadable_final_answer_is_a_logged_refusal_that_changes_nothing() -> None:
    ep = _episode()
    before = ep.fingerprint()
    result = ep.final_answer("seven, I think")
    assert result == {"error": "the final answer is unreadable: not a number: 'seven, I think'"}
    [entry] = ep.log.entries
    assert (entry.tool, entry.args, entry.executed) == ("say", "seven, I think", False)
    assert ep.fingerprint() == before and not ep.done and ep.executed_calls == 0
    assert ep.final_answer("-3") == {"error": "the final answer is unreadable: not a number: '-3'"}
    assert len(ep.log.entries) == 2


def test_a_readable_final_answer_the_tool_refuses_is_logged_as_not_executed() -> None:
    env = GuessEnv(GuessConfig())
    env.declared = FinalAnswer("say", lambda text: {"n": int(text)}, lambda a: str(a["n"]))
    ep = env.episode(env.tasks("eval", 1)[0])
    assert ep.final_answer("-3") == {"error": "n must not be negative"}
    assert [(e.tool, e.args, e.executed) for e in ep.log.entries] == [("say", {"n": -3}, False)]
    assert ep.said is None and not ep.done


def test_without_a_declared_final_answer_a_final_message_is_not_a_submission() -> None:
    ep = _episode(None)
    assert not ep.reads_final_answer
    assert ep.final_answer("7") is None and ep.log.entries == [] and ep.said is None
    other = _episode(FinalAnswer("no_such_tool", _read, str))
    assert not other.reads_final_answer and other.final_answer("7") is None


def test_a_final_answer_after_close_changes_nothing() -> None:
    ep = _episode()
    ep.close()
    assert ep.final_answer("7") == {"error": "the episode is closed; no more tool calls"}
    assert ep.said is None and ep.log.entries == []


def test_an_unreadable_final_answer_counts_toward_the_call_limit() -> None:
    ep = _episode()
    ep.max_calls = 2
    ep.final_answer("x")
    assert not ep.done
    ep.final_answer("y")
    assert ep.done and ep.stop_reason == "call limit"


# --- scores and tool declarations ------------------------------------------------------------
def test_a_stamped_score_shows_its_stamp_and_an_unstamped_one_has_none() -> None:
    score = Score.build(GUESS_WEIGHTS, {"right": 0.5})
    assert "stamp" not in score.as_dict()
    stamp = {"package": "1", "env": "guess"}
    assert score.stamped(stamp).as_dict()["stamp"] == stamp


def _schema(**properties: dict[str, Any]) -> dict[str, Any]:
    return {"type": "object", "properties": properties}


@pytest.mark.parametrize(
    ("name", "description", "parameters", "problems"),
    [
        ("look_up", "Look.", _schema(), []),
        ("x" * 64, "Look.", _schema(), []),
        ("x" * 65, "Look.", _schema(), [f"tool name {'x' * 65!r} is not a valid function name"]),
        ("look-up", "Look.", _schema(), ["tool name 'look-up' is not a valid function name"]),
        ("_", "Look.", _schema(), ["tool name '_' is not a valid function name"]),
        ("look", "  ", _schema(), ["tool look has no description"]),
        (
            "look",
            "Look.",
            {"type": "array", "properties": {}},
            ["tool look: parameters must be an object schema with properties"],
        ),
        (
            "look",
            "Look.",
            {"type": "object"},
            ["tool look: parameters must be an object schema with properties"],
        ),
        (
            "look",
            "Look.",
            {**_schema(q={"type": "string", "description": "q"}), "required": ["q", "r"]},
            ["tool look: required 'r' is not a property"],
        ),
        (
            "look",
            "Look.",
            _schema(q={"description": "q"}, r={"type": "string"}),
            ["tool look: property 'q' has no type", "tool look: property 'r' has no description"],
        ),
    ],
)
def test_a_tool_declaration_is_checked_rule_by_rule(
    name: str, description: str, parameters: dict[str, Any], problems: list[str]
) -> None:
    from datagauntlet.core.tools import Tool, check_tool_schema

    assert check_tool_schema(Tool(name, description, parameters)) == problems


# --- what a refused call leaves in the log ---------------------------------------------------
def test_a_refused_call_with_text_that_is_not_json_logs_the_text_itself() -> None:
    ep = _episode()
    result = ep.call("say", '{"n": 7')
    assert result["error"].startswith("arguments are not valid JSON")
    [entry] = ep.log.entries
    assert (entry.tool, entry.args, entry.executed) == ("say", '{"n": 7', False)


def test_arguments_nested_too_deeply_are_refused_with_that_reason() -> None:
    ep = _episode()
    assert ep.call("say", "[" * 100_000) == {
        "error": "arguments are not valid JSON: nested too deeply"
    }
    with pytest.raises(ValueError, match=r"^nested too deeply$"):
        loads_strict("[" * 100_000)


def test_arguments_that_are_not_plain_json_are_logged_as_their_repr() -> None:
    ep = _episode()
    result = ep.call("say", {"n": float("nan")})
    assert result == {"error": "arguments must be plain JSON: no NaN, Infinity or deep nesting"}
    assert ep.log.entries[-1].args == "{'n': nan}"
    ep.call("say", {"n": object()})
    assert ep.log.entries[-1].args.startswith("{'n': <object object at 0x")
    json.dumps(ep.log.as_list(), allow_nan=False)  # the log itself stays plain JSON
    assert ep.log.chain_intact()


def test_a_long_repr_is_cut_to_the_summary_length() -> None:
    from datagauntlet.core.call_text import SUMMARY_CHARS

    ep = _episode()
    ep.call("say", {"n": [float("inf")] * 200})
    logged = ep.log.entries[-1].args
    assert len(logged) == SUMMARY_CHARS and logged.endswith("...")
    assert logged[:-3] == repr({"n": [float("inf")] * 200})[: SUMMARY_CHARS - 3]
    exact = {"n": "x" * (SUMMARY_CHARS - 19), "m": float("nan")}
    assert len(repr(exact)) == SUMMARY_CHARS
    ep.call("say", exact)
    assert ep.log.entries[-1].args == repr(exact)


def test_a_value_nested_too_deeply_to_repr_is_logged_by_its_type() -> None:
    deep: list[Any] = []
    for _ in range(100_000):
        deep = [deep]
    ep = _episode()
    assert "error" in ep.call("say", {"n": deep})
    assert ep.log.entries[-1].args == "<dict nested too deeply>"


def test_a_tool_name_that_is_not_text_is_logged_as_its_repr() -> None:
    ep = _episode()
    assert ep.call(12345, {})["error"].startswith("unknown tool '12345'")
    assert ep.log.entries[-1].tool == "12345"


def test_text_sha256_is_the_sha256_of_the_utf8_text_whatever_the_slice_size() -> None:
    import hashlib

    from datagauntlet.core.action_log import text_sha256

    text = "ab\u00e9\ud800cd" * 5  # a lone surrogate, which an agent may send
    want = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
    for chunk in (1, 2, 3, 7, 1 << 20):
        assert text_sha256(text, chunk) == want
    assert text_sha256("") == hashlib.sha256(b"").hexdigest()


def test_bound_newest_replaces_only_the_newest_entrys_oversized_arguments() -> None:
    from datagauntlet.core.action_log import text_sha256

    log = ActionLog()
    for _ in range(2):
        log.close_entry(log.open_entry("t", {"n": "y" * 300}), True, "ok")
    big = {"x": "a" * 500}
    entry = log.open_entry("t", big)
    log.bound_newest(100)
    text = json.dumps(big, sort_keys=True, separators=(",", ":"))
    assert entry.args == {
        "_preview": text[:50],
        "_characters": len(text),
        "_sha256": text_sha256(text),
    }
    log.close_entry(entry, False, "refused")
    assert [e.args for e in log.entries[:2]] == [{"n": "y" * 300}] * 2  # the older ones kept
    assert log.chain_intact()
    small = log.open_entry("t", {"x": 1})
    log.bound_newest(100)
    assert small.args == {"x": 1}
    log.close_entry(small, False, "refused")
    assert log.chain_intact()


def test_a_refused_call_logs_its_answer_and_a_long_tool_name_cut_to_the_bound() -> None:
    from datagauntlet.core.call_text import TOOL_NAME_CHARS, summarize

    ep = _episode()
    result = ep.call("say", '{"n": 7')
    assert ep.log.entries[-1].summary == summarize(result)
    for length in (TOOL_NAME_CHARS - 1, TOOL_NAME_CHARS, TOOL_NAME_CHARS + 1):
        for args in ({}, '{"n": 7'):  # arguments fine, or text that is not JSON
            ep.call("n" * length, args)
            logged = ep.log.entries[-1].tool
            if length <= TOOL_NAME_CHARS:
                assert logged == "n" * length
            else:
                cut = "n" * (TOOL_NAME_CHARS - 3) + "..."
                assert logged == cut and len(logged) == TOOL_NAME_CHARS
    assert ep.log.chain_intact()


# --- the episode's own rules (survivors of the from-scratch mutation run, docs/mutation/) ----
class TickEpisode(Episode[GuessConfig]):
    system_prompt = "tick"  # type: ignore[assignment]
    prompt = "tick until told to stop"  # type: ignore[assignment]

    @tool("Tick once.", params({"n": {"type": "integer"}}), mutates=True)
    def tick(self, n: int) -> dict[str, Any]:
        self.note(seen=n)  # noted before any refusal: a refused call keeps its notes
        if n < 0:
            raise ToolError("n must not be negative")
        if n == 13:
            raise KeyError("unlucky")  # a bug in the env: must not reach the agent
        return {"n": n, "text": "x" * n}

    def _grade(self) -> Score:
        return Score.build(GUESS_WEIGHTS, {"right": 0.0})

    def fingerprint(self) -> str:
        return ""


class TickEnv(GuessEnv):
    limits = Limits(max_turns=3, executed_calls_are_turns=True)

    def episode(self, task: Task) -> TickEpisode:  # type: ignore[override]
        return TickEpisode(self, task)


def _ticks(turns: int = 3) -> TickEpisode:
    env = TickEnv(GuessConfig(max_turns=turns))
    return env.episode(env.tasks("eval", 1)[0])


def test_a_fresh_episode_is_open_not_done_and_has_made_no_call() -> None:
    ep = _ticks()
    assert (ep.done, ep.closed, ep.stop_reason) == (False, False, None)
    assert (ep.calls, ep.executed_calls, ep.max_calls) == (0, 0, None)
    assert ep.tool_names == ["tick"]


def test_executed_calls_are_turns_when_the_env_says_so_and_only_executed_ones() -> None:
    ep = _ticks(3)
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


def test_each_logged_call_keeps_its_outcome_summary_and_notes() -> None:
    ep = _ticks(10)
    ep.call("tick", {"n": 2})
    ep.call("tick", {"n": -1})
    ep.call("tick", {"n": 13})
    ep.call("tick", "not json")
    done, refused, crashed, unreadable = ep.log.entries
    assert (done.executed, done.summary, done.detail) == (True, '{"n":2,"text":"xx"}', {"seen": 2})
    assert (refused.executed, refused.detail) == (False, {"seen": -1})
    assert refused.summary == '{"error":"n must not be negative"}'
    assert (crashed.executed, crashed.detail) == (False, {"internal_error": True})
    assert crashed.summary == '{"error":"internal error in tick: KeyError: \'unlucky\'"}'
    assert unreadable.tool == "tick" and unreadable.executed is False
    assert unreadable.summary.startswith('{"error":"arguments are not valid JSON')
    assert ep.log.chain_intact()


def test_a_long_result_is_summarized_to_the_summary_bound_with_a_visible_cut() -> None:
    from datagauntlet.core.call_text import SUMMARY_CHARS, summarize

    for size in range(SUMMARY_CHARS - 25, SUMMARY_CHARS + 5):
        result = {"s": "y" * size}
        full = canonical_json(result)
        got = summarize(result)
        if len(full) <= SUMMARY_CHARS:
            assert got == full, size
        else:
            assert got == full[: SUMMARY_CHARS - 3] + "...", size
            assert len(got) == SUMMARY_CHARS
    ep = _ticks(10)
    ep.call("tick", {"n": 1000})
    assert ep.log.entries[-1].summary == summarize({"n": 1000, "text": "x" * 1000})


def test_a_tool_name_of_exactly_the_bound_is_kept_and_a_longer_one_is_cut() -> None:
    from datagauntlet.core.call_text import TOOL_NAME_CHARS

    ep = _ticks(10)
    for name in ("t" * TOOL_NAME_CHARS, "t" * (TOOL_NAME_CHARS + 1)):
        ep.call(name, {})
    kept, cut = (e.tool for e in ep.log.entries)
    assert kept == "t" * TOOL_NAME_CHARS
    assert cut == "t" * (TOOL_NAME_CHARS - 3) + "..."


def test_a_tool_declared_twice_is_refused_naming_who_declared_it_again() -> None:
    class Twice(Toolset):
        @tool("Tick once.", params({"n": {"type": "integer"}}), mutates=False)
        def tick(self, n: int) -> dict[str, Any]:
            return {}

    class TwiceEpisode(TickEpisode):
        def toolsets(self) -> list[Toolset]:
            return [Twice()]

    class TwiceEnv(TickEnv):
        def episode(self, task: Task) -> TwiceEpisode:  # type: ignore[override]
            return TwiceEpisode(self, task)

    env = TwiceEnv(GuessConfig())
    with pytest.raises(TypeError) as caught:
        env.episode(env.tasks("eval", 1)[0])
    assert str(caught.value) == "tool 'tick' is declared twice (again by TwiceEpisode)"

    class TwoToolsets(TwiceEpisode):
        def toolsets(self) -> list[Toolset]:
            return [Twice(), Twice()]

    class TwoToolsetsEnv(TickEnv):
        def episode(self, task: Task) -> TwoToolsets:  # type: ignore[override]
            return TwoToolsets(self, task)

    env = TwoToolsetsEnv(GuessConfig())
    with pytest.raises(TypeError) as caught:
        env.episode(env.tasks("eval", 1)[0])
    assert str(caught.value) == "tool 'tick' is declared twice (again by Twice)"


def test_weights_must_sum_to_one_and_each_be_positive() -> None:
    from datagauntlet.core.score import check_weights

    check_weights({"a": 0.25, "b": 0.75})
    check_weights({"a": 0.1, "b": 0.2, "c": 0.7})  # a float sum within rounding of 1
    for weights in ({"a": 0.5}, {"a": 0.6, "b": 0.6}, {"a": 1.0 + 1e-6}):
        with pytest.raises(ValueError) as caught:
            check_weights(weights)
        assert str(caught.value) == f"component weights must sum to 1, got {sum(weights.values())}"
    for weights in ({"a": 1.0, "b": 0.0}, {"a": 1.5, "b": -0.5}):
        with pytest.raises(ValueError) as caught:
            check_weights(weights)
        assert str(caught.value) == "component weights must be positive"


def test_a_score_refuses_components_that_differ_from_its_weights_naming_them() -> None:
    weights = {"a": 0.5, "b": 0.5}
    cases = {
        "missing {'b'}, extra set()": {"a": 1.0},
        "missing set(), extra {'c'}": {"a": 1.0, "b": 1.0, "c": 1.0},
        "missing {'b'}, extra {'c'}": {"a": 1.0, "c": 1.0},
    }
    for named, values in cases.items():
        with pytest.raises(ValueError) as caught:
            Score.build(weights, values)
        assert str(caught.value) == f"components differ from weights: {named}"
    score = Score.build(weights, {"a": 1.0, "b": 0.25})
    assert score.components == {
        "a": {"value": 1.0, "weight": 0.5},
        "b": {"value": 0.25, "weight": 0.5},
    }
    assert score.reward == 0.625


# --- seeding: the edges of each draw -----------------------------------------------------------
def test_keyed_draws_at_their_edges() -> None:
    keyed = Keyed(11)
    u = keyed.unit("edge", 3)
    assert keyed.chance("edge", 3, u) is False  # unit < p: a draw equal to p is not a hit
    assert keyed.chance("edge", 3, math.nextafter(u, 1.0)) is True
    assert keyed.randint("r", 0, 5, 5) == 5  # a one-value range is that value
    for call, message in (
        (lambda: keyed.randint("r", 0, 5, 4), "empty range [5, 4]"),
        (lambda: keyed.choice("c", 0, []), "choice from an empty sequence"),
        (lambda: keyed.sample("s", [1, 2], 3), "sample of 3 from 2 items"),
    ):
        with pytest.raises(ValueError) as caught:
            call()
        assert str(caught.value) == message
    items = list(range(40))
    for k in (0, 1, 5, 40):
        assert keyed.sample("s", items, k) == keyed.shuffled("s", items)[:k]
    assert keyed.sample("s", items, 5) != items[:5]


def test_stream_draws_at_their_edges() -> None:
    first = Keyed(12).stream("edge").unit()
    assert Keyed(12).stream("edge").chance(first) is False
    assert Keyed(12).stream("edge").chance(math.nextafter(first, 1.0)) is True
    assert Keyed(12).stream("r").randint(3, 3) == 3
    stream = Keyed(12).stream("bad")
    for call, message in (
        (lambda: stream.randint(5, 4), "empty range [5, 4]"),
        (lambda: stream.choice([]), "choice from an empty sequence"),
    ):
        with pytest.raises(ValueError) as caught:
            call()
        assert str(caught.value) == message


def test_an_integer_index_draws_as_its_decimal_text_at_every_size() -> None:
    # The counter fast path must give the bytes the general path gives, up to its bounds.
    keyed = Keyed(13)
    for index in (0, 7, -7, 10**29, 10**30 - 1, 10**30, -(10**30) + 1, -(10**30), 10**31,
                  11**30, -(10**31), 10**40):  # fmt: skip
        assert keyed.unit("i", index) == keyed.unit("i", str(index)), index


def test_an_unknown_split_is_refused_naming_every_choice() -> None:
    from datagauntlet.core.seeding import ALL_SPLITS, check_split

    check_split("train")
    check_split("extra", ("extra",))
    with pytest.raises(ValueError) as caught:
        check_split("nope", ("extra",))
    assert (
        str(caught.value) == f"unknown split 'nope'; expected one of {', '.join(ALL_SPLITS)}, extra"
    )


def test_more_episode_rules_each_logged_or_raised_as_stated() -> None:
    from datagauntlet.core.episode import EpisodeClosed

    ep = _ticks(10)
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


def test_keyed_defaults_are_the_documented_ones() -> None:
    keyed = Keyed(14)
    assert keyed.unit("d") == keyed.unit("d", 0)
    assert keyed.tokens("t", 3) == [keyed.token("t", i, 12) for i in range(3)]
    assert all(len(t) == 12 for t in keyed.tokens("t", 3))

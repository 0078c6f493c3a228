"""What a call leaves in the episode's log, refused or not: its arguments as sent (or their
repr, cut), its tool name cut to the bound, its summary and notes (rules that survived planted
bugs and mutants, docs/mutation/)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from planted_envs import guess_episode, tick_episode

from datagauntlet.core.action_log import canonical_json
from datagauntlet.core.call_text import loads_strict


def test_duplicate_keys_are_refused_with_the_key_cut_and_values_kept() -> None:
    assert loads_strict('{"a": 1, "b": {"c": [2, 3]}}') == {"a": 1, "b": {"c": [2, 3]}}
    long = "k" * 50
    with pytest.raises(ValueError) as caught:
        loads_strict(f'{{"{long}": 1, "{long}": 2}}')
    assert str(caught.value) == f"duplicate key {'k' * 40!r} in one object"


def test_a_refused_call_with_text_that_is_not_json_logs_the_text_itself() -> None:
    ep = guess_episode()
    result = ep.call("say", '{"n": 7')
    assert result["error"].startswith("arguments are not valid JSON")
    [entry] = ep.log.entries
    assert (entry.tool, entry.args, entry.executed) == ("say", '{"n": 7', False)


def test_arguments_nested_too_deeply_are_refused_with_that_reason() -> None:
    ep = guess_episode()
    assert ep.call("say", "[" * 100_000) == {
        "error": "arguments are not valid JSON: nested too deeply"
    }
    with pytest.raises(ValueError, match=r"^nested too deeply$"):
        loads_strict("[" * 100_000)


def test_arguments_that_are_not_plain_json_are_logged_as_their_repr() -> None:
    ep = guess_episode()
    result = ep.call("say", {"n": float("nan")})
    assert result == {"error": "arguments must be plain JSON: no NaN, Infinity or deep nesting"}
    assert ep.log.entries[-1].args == "{'n': nan}"
    ep.call("say", {"n": object()})
    assert ep.log.entries[-1].args.startswith("{'n': <object object at 0x")
    json.dumps(ep.log.as_list(), allow_nan=False)  # the log itself stays plain JSON
    assert ep.log.chain_intact()


def test_a_long_repr_is_cut_to_the_summary_length() -> None:
    from datagauntlet.core.call_text import SUMMARY_CHARS

    ep = guess_episode()
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
    ep = guess_episode()
    assert "error" in ep.call("say", {"n": deep})
    assert ep.log.entries[-1].args == "<dict nested too deeply>"


def test_a_tool_name_that_is_not_text_is_logged_as_its_repr() -> None:
    ep = guess_episode()
    assert ep.call(12345, {})["error"].startswith("unknown tool '12345'")
    assert ep.log.entries[-1].tool == "12345"


def test_a_refused_call_logs_its_answer_and_a_long_tool_name_cut_to_the_bound() -> None:
    from datagauntlet.core.call_text import TOOL_NAME_CHARS, summarize

    ep = guess_episode()
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


def test_each_logged_call_keeps_its_outcome_summary_and_notes() -> None:
    ep = tick_episode(10)
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
    ep = tick_episode(10)
    ep.call("tick", {"n": 1000})
    assert ep.log.entries[-1].summary == summarize({"n": 1000, "text": "x" * 1000})


def test_a_tool_name_of_exactly_the_bound_is_kept_and_a_longer_one_is_cut() -> None:
    from datagauntlet.core.call_text import TOOL_NAME_CHARS

    ep = tick_episode(10)
    for name in ("t" * TOOL_NAME_CHARS, "t" * (TOOL_NAME_CHARS + 1)):
        ep.call(name, {})
    kept, cut = (e.tool for e in ep.log.entries)
    assert kept == "t" * TOOL_NAME_CHARS
    assert cut == "t" * (TOOL_NAME_CHARS - 3) + "..."

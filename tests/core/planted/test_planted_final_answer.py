"""A final message read as the declared tool's call: logged and checked like any call, and
nothing when no tool is declared (rules that survived planted bugs and mutants)."""

from __future__ import annotations

from planted_envs import GuessConfig, GuessEnv, guess_episode, read_number

from datagauntlet.core.final_answer import FinalAnswer


def test_a_final_answer_is_one_logged_checked_call_of_the_declared_tool() -> None:
    ep = guess_episode()
    assert ep.reads_final_answer
    assert ep.final_answer(" 7 ") == {"status": "received", "n": 7}
    assert ep.said == 7 and ep.done and ep.score().reward == 1.0
    [entry] = ep.log.entries
    assert (entry.tool, entry.args, entry.executed) == ("say", {"n": 7}, True)
    assert ep.executed_calls == 1
    assert ep.final_answer("8")["error"].startswith("the episode is over (said)")


def test_an_unreadable_final_answer_is_a_logged_refusal_that_changes_nothing() -> None:
    ep = guess_episode()
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
    ep = guess_episode(None)
    assert not ep.reads_final_answer
    assert ep.final_answer("7") is None and ep.log.entries == [] and ep.said is None
    other = guess_episode(FinalAnswer("no_such_tool", read_number, str))
    assert not other.reads_final_answer and other.final_answer("7") is None


def test_a_final_answer_after_close_changes_nothing() -> None:
    ep = guess_episode()
    ep.close()
    assert ep.final_answer("7") == {"error": "the episode is closed; no more tool calls"}
    assert ep.said is None and ep.log.entries == []


def test_an_unreadable_final_answer_counts_toward_the_call_limit() -> None:
    ep = guess_episode()
    ep.max_calls = 2
    ep.final_answer("x")
    assert not ep.done
    ep.final_answer("y")
    assert ep.done and ep.stop_reason == "call limit"

"""dataclean reads a final message as its program; the other envs read none."""

from __future__ import annotations

import json
from typing import Any

import pytest

import datagauntlet as dg
from datagauntlet.envs.dataclean.final_answer import read_program


class _Recorder:
    """Records the arguments of the oracle's submit_program."""

    def __init__(self, ep: Any) -> None:
        self.ep = ep
        self.submitted: dict[str, Any] | None = None

    def __getattr__(self, name: str) -> Any:
        return getattr(self.ep, name)

    def call(self, name: str, args: Any = None) -> dict[str, Any]:
        if name == "submit_program":
            self.submitted = args
        return self.ep.call(name, args)


def _oracle(env: Any, task: Any) -> tuple[dict[str, Any], float]:
    ep = env.episode(task)
    rec = _Recorder(ep)
    env.policies()["oracle"](rec)
    assert rec.submitted is not None
    return rec.submitted, ep.score().reward


@pytest.mark.parametrize("shape", ["object", "array", "fenced"])
def test_the_program_as_a_final_message_scores_as_the_tool_call(shape: str) -> None:
    env = dg.make("dataclean")
    for task in env.tasks("eval", 3):
        args, reward = _oracle(env, task)
        text = env.final_answer.write(args)
        if shape == "array":
            text = json.dumps(args["operations"])
        elif shape == "fenced":
            text = f"```json\n{text}\n```"
        ep = env.episode(task)
        assert ep.reads_final_answer
        out = ep.final_answer(text)
        assert out is not None and out["status"] == "accepted"
        assert ep.done and ep.score().reward == reward == 1.0
        assert [e.tool for e in ep.log.entries] == ["submit_program"]


@pytest.mark.parametrize(
    "text", ["I would strip the names.", '{"operations": 3}', '{"ops": []}', "[1, 2", ""]
)
def test_an_unreadable_final_message_is_refused_and_logged(text: str) -> None:
    env = dg.make("dataclean")
    ep = env.episode(env.tasks("eval", 1)[0])
    before = ep.fingerprint()
    out = ep.final_answer(text)
    assert out is not None and "error" in out
    assert not ep.done and ep.fingerprint() == before and ep.score().reward == 0.0
    (entry,) = ep.log.entries
    assert entry.tool == "submit_program" and not entry.executed


def test_a_final_message_after_the_submission_changes_nothing() -> None:
    env = dg.make("dataclean")
    task = env.tasks("eval", 1)[0]
    args, reward = _oracle(env, task)
    ep = env.episode(task)
    ep.call("submit_program", args)
    out = ep.final_answer(json.dumps([]))
    assert out is not None and "episode is over" in out["error"]
    assert ep.score().reward == reward


def test_read_program_refuses_duplicate_keys() -> None:
    with pytest.raises(ValueError, match="duplicate key"):
        read_program('{"operations": [], "operations": []}')


@pytest.mark.parametrize("env_id", ["bad-batch-gate", "dirty-integration"])
def test_other_envs_read_no_final_message(env_id: str) -> None:
    env = dg.make(env_id)
    ep = env.episode(env.tasks("eval", 1)[0])
    assert not ep.reads_final_answer
    assert ep.final_answer('{"records": []}') is None
    assert len(ep.log) == 0


def test_the_declaration_is_the_envs() -> None:
    assert dg.make("dataclean").final_answer.tool == "submit_program"
    assert dg.make("dirty-integration").final_answer is None

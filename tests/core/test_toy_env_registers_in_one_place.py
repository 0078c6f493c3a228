"""A fifth env takes one folder and one registration: the toy env in tests/core/toyland."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

import datagauntlet as dg
from datagauntlet.core import registry
from datagauntlet.core.runner import calibrate


@pytest.fixture
def toyland() -> Iterator[None]:
    registry.add_env_package("toyland")
    try:
        yield
    finally:
        registry.remove_env_package("toyland")


def test_the_toy_env_is_listed_made_and_passes_check_env(toyland: None) -> None:
    assert "toy-guess" in dg.list_envs()
    env = dg.make("toy-guess", ceiling=50)
    assert env.id == "toy-guess" and env.reference == "peek-then-answer"
    assert env.max_turns == 4 and env.config.max_turns == 4
    report = dg.check_env(env)
    assert report.passed and "every declared tool has a handler" in report.names()
    rows = calibrate(env)
    assert {r.policy: r.mean_reward for r in rows}["peek-then-answer"] == 1.0


def test_the_toy_envs_limits_come_from_its_registration(toyland: None) -> None:
    env = dg.make("toy-guess")
    ep = env.episode(env.tasks()[0])
    assert ep.max_calls == 12
    while not ep.done and ep.calls < 20:
        ep.call("peek")
    assert ep.done and ep.stop_reason == "call limit" and ep.calls == 12
    with pytest.raises(ValueError, match=r"max_turns must be in 1..8, got 9"):
        dg.make("toy-guess", max_turns=9)


def test_without_its_package_the_toy_env_does_not_exist() -> None:
    assert "toy-guess" not in dg.list_envs()
    with pytest.raises(ValueError, match="unknown environment 'toy-guess'"):
        dg.make("toy-guess")

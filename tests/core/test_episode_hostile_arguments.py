"""`Episode.call` on every registered env never raises for hostile argument text, and the
action log survives anything JSON can carry."""

from __future__ import annotations

import math

import pytest

import datagauntlet as dg


def nested_dict(depth: int) -> dict[str, object]:
    out: dict[str, object] = {}
    cur = out
    for _ in range(depth):
        cur["a"] = {}
        cur = cur["a"]  # type: ignore[assignment]
    return out


HOSTILE = [
    ("[" * 100_000, "nested too deeply"),
    ('{"x": 1, "x": 2}', "duplicate key 'x'"),
    ('{"x": NaN}', "NaN is not a JSON number"),
    ('{"x": -Infinity}', "Infinity is not a JSON number"),
    (nested_dict(5_000), "plain JSON"),
    ({"x": math.nan}, "plain JSON"),
    ({"x": {1, 2}}, "plain JSON"),
]


@pytest.mark.parametrize("env_id", dg.list_envs())
@pytest.mark.parametrize(("args", "fragment"), HOSTILE, ids=[f"h{i}" for i in range(len(HOSTILE))])
def test_hostile_arguments_are_refused_not_raised(env_id: str, args: object, fragment: str) -> None:
    env = dg.make(env_id)
    ep = env.episode(env.tasks("eval", 1)[0])
    before = ep.fingerprint()
    for tool in ep.tool_names:
        out = ep.call(tool, args)
        assert fragment in out["error"]
    assert ep.fingerprint() == before and ep.log.chain_intact()
    assert not any(e.executed for e in ep.log.entries)


@pytest.mark.parametrize("env_id", dg.list_envs())
def test_a_lone_surrogate_is_logged_not_raised(env_id: str) -> None:
    env = dg.make(env_id)
    ep = env.episode(env.tasks("eval", 1)[0])
    out = ep.call(ep.tool_names[0], '{"\\ud800": 1}')
    assert "error" in out and ep.log.chain_intact()

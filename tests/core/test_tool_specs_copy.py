"""`Episode.tool_specs` hands every caller its own copy: a session or rollout that edits the
specs it was given must not change what the episode or the next caller sees."""

from __future__ import annotations

import copy
from collections import OrderedDict
from typing import Any

import pytest

import datagauntlet as dg
from datagauntlet.core.call_text import fresh_copy


def containers(value: Any) -> list[Any]:
    """Every dict and list in `value`, depth first."""
    out: list[Any] = []
    if isinstance(value, (dict, list)):
        out.append(value)
        for item in value.values() if isinstance(value, dict) else value:
            out += containers(item)
    return out


@pytest.mark.parametrize("env_id", sorted(dg.list_envs()))
def test_tool_specs_are_equal_and_share_no_container_with_the_episode(env_id: str) -> None:
    env = dg.make(env_id)
    ep = env.episode(env.tasks("eval", 1)[0])
    try:
        given = ep.tool_specs
        assert given == ep._specs
        own = {id(c) for c in containers(ep._specs)}
        assert not own & {id(c) for c in containers(given)}
        given[0]["function"]["parameters"]["properties"].clear()
        given[0]["function"]["name"] = "edited"
        assert ep.tool_specs == copy.deepcopy(ep._specs) != given
        assert ep.tool_specs[0]["function"]["name"] != "edited"
    finally:
        ep.close()


def test_the_copy_keeps_types_and_sharing_as_deepcopy_does() -> None:
    shared = {"type": "string"}
    value = [{"a": shared, "b": shared, "t": (1, 2.5, None, True), "x": b"\x00"}, [shared]]
    copied = fresh_copy(value)
    assert copied == value == copy.deepcopy(value)
    assert copied[0]["a"] is copied[0]["b"] is copied[1][0] and copied[0]["a"] is not shared
    assert type(copied[0]["t"]) is tuple and type(copied[0]["t"][3]) is bool


def test_what_marshal_cannot_write_is_deep_copied() -> None:
    class Note:
        def __init__(self, text: str) -> None:
            self.text = text

    odd = [OrderedDict(a=[1]), {"n": Note("x")}]
    copied = fresh_copy(odd)
    assert type(copied[0]) is OrderedDict and copied[0] == odd[0] and copied[0] is not odd[0]
    assert copied[1]["n"] is not odd[1]["n"] and copied[1]["n"].text == "x"

"""Drive a policy from a message history, so any policy can stand in for a model.

A policy sees only the prompts, the tool specs and the results of its own calls. Replaying the
results it already got, in order, therefore brings it back to the same point, and its next
`call` is the next tool call a model would make. No env needs code of its own for this.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from datagauntlet.core.env import Policy


@dataclass(frozen=True)
class ToolCall:
    name: str
    arguments: dict[str, Any]


class _NextCall(Exception):
    def __init__(self, call: ToolCall) -> None:
        self.call = call


class ReplayEpisode:
    """The agent-visible surface of an episode, answering calls from recorded results."""

    def __init__(
        self,
        system_prompt: str,
        prompt: str,
        tool_specs: list[dict[str, Any]],
        results: Sequence[dict[str, Any]],
    ) -> None:
        self.system_prompt = system_prompt
        self.prompt = prompt
        self.tool_specs = tool_specs
        self._results = list(results)
        self._next = 0
        self.done = False  # only the real env knows; policies end on their own submit

    def call(self, name: str, args: dict[str, Any] | None = None) -> dict[str, Any]:
        if self._next >= len(self._results):
            raise _NextCall(ToolCall(name, dict(args or {})))
        result = self._results[self._next]
        self._next += 1
        return json.loads(json.dumps(result))  # a fresh copy, as if it came over the wire


def next_tool_call(
    policy: Policy,
    system_prompt: str,
    prompt: str,
    tool_specs: list[dict[str, Any]],
    results: Sequence[dict[str, Any]],
) -> ToolCall | None:
    """The call the policy makes after seeing `results`, or None when it has finished."""
    episode = ReplayEpisode(system_prompt, prompt, tool_specs, results)
    try:
        policy(episode)  # type: ignore[arg-type]
    except _NextCall as nxt:
        return nxt.call
    return None

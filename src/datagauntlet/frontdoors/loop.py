"""The agent loop: a model, an episode, and tool calls between them, one turn at a time.

A turn is one model call. The loop ends when the episode is done, when `max_turns` model calls
have been made, or when the model answers without a tool call (that answer is the env's final
answer when it declares one: dataclean reads it as the program). Every tool call, malformed ones
included, goes through `Episode.call` with its arguments exactly as the model wrote them; bad
JSON and unknown tools are answered with an error that is sent back to the model, as a real API
would, and logged.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Protocol

from datagauntlet.core.env import Environment
from datagauntlet.frontdoors.chat import Message, text_of, tool_result_message
from datagauntlet.frontdoors.live import LiveEpisode

STOP_DONE = "episode_done"
STOP_MAX_TURNS = "max_turns"
STOP_NO_TOOL_CALL = "no_tool_call"
STOP_FINAL_ANSWER = "final_answer"


@dataclass
class Usage:
    prompt_tokens: int = 0
    completion_tokens: int = 0

    def add(self, other: Any) -> None:
        """Add an endpoint's usage; a field that is not a count ("lots", 1e999) counts 0,
        so a bookkeeping oddity never fails a rollout that finished."""
        if isinstance(other, dict):
            self.prompt_tokens += token_count(other.get("prompt_tokens"))
            self.completion_tokens += token_count(other.get("completion_tokens"))

    def as_dict(self) -> dict[str, int]:
        return {
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "total_tokens": self.prompt_tokens + self.completion_tokens,
        }


def token_count(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return 0
    if isinstance(value, float) and not math.isfinite(value):
        return 0
    return max(0, int(value))


def scrub_text(value: Any) -> Any:
    """`value` with lone surrogates replaced by U+FFFD, in every string it holds.

    JSON text may carry `\\ud800` on its own; Python decodes it into a str that cannot be
    encoded as UTF-8, so the next request, which sends the history back, would fail.
    """
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return value.encode("utf-8", "surrogatepass").decode("utf-8", "replace")
        return value
    if isinstance(value, dict):
        return {scrub_text(k): scrub_text(v) for k, v in value.items()}
    if isinstance(value, list):
        return [scrub_text(v) for v in value]
    return value


@dataclass(frozen=True)
class Reply:
    message: Message
    usage: dict[str, Any] | None = None


class Model(Protocol):
    async def complete(self, messages: list[Message], tools: list[dict[str, Any]]) -> Reply: ...


@dataclass
class LoopResult:
    messages: list[Message]
    stop: str = ""
    turns: int = 0
    usage: Usage = field(default_factory=Usage)
    final_answer: dict[str, Any] | None = None  # what the env answered to the final message


def max_turns_of(env: Environment[Any], override: int | None = None) -> int:
    """Model turns a door allows: the override, else the env's (its config within its limits)."""
    return override if override is not None else env.max_turns


def opening_messages(live: LiveEpisode) -> list[Message]:
    return [
        {"role": "system", "content": live.system_prompt},
        {"role": "user", "content": live.prompt},
    ]


async def run_loop(live: LiveEpisode, model: Model, max_turns: int, result: LoopResult) -> None:
    """Play `live` with `model`, filling `result` as it goes (so a failure keeps what happened).

    Every step runs on the episode's own thread (see live.py): an env's tools may do real work
    (SQLite, sandboxes) and must not stall other rollouts sharing the event loop.
    """
    tools = live.tool_specs
    result.messages[:] = opening_messages(live)
    while True:
        if live.done:
            result.stop = STOP_DONE
            return
        if result.turns >= max_turns:
            result.stop = STOP_MAX_TURNS
            return
        reply = await model.complete(result.messages, tools)
        result.turns += 1
        result.usage.add(reply.usage)
        message = dict(scrub_text(reply.message))
        message["role"] = "assistant"
        result.messages.append(message)
        calls = message.get("tool_calls") or []
        if not calls:
            step = await live.answer(text_of(message.get("content")))
            if step is None:
                result.stop = STOP_NO_TOOL_CALL
            else:
                result.final_answer = step.result
                result.stop = STOP_FINAL_ANSWER
            return
        for i, call in enumerate(calls):
            call_id, name, arguments = _unpack(call, i)
            step = await live.call(name, arguments)
            result.messages.append(tool_result_message(call_id, step.result))


def _unpack(call: Any, index: int) -> tuple[str, Any, Any]:
    """(id, name, raw arguments) of a tool call, tolerating shapes a model gets wrong."""
    if not isinstance(call, dict):
        return f"call_{index}", None, None
    fn = call.get("function") if isinstance(call.get("function"), dict) else {}
    return str(call.get("id") or f"call_{index}"), fn.get("name"), fn.get("arguments")

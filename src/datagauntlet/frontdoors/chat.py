"""OpenAI chat-format helpers shared by the agent loop, the scripted model and the harnesses.

The scripted model is a policy driven from a message history: the tool results in the history,
in order, are exactly the results the policy got from its own calls, so replaying them brings it
back to the point where it makes its next call (see core/replay.py).
"""

from __future__ import annotations

import json
from typing import Any

from datagauntlet.core.env import Policy
from datagauntlet.core.final_answer import FinalAnswer
from datagauntlet.core.replay import next_tool_call

Message = dict[str, Any]


def text_of(content: Any) -> str:
    """The text of a message's content, which may be a string or a list of parts."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(
            part.get("text", "") if isinstance(part, dict) else str(part) for part in content
        )
    return str(content)


def tool_result_message(call_id: str, result: dict[str, Any]) -> Message:
    return {"role": "tool", "tool_call_id": call_id, "content": json.dumps(result)}


def parse_result(content: Any) -> dict[str, Any]:
    """A tool message's content back as the dict the tool returned."""
    text = text_of(content)
    try:
        value = json.loads(text)
    except ValueError:
        return {"error": text}
    return value if isinstance(value, dict) else {"result": value}


def first_text(messages: list[Message], role: str) -> str:
    for m in messages:
        if m.get("role") == role:
            return text_of(m.get("content"))
    return ""


def function_specs(tools: list[dict[str, Any]] | None) -> list[dict[str, Any]]:
    """Tool specs in OpenAI function form, whatever shape the request sent."""
    out = []
    for tool in tools or []:
        if isinstance(tool, dict) and "function" in tool:
            out.append(tool)
        elif isinstance(tool, dict) and "name" in tool:
            out.append({"type": "function", "function": tool})
    return out


def policy_reply(
    policy: Policy,
    messages: list[Message],
    tools: list[dict[str, Any]],
    final_answer: FinalAnswer | None = None,
) -> Message:
    """The assistant message a policy sends after this history: one tool call, or plain text
    when the policy has finished. Nothing but the messages and tools is consulted.

    With `final_answer` (the env's declaration), the policy's call of the declared tool is
    answered as a model would write it without tools: the text, and no tool call."""
    results = [parse_result(m.get("content")) for m in messages if m.get("role") == "tool"]
    try:
        call = next_tool_call(
            policy,
            first_text(messages, "system"),
            first_text(messages, "user"),
            function_specs(tools),
            results,
        )
    except Exception as exc:  # a policy that breaks on this history answers in words
        return {"role": "assistant", "content": f"policy stopped: {type(exc).__name__}: {exc}"}
    if call is None:
        return {"role": "assistant", "content": "Done."}
    if final_answer is not None and call.name == final_answer.tool:
        return {"role": "assistant", "content": final_answer.write(call.arguments)}
    return {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": f"call_{len(results)}",
                "type": "function",
                "function": {"name": call.name, "arguments": json.dumps(call.arguments)},
            }
        ],
    }


def rough_tokens(value: Any) -> int:
    """A stand-in token count for the scripted model (about four characters a token)."""
    return max(1, len(json.dumps(value, default=str)) // 4)

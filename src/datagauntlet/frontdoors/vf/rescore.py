"""A saved rollout's score, rebuilt from what verifiers saves (for `vf-replay`).

verifiers writes no `State` to traces.jsonl, so a replayed trace carries no score. It does
keep the task data (env, config, a public task's seed or a held-out task's ref) and every
assistant message with its tool calls' arguments exactly as the model wrote them. A fresh
world of that task, those calls replayed in order through `Episode.call`, and the final
answer read as at every door, give the world the rollout left, and so its score: worlds are
deterministic in their seed and in the calls they receive.
"""

from __future__ import annotations

from typing import Any

from datagauntlet.core.env import Environment
from datagauntlet.core.episode import Task
from datagauntlet.core.score import Score
from datagauntlet.frontdoors.chat import text_of


def final_answer_of(trace: Any) -> str | None:
    """The text of the model's last reply when it called no tool (the env reads it as its
    final answer if it declares one), as `datagauntlet eval` reads it."""
    replies = trace.assistant_messages
    if not replies or replies[-1].tool_calls:
        return None
    return text_of(replies[-1].content)


def replay_score(env: Environment[Any], task: Task, trace: Any) -> Score:
    ep = env.episode(task)
    try:
        for message in trace.assistant_messages:
            for call in message.tool_calls or []:
                ep.call(call.name, call.arguments)
        answer = final_answer_of(trace)
        if answer is not None and not ep.done:
            ep.final_answer(answer)
        return ep.score()
    finally:
        ep.close()

"""A scripted model behind a real OpenAI-compatible endpoint, for tests, demos and benchmarks.

`POST /v1/chat/completions` answers with the next tool call of one of an env's policies,
decided by replaying the request's message history into it (see chat.policy_reply): the same
history always gets the same answer, and nothing but the request is consulted. JSON and SSE
streaming are both served. The request's `model` picks a policy by name; the name `default`
picks the server's default policy (the env's reference unless told otherwise), and any other
name is refused with a 404 listing what is served (a typo must not quietly play the reference).
With `final_answer=True`, for an env that reads a final message as its submission (dataclean),
the policy's submitting call is sent as that text instead of a tool call, as a model answering
in words would.

Standard library only, bound to 127.0.0.1 by default. Every connection is a coroutine on one
asyncio loop (http_json_aio), under the rules of the other stdlib doors: an eval holds hundreds
of connections open, and a thread each would cost the mock several times its answers' CPU.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterable, Sequence
from typing import Any

from datagauntlet.core.env import Environment, Policy, policy_sees_truth
from datagauntlet.frontdoors.chat import Message, policy_reply, rough_tokens
from datagauntlet.frontdoors.http_json import HttpError
from datagauntlet.frontdoors.http_json_aio import (
    AioJsonServer,
    JsonReply,
    Reply,
    Request,
    StreamReply,
)

MAX_BODY_BYTES = 64 * 1024 * 1024
DEFAULT_MODEL = "default"


class MockModelServer:
    def __init__(
        self,
        env: Environment,
        policy: str | None = None,
        host: str = "127.0.0.1",
        port: int = 0,
        final_answer: bool = False,
        script: Sequence[Message] | None = None,
        socket_timeout: float = 30.0,
        allow_hosts: Iterable[str] = (),
        allow_origins: Iterable[str] = (),
    ) -> None:
        policies = env.policies()
        self.default = policy or env.reference
        if self.default not in policies:
            raise ValueError(
                f"{env.id} has no policy {self.default!r}; choose from {sorted(policies)}"
            )
        if policy_sees_truth(policies[self.default]):
            raise ValueError(
                f"policy {self.default!r} sees the hidden truth; it cannot play a model"
            )
        # Oracles read the truth from the world, which a model endpoint never has.
        self.policies = {k: p for k, p in policies.items() if not policy_sees_truth(p)}
        self.env_id = env.id
        self.final_answer = env.final_answer if final_answer else None
        if final_answer and self.final_answer is None:
            raise ValueError(f"{env.id} does not read a final message as its submission")
        # a fixed trajectory instead of a policy: the reply after k assistant messages is
        # script[k] (tests play one trajectory, malformed calls included, through every door)
        self.script = [dict(m) for m in script] if script is not None else None
        self.requests = 0
        self._lock = threading.Lock()
        self._httpd = _Server(self, host, port, socket_timeout, allow_hosts, allow_origins)

    @property
    def port(self) -> int:
        return int(self._httpd.server_address[1])

    @property
    def base_url(self) -> str:
        return f"http://{self._httpd.server_address[0]}:{self.port}/v1"

    @property
    def model_names(self) -> list[str]:
        return [DEFAULT_MODEL, *self.policies]

    def policy_for(self, model: Any) -> tuple[str, Policy]:
        """The policy a request's `model` names; HttpError 404 for a name not served."""
        if model == DEFAULT_MODEL:
            return self.default, self.policies[self.default]
        if isinstance(model, str) and model in self.policies:
            return model, self.policies[model]
        shown = repr(model)[:80]
        raise HttpError(
            404, f"model {shown} is not served here; models: {', '.join(self.model_names)}"
        )

    def start(self) -> MockModelServer:
        self._httpd.start()
        return self

    def serve_forever(self) -> None:
        self._httpd.serve_forever()

    def close(self) -> None:
        self._httpd.close()

    def stop(self) -> None:
        self._httpd.stop()

    def __enter__(self) -> MockModelServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def complete(self, body: dict[str, Any]) -> dict[str, Any]:
        """A chat.completion object for one request body."""
        messages = body.get("messages")
        if not isinstance(messages, list) or not all(isinstance(m, dict) for m in messages):
            raise HttpError(400, "messages must be a list of message objects")
        tools = body.get("tools") if isinstance(body.get("tools"), list) else []
        if self.script is not None:  # a fixed trajectory answers whatever model is named
            name = str(body.get("model"))[:80]
            turn = sum(1 for m in messages if m.get("role") == "assistant")
            done = {"role": "assistant", "content": "Done."}
            message = self.script[turn] if turn < len(self.script) else done
        else:
            name, policy = self.policy_for(body.get("model"))
            message = policy_reply(policy, messages, tools, self.final_answer)
        with self._lock:
            self.requests += 1
            serial = self.requests
        prompt_tokens, completion_tokens = rough_tokens(messages), rough_tokens(message)
        return {
            "id": f"chatcmpl-mock-{serial}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": name,
            "choices": [
                {
                    "index": 0,
                    "message": message,
                    "finish_reason": "tool_calls" if message.get("tool_calls") else "stop",
                }
            ],
            "usage": {
                "prompt_tokens": prompt_tokens,
                "completion_tokens": completion_tokens,
                "total_tokens": prompt_tokens + completion_tokens,
            },
        }


def stream_chunks(completion: dict[str, Any]) -> list[dict[str, Any]]:
    """The SSE chunks of a completion: the message as one delta, a finish, then usage."""
    choice = completion["choices"][0]
    message = choice["message"]
    delta: dict[str, Any] = {"role": "assistant", "content": message.get("content")}
    if message.get("tool_calls"):
        delta["tool_calls"] = [{"index": i, **c} for i, c in enumerate(message["tool_calls"])]
    base = {k: completion[k] for k in ("id", "created", "model")}
    base["object"] = "chat.completion.chunk"
    return [
        {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]},
        {**base, "choices": [{"index": 0, "delta": {}, "finish_reason": choice["finish_reason"]}]},
        {**base, "choices": [], "usage": completion["usage"]},
    ]


class _Server(AioJsonServer):
    MAX_BODY_BYTES = MAX_BODY_BYTES
    ROUTES = ("POST /v1/chat/completions", "GET /v1/models", "GET /health")

    def __init__(
        self,
        owner: MockModelServer,
        host: str,
        port: int,
        timeout: float,
        allow_hosts: Iterable[str],
        allow_origins: Iterable[str],
    ) -> None:
        super().__init__(host, port, timeout, allow_hosts, allow_origins)
        self.owner = owner

    def error_body(self, status: int, message: str) -> dict[str, Any]:
        kind = "not_found_error" if status == 404 else "invalid_request_error"
        return {"error": {"message": message, "type": kind, "code": status}}

    async def respond(self, request: Request) -> Reply:
        path = request.path.rstrip("/")
        if request.method == "GET":
            return self._get(request.path)
        if path not in ("/v1/chat/completions", "/chat/completions"):
            raise HttpError(404, f"no route POST {request.path[:200]}{self.routes_hint()}")
        body = await request.read_json()
        if not isinstance(body, dict):
            raise HttpError(400, "the body must be a JSON object")
        stream = body.get("stream")
        options = body.get("stream_options")
        if options is not None and not isinstance(options, dict):
            raise HttpError(400, 'stream_options must be an object, e.g. {"include_usage": true}')
        try:
            completion = self.owner.complete(body)
        except ValueError as exc:
            raise HttpError(400, str(exc)) from None
        if not stream:
            return JsonReply(200, completion)
        chunks = stream_chunks(completion)
        if not (options or {}).get("include_usage"):
            chunks = chunks[:-1]
        parts = [f"data: {json.dumps(chunk)}\n\n".encode() for chunk in chunks]
        parts.append(b"data: [DONE]\n\n")
        return StreamReply(200, "text/event-stream", parts, {"Cache-Control": "no-cache"})

    def _get(self, path: str) -> Reply:
        owner = self.owner
        if path.rstrip("/") in ("/v1/models", "/models"):
            data = [
                {"id": p, "object": "model", "owned_by": owner.env_id} for p in owner.model_names
            ]
            return JsonReply(200, {"object": "list", "data": data})
        if path == "/health":
            return JsonReply(200, {"status": "ok", "env": owner.env_id, "policy": owner.default})
        raise HttpError(404, f"no route GET {path[:200]}{self.routes_hint()}")

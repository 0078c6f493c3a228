"""The two kinds of model the loop talks to: a built-in policy, or an OpenAI-compatible endpoint."""

from __future__ import annotations

import asyncio
import os
import socket
from typing import Any

from datagauntlet.core.env import Policy
from datagauntlet.frontdoors.chat import Message, policy_reply, rough_tokens
from datagauntlet.frontdoors.loop import Reply

# Status codes worth another try: timeouts, conflicts, rate limits and server-side failures.
TRANSIENT_STATUS = frozenset({408, 409, 429, 500, 502, 503, 504})


class PolicyModel:
    """A built-in policy answering from the message history: no model, no key, no network."""

    def __init__(self, policy: Policy) -> None:
        self.policy = policy

    async def complete(self, messages: list[Message], tools: list[dict[str, Any]]) -> Reply:
        message = policy_reply(self.policy, messages, tools)
        usage = {
            "prompt_tokens": rough_tokens(messages),
            "completion_tokens": rough_tokens(message),
        }
        return Reply(message, usage)


def http_client(max_connections: int = 256, timeout: float = 120.0) -> Any:
    """An httpx client with Nagle off: the SDK writes a request's headers and body separately,
    and with Nagle on the body waits for the server's delayed ACK (~40 ms a call here)."""
    import httpx

    transport = httpx.AsyncHTTPTransport(
        socket_options=[(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)],
        limits=httpx.Limits(
            max_connections=max_connections, max_keepalive_connections=max_connections
        ),
    )
    return httpx.AsyncClient(transport=transport, timeout=timeout)


class TransientError(Exception):
    """A model call that failed in a way worth retrying, after every retry was spent."""


class OpenAIModel:
    """Chat completions through the official `openai` SDK (extra `[llm]`).

    The SDK's own retries are turned off so that the backoff here is the only one and is
    visible in one place; transient failures are retried `retries` times.

    Two costs that only show at hundreds of rollouts at once are avoided: requests go through
    the client's `post` with a plain JSON body (the typed `create` walks the whole message
    history against its TypedDicts on every call, about 7 ms of CPU per call late in a
    rollout), and connections are spread over several clients of at most `POOL_SIZE` each
    (httpcore scans its whole pool for every request, which grows quadratically).
    """

    POOL_SIZE = 32

    def __init__(
        self,
        model: str,
        base_url: str,
        api_key_env: str = "OPENAI_API_KEY",
        temperature: float | None = None,
        retries: int = 4,
        backoff: float = 0.5,
        timeout: float = 120.0,
        max_connections: int = 256,
    ) -> None:
        try:
            import openai
            from openai.types.chat import ChatCompletion
        except ImportError as exc:  # pragma: no cover - depends on the install
            raise ValueError("the openai SDK is missing: pip install 'datagauntlet[llm]'") from exc
        self._openai = openai
        self._completion_type = ChatCompletion
        self.model = model
        self.temperature = temperature
        self.retries = retries
        self.backoff = backoff
        shards = max(1, -(-max_connections // self.POOL_SIZE))
        self.clients = [
            openai.AsyncOpenAI(
                base_url=base_url,
                api_key=os.environ.get(api_key_env) or "EMPTY",
                max_retries=0,
                timeout=timeout,
                http_client=http_client(min(max_connections, self.POOL_SIZE), timeout),
            )
            for _ in range(shards)
        ]
        self._next = 0

    def _transient(self, exc: Exception) -> bool:
        o = self._openai
        if isinstance(exc, (o.APIConnectionError, o.APITimeoutError)):
            return True
        return isinstance(exc, o.APIStatusError) and exc.status_code in TRANSIENT_STATUS

    async def complete(self, messages: list[Message], tools: list[dict[str, Any]]) -> Reply:
        body: dict[str, Any] = {"model": self.model, "messages": messages, "tools": tools}
        if self.temperature is not None:
            body["temperature"] = self.temperature
        client = self.clients[self._next % len(self.clients)]
        self._next += 1
        for attempt in range(self.retries + 1):
            try:
                response = await client.post(
                    "/chat/completions", body=body, cast_to=self._completion_type
                )
                break
            except Exception as exc:
                if not self._transient(exc):
                    raise
                if attempt == self.retries:
                    raise TransientError(f"{type(exc).__name__}: {exc}") from exc
                await asyncio.sleep(min(self.backoff * 2**attempt, 20.0))
        if not response.choices:
            raise ValueError("the endpoint answered with no choices")
        message = response.choices[0].message.model_dump(exclude_none=True)
        usage = response.usage.model_dump() if response.usage else None
        return Reply(message, usage)

    async def close(self) -> None:
        for client in self.clients:
            await client.close()

"""The two kinds of model the loop talks to: a built-in policy, or an OpenAI-compatible endpoint."""

from __future__ import annotations

import asyncio
import os
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


class TransientError(Exception):
    """A model call that failed in a way worth retrying, after every retry was spent."""


class OpenAIModel:
    """Chat completions through the official `openai` SDK (extra `[llm]`).

    The SDK's own retries are turned off so that the backoff here is the only one and is
    visible in one place; transient failures are retried `retries` times.
    """

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
            import httpx
            import openai
        except ImportError as exc:  # pragma: no cover - depends on the install
            raise ValueError("the openai SDK is missing: pip install 'datagauntlet[llm]'") from exc
        self._openai = openai
        self.model = model
        self.temperature = temperature
        self.retries = retries
        self.backoff = backoff
        limits = httpx.Limits(max_connections=max_connections, max_keepalive_connections=64)
        self.client = openai.AsyncOpenAI(
            base_url=base_url,
            api_key=os.environ.get(api_key_env) or "EMPTY",
            max_retries=0,
            timeout=timeout,
            http_client=httpx.AsyncClient(limits=limits, timeout=timeout),
        )

    def _transient(self, exc: Exception) -> bool:
        o = self._openai
        if isinstance(exc, (o.APIConnectionError, o.APITimeoutError)):
            return True
        return isinstance(exc, o.APIStatusError) and exc.status_code in TRANSIENT_STATUS

    async def complete(self, messages: list[Message], tools: list[dict[str, Any]]) -> Reply:
        kwargs: dict[str, Any] = {"model": self.model, "messages": messages, "tools": tools}
        if self.temperature is not None:
            kwargs["temperature"] = self.temperature
        for attempt in range(self.retries + 1):
            try:
                response = await self.client.chat.completions.create(**kwargs)
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
        await self.client.close()

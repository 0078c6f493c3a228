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


DEFAULT_REQUEST_TIMEOUT = 120.0


class TransientError(Exception):
    """A model call that failed in a way worth retrying, after every retry was spent.

    `kind` names the last failure (the SDK's error class, or RequestTimeout), so failures
    can be grouped without parsing messages."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind


class RequestTimeout(Exception):
    """No complete answer within the total deadline of one request (however it trickled)."""


def error_kind(exc: BaseException) -> str:
    return exc.kind if isinstance(exc, TransientError) else type(exc).__name__


class OpenAIModel:
    """Chat completions through the official `openai` SDK (extra `[llm]`).

    The SDK's own retries are turned off so that the backoff here is the only one and is
    visible in one place; transient failures are retried `retries` times. `timeout` is a
    total deadline per request: the SDK's own timeout restarts at every byte received, so a
    server dripping one byte every few seconds would otherwise hold a rollout forever.

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
        timeout: float = DEFAULT_REQUEST_TIMEOUT,
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
        self.timeout = timeout
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

    async def _post(self, client: Any, body: dict[str, Any]) -> Any:
        try:
            return await asyncio.wait_for(
                client.post("/chat/completions", body=body, cast_to=self._completion_type),
                self.timeout,
            )
        except TimeoutError:
            raise RequestTimeout(
                f"no complete answer within the request deadline ({self.timeout:g} s)"
            ) from None

    def _transient(self, exc: Exception) -> bool:
        o = self._openai
        if isinstance(exc, (o.APIConnectionError, o.APITimeoutError, RequestTimeout)):
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
                response = await self._post(client, body)
                break
            except Exception as exc:
                if not self._transient(exc):
                    raise
                if attempt == self.retries:
                    kind = type(exc).__name__
                    raise TransientError(kind, f"{kind}: {exc}") from exc
                await asyncio.sleep(min(self.backoff * 2**attempt, 20.0))
        if not response.choices:
            raise ValueError("the endpoint answered with no choices")
        message = response.choices[0].message.model_dump(exclude_none=True, warnings=False)
        usage = response.usage.model_dump(warnings=False) if response.usage else None
        return Reply(message, usage)

    async def close(self) -> None:
        for client in self.clients:
            await client.close()


async def preflight(
    base_url: str, model: str, api_key_env: str, timeout: float = 15.0
) -> str | None:
    """One cheap authenticated request (GET /models) before any rollout; None when the
    endpoint answers and serves `model`, else one line naming the problem."""
    import openai

    key = os.environ.get(api_key_env)
    unset = "" if key else f" (${api_key_env} is not set)"
    client = openai.AsyncOpenAI(
        base_url=base_url, api_key=key or "EMPTY", max_retries=0, timeout=timeout
    )
    try:
        page = await asyncio.wait_for(client.models.list(), timeout)
        served = [m.id for m in page.data]
    except (TimeoutError, openai.APITimeoutError):
        return f"{base_url} did not answer GET /models within {timeout:g} s"
    except openai.APIConnectionError as exc:
        return f"cannot reach {base_url}: {exc.__cause__ or exc}"
    except openai.APIStatusError as exc:
        if exc.status_code in (401, 403):
            return f"{base_url} refused the API key ({exc.status_code}){unset}; see --api-key-env"
        if exc.status_code in (404, 405):
            return None  # the endpoint lists no models; chat requests will tell
        return f"{base_url} answered GET /models with {exc.status_code}: {exc.message}"
    except Exception as exc:  # an answer that is not a model list
        return f"{base_url} answered GET /models with something else: {type(exc).__name__}"
    finally:
        await client.close()
    if served and model not in served:
        shown = ", ".join(sorted(served)[:10]) + (", ..." if len(served) > 10 else "")
        return f"{base_url} does not serve model {model!r}; it serves: {shown}"
    return None

"""The two kinds of model the loop talks to: a built-in policy, or an OpenAI-compatible endpoint."""

from __future__ import annotations

import asyncio
import functools
import json
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


@functools.cache
def _tls_context() -> Any:
    """One verifying TLS context for every client of this process: loading the CA bundle costs
    ~70 ms of CPU, which a client per rollout (the verifiers harness) would pay each time."""
    import httpx

    return httpx.create_ssl_context()


TRANSPORTS = ("lean", "httpx")


def http_client(max_connections: int = 256, timeout: float = 120.0, transport: str = "lean") -> Any:
    """An httpx client with Nagle off (a request's head and body may leave in separate writes;
    with Nagle on the body would wait for the server's delayed ACK, ~40 ms a call here).

    `lean` (the default) runs on frontdoors/http11.py, HTTP/1.1 keep-alive on asyncio: httpx's
    stock transport (httpcore) costs most of a request's CPU at hundreds at once. `httpx` is
    that stock transport, for an endpoint or proxy the lean one does not speak (HTTP/2 only)."""
    import httpx

    nodelay = [(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)]
    if transport == "httpx":
        limits = httpx.Limits(
            max_connections=max_connections, max_keepalive_connections=max_connections
        )
        stock = httpx.AsyncHTTPTransport(
            verify=_tls_context(), socket_options=nodelay, limits=limits
        )
        return httpx.AsyncClient(transport=stock, timeout=timeout)
    if transport != "lean":
        raise ValueError(f"unknown HTTP transport {transport!r}; choose from {TRANSPORTS}")
    from datagauntlet.frontdoors.http11 import Http11Transport

    lean = Http11Transport(max_connections, ssl_context=_tls_context(), socket_options=nodelay)
    client = httpx.AsyncClient(
        transport=lean, timeout=timeout, mounts=_environment_proxies(nodelay, max_connections)
    )
    # httpx takes no cookie-jar class; its own rebuilds each request for the jar (a seventh
    # of a call's CPU) even when the answer sets no cookie
    client._cookies = _cookie_jar_class()()
    return client


def _environment_proxies(socket_options: list[Any], max_connections: int) -> dict[str, Any]:
    """The proxies of the environment (HTTP_PROXY, HTTPS_PROXY, ALL_PROXY, NO_PROXY) mounted as
    httpx mounts them for a client of its own: it reads them only when given no transport.
    A proxied origin goes through httpx's transport with that proxy; an excluded one (None)
    and every other through the lean transport."""
    import httpx

    try:
        from httpx._utils import get_environment_proxies
    except ImportError:  # pragma: no cover - a future httpx; its own client then decides
        return {}
    limits = httpx.Limits(max_connections=max_connections)
    return {
        pattern: None
        if url is None
        else httpx.AsyncHTTPTransport(
            proxy=httpx.Proxy(url),
            verify=_tls_context(),
            socket_options=socket_options,
            limits=limits,
        )
        for pattern, url in get_environment_proxies().items()
    }


@functools.cache
def _cookie_jar_class() -> type:
    import httpx

    class SetCookiesOnly(httpx.Cookies):
        """httpx's cookies, reading an answer only when it sets one (the jar would find
        nothing to do otherwise)."""

        def extract_cookies(self, response: httpx.Response) -> None:
            headers = response.headers
            if "set-cookie" in headers or "set-cookie2" in headers:
                super().extract_cookies(response)

    return SetCookiesOnly


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

    Costs that only show at hundreds of rollouts at once are avoided. Requests go through the
    client's `post` (the typed `create` walks the whole message history against its TypedDicts
    on every call, about 7 ms of CPU per call late in a rollout), with the body encoded once
    here, as the SDK would encode it (the SDK deep-copies a dict body into its request options
    and encodes it again), to an `httpx.URL` parsed once (a string is parsed three times a
    call). The answer is read as JSON, not built into the SDK's response models (their
    construction cost more than the rest of the reply's handling). And the one client runs on
    the lean HTTP/1.1 transport of `http11` (httpx's default scans its whole pool at every
    request and release, so at 256 connections its bookkeeping was most of the CPU).
    """

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
        transport: str = "lean",
    ) -> None:
        try:
            import httpx
            import openai
        except ImportError as exc:  # pragma: no cover - depends on the install
            raise ValueError("the openai SDK is missing: pip install 'datagauntlet[llm]'") from exc
        self._openai = openai
        self._raw = httpx.Response
        self.model = model
        self.temperature = temperature
        self.retries = retries
        self.backoff = backoff
        self.timeout = timeout
        self.client = openai.AsyncOpenAI(
            base_url=base_url,
            api_key=os.environ.get(api_key_env) or "EMPTY",
            max_retries=0,
            timeout=timeout,
            http_client=http_client(max_connections, timeout, transport),
        )
        # absolute, and parsed here: the SDK and httpx take an httpx.URL as it is
        self._url = httpx.URL(f"{str(self.client.base_url).rstrip('/')}/chat/completions")

    async def _post(self, content: bytes) -> Reply:
        try:
            # a deadline on this task (wait_for would start a task per call); cast to
            # httpx.Response: the SDK still raises its typed errors for a bad status
            async with asyncio.timeout(self.timeout):
                response = await self.client.post(
                    self._url,  # type: ignore[arg-type]
                    content=content,
                    cast_to=self._raw,
                )
        except TimeoutError:
            raise RequestTimeout(
                f"no complete answer within the request deadline ({self.timeout:g} s)"
            ) from None
        return read_completion(response.content)

    def _transient(self, exc: Exception) -> bool:
        o = self._openai
        if isinstance(exc, (o.APIConnectionError, o.APITimeoutError, RequestTimeout)):
            return True
        return isinstance(exc, o.APIStatusError) and exc.status_code in TRANSIENT_STATUS

    async def complete(self, messages: list[Message], tools: list[dict[str, Any]]) -> Reply:
        body: dict[str, Any] = {"model": self.model, "messages": messages, "tools": tools}
        if self.temperature is not None:
            body["temperature"] = self.temperature
        content = encode_body(body)  # once for every attempt
        for attempt in range(self.retries + 1):
            try:
                return await self._post(content)
            except Exception as exc:
                if not self._transient(exc):
                    raise
                if attempt == self.retries:
                    kind = type(exc).__name__
                    raise TransientError(kind, f"{kind}: {exc}") from exc
                await asyncio.sleep(min(self.backoff * 2**attempt, 20.0))
        raise AssertionError("unreachable: the last attempt returns or raises")

    async def close(self) -> None:
        await self.client.close()


def encode_body(body: dict[str, Any]) -> bytes:
    """A request body as the SDK encodes one (its `openapi_dumps`: compact, UTF-8, no NaN)."""
    return json.dumps(body, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode()


def read_completion(content: bytes) -> Reply:
    """The first choice's message and the usage of a chat.completion body.

    Fields the endpoint sent as null are dropped at every depth (a history sent back with
    `"tool_calls": null` is refused by some endpoints), as the SDK's `model_dump(exclude_none)`
    did; the shape is checked only as far as the loop reads it."""
    try:
        data = json.loads(content)
    except ValueError as exc:
        raise ValueError(f"the endpoint answered with something that is not JSON: {exc}") from None
    choices = data.get("choices") if isinstance(data, dict) else None
    if not isinstance(choices, list) or not choices:
        raise ValueError("the endpoint answered with no choices")
    first = choices[0]
    message = first.get("message") if isinstance(first, dict) else None
    if not isinstance(message, dict):
        raise ValueError("the endpoint's first choice holds no message object")
    usage = data.get("usage")
    return Reply(drop_none(message), usage if isinstance(usage, dict) else None)


def drop_none(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: drop_none(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [drop_none(v) for v in value]
    return value


def model_ids(content: bytes) -> list[str]:
    """The ids of a model list (`{"data": [{"id": ...}, ...]}`); ValueError for another shape."""
    data = json.loads(content)
    entries = data.get("data") if isinstance(data, dict) else None
    if not isinstance(entries, list):
        raise ValueError("not a model list")
    return [m["id"] for m in entries if isinstance(m, dict) and isinstance(m.get("id"), str)]


async def preflight(
    base_url: str, model: str, api_key_env: str, timeout: float = 15.0, transport: str = "lean"
) -> str | None:
    """One cheap authenticated request (GET /models) before any rollout; None when the
    endpoint answers and serves `model`, else one line naming the problem."""
    import httpx
    import openai

    key = os.environ.get(api_key_env)
    unset = "" if key else f" (${api_key_env} is not set)"
    client = openai.AsyncOpenAI(
        base_url=base_url,
        api_key=key or "EMPTY",
        max_retries=0,
        timeout=timeout,
        http_client=http_client(16, timeout, transport),
    )
    try:
        # the client's own GET, read as JSON: `client.models` would import every resource
        # module of the SDK (a third of a second of CPU) for one list
        response = await asyncio.wait_for(client.get("models", cast_to=httpx.Response), timeout)
        served = model_ids(response.content)
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

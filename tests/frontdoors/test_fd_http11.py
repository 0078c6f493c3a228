"""The eval client's HTTP/1.1 transport (frontdoors/http11.py) against real sockets on 127.0.0.1.

Each server here is a raw asyncio TCP server on port 0 that answers with the exact bytes a test
gives it, so framing, keep-alive and hostile answers are all under the test's control; it is
closed by the test that started it. The SDK-level tests go through the real openai client.
"""

from __future__ import annotations

import asyncio
import json
import ssl
import subprocess
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx
import openai
import pytest

from datagauntlet.frontdoors.http11 import MAX_HEAD_BYTES, Http11Transport
from datagauntlet.frontdoors.models import OpenAIModel, http_client

Answer = Callable[[bytes, int], bytes | None]  # (request, connection no.) -> bytes; None: hang


def ok(body: bytes = b'{"ok": true}', extra: bytes = b"") -> bytes:
    return b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n%b\r\n%b" % (len(body), extra, body)


class Server:
    def __init__(self, answer: Answer) -> None:
        self.answer = answer
        self.connections = 0
        self.requests: list[bytes] = []
        self.open_now = 0
        self.most_open = 0
        self.close_after_each = False

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        self.open_now += 1
        self.most_open = max(self.most_open, self.open_now)
        number = self.connections
        try:
            while True:
                try:
                    head = await reader.readuntil(b"\r\n\r\n")
                except (asyncio.IncompleteReadError, ConnectionError):
                    return
                length = 0
                for line in head.split(b"\r\n"):
                    if line.lower().startswith(b"content-length:"):
                        length = int(line.split(b":")[1])
                body = await reader.readexactly(length)
                self.requests.append(head + body)
                reply = self.answer(head + body, number)
                if reply is None:
                    await asyncio.sleep(30)
                    return
                writer.write(reply)
                await writer.drain()
                if self.close_after_each:
                    return
        finally:
            self.open_now -= 1
            writer.close()


@asynccontextmanager
async def serving(answer: Answer, tls: ssl.SSLContext | None = None) -> AsyncIterator[Any]:
    server = Server(answer)
    srv = await asyncio.start_server(server.handle, "127.0.0.1", 0, ssl=tls)
    server.url = f"{'https' if tls else 'http'}://127.0.0.1:{srv.sockets[0].getsockname()[1]}"
    try:
        yield server
    finally:
        srv.close()
        await srv.wait_closed()


def client(**kw: Any) -> httpx.AsyncClient:
    return httpx.AsyncClient(transport=Http11Transport(**kw), timeout=kw.pop("timeout", 5.0))


def run(coro: Any) -> Any:
    return asyncio.run(asyncio.wait_for(coro, 30))


def test_keep_alive_reuses_one_connection_for_sequential_requests() -> None:
    async def go() -> None:
        async with serving(lambda req, n: ok()) as srv, client() as c:
            for i in range(20):
                r = await c.post(srv.url + "/v1/x", json={"i": i})
                assert r.status_code == 200 and r.json() == {"ok": True}
            assert srv.connections == 1 and len(srv.requests) == 20
            assert json.loads(srv.requests[-1].split(b"\r\n\r\n", 1)[1]) == {"i": 19}

    run(go())


def test_bodies_framed_by_chunks_or_by_close_read_whole() -> None:
    chunked = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
    chunked += b"5;ext=1\r\nhello\r\n1\r\n \r\n5\r\nworld\r\n0\r\nX-Trailer: t\r\n\r\n"
    close = b"HTTP/1.1 200 OK\r\nConnection: close\r\n\r\nuntil the end"

    async def go() -> None:
        async with serving(lambda req, n: chunked) as srv, client() as c:
            assert (await c.get(srv.url)).content == b"hello world"
            assert (await c.get(srv.url)).content == b"hello world"
            assert srv.connections == 1  # a chunked body read to its end keeps the connection
        async with serving(lambda req, n: close) as srv, client() as c:
            srv.close_after_each = True
            assert (await c.get(srv.url)).content == b"until the end"
            assert (await c.get(srv.url)).content == b"until the end"
            assert srv.connections == 2

    run(go())


def test_informational_answers_are_skipped_and_bodiless_ones_have_no_body() -> None:
    def answer(req: bytes, n: int) -> bytes:
        if req.startswith(b"HEAD"):
            return b"HTTP/1.1 200 OK\r\nContent-Length: 999\r\n\r\n"
        if b"/empty" in req.split(b"\r\n")[0]:
            return b"HTTP/1.1 204 No Content\r\n\r\n"
        return b"HTTP/1.1 100 Continue\r\n\r\n" + ok(b"after")

    async def go() -> None:
        async with serving(answer) as srv, client() as c:
            assert (await c.get(srv.url)).content == b"after"
            head = await c.head(srv.url)
            assert head.status_code == 200 and head.content == b""
            empty = await c.get(srv.url + "/empty")
            assert empty.status_code == 204 and empty.content == b""
            assert (await c.get(srv.url)).content == b"after"
            assert srv.connections == 1

    run(go())


def test_a_connection_the_server_closed_while_idle_is_not_reused() -> None:
    async def go() -> None:
        async with serving(lambda req, n: ok()) as srv, client() as c:
            srv.close_after_each = True  # the server hangs up after every answer
            for _ in range(3):
                await c.get(srv.url)
                await asyncio.sleep(0.05)  # the close reaches the client before the next call
            assert srv.connections == 3

    run(go())


def test_idle_connections_expire() -> None:
    async def go() -> None:
        async with serving(lambda req, n: ok()) as srv, client(keepalive_expiry=0.05) as c:
            await c.get(srv.url)
            await asyncio.sleep(0.1)
            await c.get(srv.url)
            assert srv.connections == 2

    run(go())


@pytest.mark.parametrize(
    ("reply", "match"),
    [
        (b"HTTP/1.1 200 OK\r\nX: " + b"a" * MAX_HEAD_BYTES + b"\r\n\r\n", "over"),
        (b"SMTP ready\r\n\r\n", "not an HTTP"),
        (b"HTTP/1.1 abc OK\r\n\r\n", "not an HTTP"),
        (b"HTTP/1.1 200 OK\r\nno colon here\r\n\r\n", "malformed"),
        (b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nshort", "short"),
        (b"HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab", "Content-Length"),
        (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", "chunk size"),
        (b"HTTP/1.1 200 OK\r\nContent-Le", "without a full response head"),
    ],
    ids=[
        "huge-head",
        "not-http",
        "bad-status",
        "bad-header",
        "short-body",
        "two-lengths",
        "bad-chunk",
        "cut-head",
    ],
)
def test_a_malformed_answer_is_a_protocol_error_never_a_hang(reply: bytes, match: str) -> None:
    async def go() -> None:
        async with serving(lambda req, n: reply) as srv, client() as c:
            srv.close_after_each = True
            with pytest.raises(httpx.RemoteProtocolError, match=match):
                await c.get(srv.url)

    run(go())


def test_a_silent_server_is_a_read_timeout_and_frees_the_connection_slot() -> None:
    async def go() -> None:
        answers = iter([None, ok()])
        async with serving(lambda req, n: next(answers)) as srv:
            async with httpx.AsyncClient(
                transport=Http11Transport(max_connections=1), timeout=0.3
            ) as c:
                with pytest.raises(httpx.ReadTimeout):
                    await c.get(srv.url)
                assert (await c.get(srv.url)).status_code == 200  # the slot came back
            assert srv.connections == 2  # the timed-out connection was not reused

    run(go())


def test_a_cancelled_request_gives_its_slot_back() -> None:
    async def go() -> None:
        answers = iter([None, ok()])
        async with serving(lambda req, n: next(answers)) as srv, client(max_connections=1) as c:
            with pytest.raises(TimeoutError):
                await asyncio.wait_for(c.get(srv.url), 0.2)
            assert (await asyncio.wait_for(c.get(srv.url), 5)).status_code == 200

    run(go())


def test_the_pool_never_opens_more_than_max_connections() -> None:
    async def go() -> None:
        async with serving(lambda req, n: ok()) as srv, client(max_connections=3) as c:
            replies = await asyncio.gather(*(c.get(srv.url) for _ in range(30)))
            assert all(r.status_code == 200 for r in replies)
            assert srv.most_open <= 3

    run(go())


def test_a_large_body_arrives_whole() -> None:
    big = bytes(range(256)) * (24 * 1024)  # 6 MB, past the read high-water mark

    async def go() -> None:
        async with serving(lambda req, n: ok(big)) as srv, client() as c:
            assert (await c.get(srv.url)).content == big
            r = await c.post(srv.url, content=big)
            assert r.content == big and srv.requests[-1].endswith(big)

    run(go())


def test_a_request_body_of_unknown_length_goes_out_chunked() -> None:
    async def parts() -> AsyncIterator[bytes]:
        yield b"ab"
        yield b"cd"

    async def go() -> None:
        got: list[bytes] = []

        def answer(req: bytes, n: int) -> bytes:
            got.append(req)
            return ok()

        async with serving(answer) as srv, client() as c:
            srv.close_after_each = True
            await c.post(srv.url, content=parts())
        # the test server reads by Content-Length only, so it sees the head and no body
        assert b"transfer-encoding: chunked" in got[0].lower()

    run(go())


def test_https_with_a_verified_certificate(tmp_path: Path) -> None:
    key, cert = tmp_path / "key.pem", tmp_path / "cert.pem"
    made = subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
         "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1",
         "-keyout", str(key), "-out", str(cert)],
        capture_output=True, check=False,
    )  # fmt: skip
    if made.returncode != 0:
        pytest.skip(f"openssl could not make a certificate: {made.stderr[-200:]!r}")
    server_tls = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    server_tls.load_cert_chain(cert, key)
    trusting = ssl.create_default_context(cafile=str(cert))

    async def go() -> None:
        async with serving(lambda req, n: ok(b"secret"), server_tls) as srv:
            async with client(ssl_context=trusting) as c:
                assert (await c.get(srv.url)).content == b"secret"
                assert (await c.get(srv.url)).content == b"secret"
                assert srv.connections == 1
            async with client() as c:  # the system's CAs do not know this certificate
                with pytest.raises(httpx.ConnectError):
                    await c.get(srv.url)

    run(go())


def test_the_sdk_sees_its_own_errors_through_this_transport() -> None:
    status = {"n": 0}

    def answer(req: bytes, n: int) -> bytes:
        status["n"] += 1
        if status["n"] == 1:
            body = b'{"error": {"message": "slow down", "type": "rate_limit"}}'
            return b"HTTP/1.1 429 Too Many\r\nContent-Length: %d\r\n\r\n%b" % (len(body), body)
        message = {
            "role": "assistant",
            "content": None,
            "refusal": None,
            "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}
            ],
        }
        body = json.dumps(
            {
                "choices": [{"index": 0, "message": message}],
                "usage": {"prompt_tokens": 3, "completion_tokens": 1},
            }
        ).encode()
        return ok(body, b"Content-Type: application/json\r\n")  # fmt: skip

    async def go() -> None:
        async with serving(answer) as srv:
            sdk = openai.AsyncOpenAI(base_url=srv.url + "/v1", api_key="k", max_retries=0,
                                     http_client=http_client(4, 5.0))  # fmt: skip
            with pytest.raises(openai.RateLimitError):
                await sdk.post("/chat/completions", body={}, cast_to=httpx.Response)
            await sdk.close()
            model = OpenAIModel("m", srv.url + "/v1", retries=0)
            reply = await model.complete([{"role": "user", "content": "hi"}], [])
            await model.close()
            # nulls dropped as model_dump(exclude_none) did: no "content": null sent back
            assert reply.message == {
                "role": "assistant",
                "tool_calls": [
                    {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}
                ],
            }
            assert reply.usage == {"prompt_tokens": 3, "completion_tokens": 1}

    run(go())


@pytest.mark.parametrize(
    ("body", "match"),
    [(b"not json", "not JSON"), (b'{"choices": []}', "no choices"),
     (b'{"choices": [{"message": "hi"}]}', "no message object"), (b"[1]", "no choices")],
    ids=["not-json", "no-choices", "message-not-object", "not-an-object"],
)  # fmt: skip
def test_a_malformed_completion_is_one_clear_error(body: bytes, match: str) -> None:
    async def go() -> None:
        async with serving(lambda req, n: ok(body)) as srv:
            model = OpenAIModel("m", srv.url + "/v1", retries=0)
            try:
                with pytest.raises(ValueError, match=match):
                    await model.complete([{"role": "user", "content": "hi"}], [])
            finally:
                await model.close()

    run(go())


def test_an_unreachable_endpoint_is_a_connection_error_for_the_sdk() -> None:
    async def go() -> None:
        async with serving(lambda req, n: ok()) as srv:
            url = srv.url
        model = OpenAIModel("m", url + "/v1", retries=0)  # the server is gone: port refused
        try:
            with pytest.raises(Exception) as info:
                await model.complete([{"role": "user", "content": "hi"}], [])
            assert "APIConnectionError" in str(info.value)
        finally:
            await model.close()

    run(go())


def test_cookies_an_answer_sets_are_sent_back_and_none_are_invented() -> None:
    def answer(req: bytes, n: int) -> bytes:
        if b"/login" in req.split(b"\r\n")[0]:
            return ok(extra=b"Set-Cookie: session=abc; Path=/\r\n")
        return ok()

    async def go() -> None:
        async with serving(answer) as srv:
            c = http_client(4, 5.0)
            try:
                await c.get(srv.url + "/plain")
                await c.get(srv.url + "/login")
                await c.get(srv.url + "/after")
            finally:
                await c.aclose()
            heads = [r.split(b"\r\n\r\n")[0].lower() for r in srv.requests]
            assert b"cookie:" not in heads[0] and b"cookie:" not in heads[1]
            assert b"cookie: session=abc" in heads[2]

    run(go())

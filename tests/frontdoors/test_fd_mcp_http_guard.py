"""`datagauntlet mcp --transport http` answers only loopback Host/Origin unless told otherwise.

A web page the user visits can send requests to 127.0.0.1 under its own Host (DNS rebinding)
or Origin; without these checks it could play, or end, the user's episode.
"""

from __future__ import annotations

import json
import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

CLI = [sys.executable, "-m", "datagauntlet.cli.main", "mcp", "dirty-integration"]
INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-06-18", "capabilities": {},
    "clientInfo": {"name": "probe", "version": "0"}}}  # fmt: skip


@contextmanager
def mcp_http(*extra: str) -> Iterator[str]:
    proc = subprocess.Popen([*CLI, "--transport", "http", "--port", "0", *extra],
                            stderr=subprocess.PIPE, text=True)  # fmt: skip
    try:
        assert proc.stderr is not None
        yield proc.stderr.readline().rsplit(" at ", 1)[1].strip()
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def _post(url: str, headers: dict[str, str]) -> int:
    req = urllib.request.Request(
        url, data=json.dumps(INIT).encode(), method="POST",
        headers={"Content-Type": "application/json",
                 "Accept": "application/json, text/event-stream", **headers},
    )  # fmt: skip
    try:
        with urllib.request.urlopen(req, timeout=10) as resp:
            return int(resp.status)
    except urllib.error.HTTPError as err:
        return int(err.code)


def test_foreign_host_and_origin_are_refused_by_default() -> None:
    with mcp_http() as url:
        port = url.split(":")[2].split("/")[0]
        assert _post(url, {}) == 200
        assert (
            _post(url, {"Host": f"localhost:{port}", "Origin": f"http://localhost:{port}"}) == 200
        )
        assert _post(url, {"Host": f"evil.example:{port}"}) == 403
        assert _post(url, {"Origin": "http://evil.example"}) == 403
        assert _post(url, {"Origin": "null"}) == 403


def test_allow_host_widens_the_check() -> None:
    with mcp_http("--allow-host", "lab.internal") as url:
        port = url.split(":")[2].split("/")[0]
        assert _post(url, {"Host": f"lab.internal:{port}",
                           "Origin": "http://lab.internal"}) == 200  # fmt: skip
        assert _post(url, {"Host": f"evil.example:{port}"}) == 403


@pytest.mark.parametrize("value", ["", "a b", "http://x"])
def test_allow_host_takes_a_host_name(value: str) -> None:
    proc = subprocess.run([*CLI, "--transport", "http", "--allow-host", value],
                          capture_output=True, text=True, timeout=30)  # fmt: skip
    assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1
    assert "--allow-host" in proc.stderr

"""OpenEnv's doors on a real server (127.0.0.1): a wrong-typed `metadata` on HTTP step is a 400
naming the field, never a 500; a binary frame on its WebSocket is read like a text frame and a
binary frame that is not JSON gets an error reply, with the connection and its session alive."""

from __future__ import annotations

import json
from typing import Any

import pytest
from server_helpers import Server

ENV = "dirty-integration"
STEP = f"/openenv/{ENV}/step"


@pytest.fixture(scope="module")
def server():
    s = Server("--workers", "1")
    yield s
    s.stop()


@pytest.mark.parametrize("metadata", ["x", 7, [], ["episode_id"], {"episode_id": 3}, True])
def test_a_wrong_typed_metadata_is_a_400_not_a_500(server: Server, metadata: Any) -> None:
    action = {"tool": "fetch_page", "arguments": {"cursor": None}, "metadata": metadata}
    status, body = server.request("POST", STEP, {"action": action})
    assert status == 400, body
    assert "metadata" in body["error"]


def test_an_episode_id_in_metadata_still_steps(server: Server) -> None:
    status, reset = server.request("POST", f"/openenv/{ENV}/reset", {"task": 0})
    assert status == 200, reset
    sid = reset["observation"]["session_id"]
    action = {"tool": "fetch_page", "arguments": {"cursor": None}, "metadata": {"episode_id": sid}}
    status, step = server.request("POST", STEP, {"action": action})
    assert status == 200 and "records" in step["observation"]["result"], step
    server.request("DELETE", f"/sessions/{sid}")


def test_binary_frames_on_the_openenv_websocket(server: Server) -> None:
    from websockets.sync.client import connect

    url = server.url.replace("http://", "ws://") + f"/openenv/{ENV}/ws"
    with connect(url, open_timeout=20, close_timeout=5) as ws:
        ws.send(json.dumps({"type": "reset", "data": {"task": 0}}).encode())  # binary frame
        opening = json.loads(ws.recv(timeout=30))
        assert opening["type"] == "observation", opening
        ws.send(b"\xff\xfe not json")
        error = json.loads(ws.recv(timeout=30))
        assert error["type"] == "error" and error["data"]["code"] == "INVALID_REQUEST", error
        step = {"type": "step", "data": {"tool": "fetch_page", "arguments": {"cursor": None}}}
        ws.send(json.dumps(step).encode())
        reply = json.loads(ws.recv(timeout=30))
        assert (
            reply["type"] == "observation" and "records" in reply["data"]["observation"]["result"]
        )
        ws.send(json.dumps({"type": "close"}))
    status, health = server.request("GET", f"/openenv/{ENV}/health")
    assert status == 200, health

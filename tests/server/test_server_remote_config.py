"""Config from a client reaches neither the importer nor the file system: a real session
server accepts only the keys each env declares remote-safe, refusing the rest in one line
that names the key, on every route that opens a session (HTTP, WebSocket, OpenEnv), unless it
was started with --trust-client-config. A module named by a client is never imported (a module
that leaves a marker file when imported proves it), and a path tells the client nothing (the
same refusal whether it exists or not)."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from held_out_probe import raw_request
from server_helpers import Server

MODULE = "dg_remote_config_marker"


@pytest.fixture(scope="module")
def marker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A family module on the servers' import path that writes `marker` when imported."""
    root = tmp_path_factory.mktemp("marker")
    flag = root / "imported"
    (root / f"{MODULE}.py").write_text(
        f"from pathlib import Path\nPath({str(flag)!r}).write_text('imported')\n"
        "SPLITS = {'mine': [11, 12]}\n"
    )
    saved = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (str(root), saved) if p)
    try:
        yield flag
    finally:
        if saved is None:
            os.environ.pop("PYTHONPATH", None)
        else:
            os.environ["PYTHONPATH"] = saved


@pytest.fixture(scope="module")
def server(marker: Path) -> Iterator[Server]:
    s = Server()
    yield s
    s.stop()


def _open(server: Server, route: str, env: str, config: dict[str, Any]) -> tuple[int, str]:
    """(status, error text) of opening a session with this config on one route."""
    if route == "ws":
        from websockets.sync.client import connect

        with connect(f"ws://127.0.0.1:{server.port}/ws") as ws:
            ws.send(json.dumps({"op": "open", "env": env, "config": config}))
            reply = json.loads(ws.recv())
            return int(reply.get("status", 200)), str(reply.get("error", ""))
    if route == "openenv":
        status, raw = raw_request(server.port, "POST", f"/openenv/{env}/reset", {"config": config})
    else:
        status, raw = raw_request(server.port, "POST", "/sessions", {"env": env, "config": config})
    body = json.loads(raw)
    if status in (200, 201):
        sid = body.get("session_id") or body["observation"]["session_id"]
        raw_request(server.port, "DELETE", f"/sessions/{sid}")
    return status, str(body.get("error", ""))


ROUTES = ("http", "ws", "openenv")


@pytest.mark.parametrize("route", ROUTES)
@pytest.mark.parametrize("env", ["event-recon", "dataclean", "dirty-integration"])
def test_a_client_named_module_is_never_imported(
    server: Server, marker: Path, route: str, env: str
) -> None:
    status, error = _open(server, route, env, {"family_module": MODULE})
    assert status == 400 and "'family_module'" in error and "\n" not in error
    assert "--trust-client-config" in error
    assert not marker.exists()


@pytest.mark.parametrize("route", ROUTES)
def test_a_client_named_path_tells_nothing(server: Server, route: str, tmp_path: Path) -> None:
    present = tmp_path / "cases.jsonl"
    present.write_text("")
    answers = {
        path: _open(server, route, "bad-batch-gate", {"cases": path})
        for path in ("/etc/shadow", str(present), str(tmp_path / "absent.jsonl"))
    }
    statuses = {status for status, _ in answers.values()}
    assert statuses == {400}
    errors = {error for _, error in answers.values()}
    assert len(errors) == 1 and "'cases'" in errors.pop()


@pytest.mark.parametrize("route", ROUTES)
def test_declared_keys_still_open_sessions(server: Server, route: str) -> None:
    assert _open(server, route, "dirty-integration", {"profile": "hostile", "max_turns": 9})[0] in (
        200,
        201,
    )
    assert _open(server, route, "bad-batch-gate", {"families": "extended", "cases": None})[0] in (
        200,
        201,
    )


def test_an_unknown_key_is_still_named_by_the_config(server: Server) -> None:
    status, error = _open(server, "http", "dataclean", {"nope": 1})
    assert status == 400 and "unknown config field 'nope'" in error


def test_trust_client_config_lets_the_operator_accept_every_key(marker: Path) -> None:
    s = Server("--trust-client-config")
    try:
        status, raw = raw_request(s.port, "GET", "/health")
        assert json.loads(raw)["limits"]["trust_client_config"] is True
        body = {"env": "dataclean", "config": {"family_module": MODULE}, "split": "mine"}
        status, raw = raw_request(s.port, "POST", "/sessions", body)
        assert status == 201, raw
        assert marker.exists()
        assert json.loads(raw)["task"]["ref"].startswith("ref-")  # a module's split: held out
    finally:
        s.stop()
        marker.unlink(missing_ok=True)

"""A server of several worker processes behind one address: a session's calls arriving on
connections that different workers took get exactly what one process gives; the limits hold
across workers; a dead worker is reported and replaced; the server stops cleanly."""

from __future__ import annotations

import http.client
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import pytest
from server_helpers import CLI, Server

import datagauntlet as dg
from datagauntlet.core.replay import next_tool_call


class Pinned:
    """One kept-alive HTTP connection, and the worker that took it."""

    def __init__(self, server: Server) -> None:
        self.conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=60)
        self.worker = self.request("GET", "/health")[1]["worker"]

    def request(
        self, method: str, path: str, body: Any = None, raw: bytes | None = None, **headers: str
    ) -> tuple[int, Any]:
        data = raw if raw is not None else (None if body is None else json.dumps(body).encode())
        sent = {"Content-Type": "application/json"} if data is not None else {}
        self.conn.request(method, path, body=data, headers={**sent, **headers})
        resp = self.conn.getresponse()
        text = resp.read()
        try:
            return resp.status, json.loads(text)
        except ValueError:
            return resp.status, text.decode(errors="replace")

    def close(self) -> None:
        self.conn.close()


def pinned(server: Server, workers: int) -> dict[int, Pinned]:
    """A connection to each worker (new connections land where the kernel's hash puts them)."""
    found: dict[int, Pinned] = {}
    for _ in range(400):
        c = Pinned(server)
        if c.worker in found:
            c.close()
        else:
            found[c.worker] = c
        if len(found) == workers:
            return found
    raise AssertionError(f"connections reached only workers {sorted(found)}")


@pytest.fixture(scope="module")
def server():
    s = Server("--workers", "3", "--max-sessions", "64")
    yield s
    s.stop()


@pytest.fixture
def conns(server: Server):
    # Pinned afresh for each test: the server closes a connection idle for 5 s (uvicorn's
    # keep-alive), which a busy machine can reach between two tests of one module.
    found = pinned(server, 3)
    yield found
    for c in found.values():
        c.close()


def _in_process(env: Any, index: int, calls: list[tuple[str, Any]]) -> list[Any]:
    ep = env.episode(env.make_task("eval", index))
    try:
        out = [json.loads(json.dumps(ep.call(name, args))) for name, args in calls]
        return [*out, json.loads(json.dumps(ep.score().as_dict()))]
    finally:
        ep.close()


@pytest.mark.parametrize("env_id", dg.list_envs())
def test_calls_spread_over_workers_get_one_process_results(
    server: Server, conns: dict[int, Pinned], env_id: str
) -> None:
    env = dg.make(env_id)
    policy = env.policies()[env.reference]
    order = list(conns.values())
    status, opening = order[1].request("POST", "/sessions", {"env": env_id, "task": 1})
    assert status == 201, opening
    sid = opening["session_id"]
    assert sid.startswith(f"{order[1].worker}."), sid  # the id names the worker holding it
    calls: list[tuple[str, Any]] = []
    results: list[Any] = []
    reply: dict[str, Any] = {}
    prompts = opening["system_prompt"], opening["prompt"], opening["tools"]
    while "score" not in reply:
        call = next_tool_call(policy, *prompts, results)
        assert call is not None
        conn = order[len(calls) % len(order)]  # each call on the next worker's connection
        calls.append((call.name, call.arguments))
        status, reply = conn.request(
            "POST", f"/sessions/{sid}/call", {"name": call.name, "arguments": call.arguments}
        )
        assert status == 200, reply
        results.append(reply["result"])
    assert len(calls) >= 2 or env_id == "dataclean"
    assert [*results, reply["score"]] == _in_process(env, 1, calls)
    for conn in order:  # every worker answers for the session alike
        assert conn.request("GET", f"/sessions/{sid}/score") == (200, reply["score"])
        state = conn.request("GET", f"/sessions/{sid}")[1]
        assert state["calls"] == len(calls) and state["done"] is True
    assert order[2].request("DELETE", f"/sessions/{sid}")[0] == 200
    for conn in order:
        assert conn.request("GET", f"/sessions/{sid}")[0] == 404


def test_answers_lists_and_health_cover_every_worker(conns: dict[int, Pinned]) -> None:
    a, b, c = conns[0], conns[1], conns[2]
    sids = [
        conn.request("POST", "/sessions", {"env": "dataclean"})[1]["session_id"]
        for conn in (a, b, c)
    ]
    for conn in (a, b, c):
        listed = {s["session_id"] for s in conn.request("GET", "/sessions")[1]["sessions"]}
        assert set(sids) <= listed
        health = conn.request("GET", "/health")[1]
        assert health["sessions"] >= 3 and health["status"] == "ok"
        assert [w["worker"] for w in health["workers"]] == [0, 1, 2]
    status, reply = b.request("POST", f"/sessions/{sids[0]}/answer", {"text": "[]"})
    assert status == 200 and reply["done"] is True and "score" in reply
    assert c.request("GET", f"/sessions/{sids[0]}/score") == (200, reply["score"])
    for sid, conn in zip(sids, (c, a, b), strict=True):
        assert conn.request("DELETE", f"/sessions/{sid}")[0] == 200


def test_websocket_to_a_session_another_worker_holds(
    server: Server, conns: dict[int, Pinned]
) -> None:
    from websockets.exceptions import ConnectionClosedOK
    from websockets.sync.client import connect

    env = dg.make("bad-batch-gate")
    owner = conns[0]
    opening = owner.request("POST", "/sessions", {"env": "bad-batch-gate", "task": 2})[1]
    sid = opening["session_id"]
    ws = None
    for _ in range(200):  # a connection some other worker took: it relays to the owner
        ws = connect(f"ws://127.0.0.1:{server.port}/sessions/{sid}/ws")
        if ws.response.headers["x-datagauntlet-worker"] != "0":
            break
        ws.close()
    assert ws is not None and ws.response.headers["x-datagauntlet-worker"] != "0"
    policy = env.policies()[env.reference]
    calls: list[tuple[str, Any]] = []
    results: list[Any] = []
    reply: dict[str, Any] = {}
    with ws:
        ws.send("{broken")
        assert "not valid JSON" in json.loads(ws.recv())["error"]
        while "score" not in reply:
            call = next_tool_call(
                policy, opening["system_prompt"], opening["prompt"], opening["tools"], results
            )
            assert call is not None
            calls.append((call.name, call.arguments))
            ws.send(json.dumps({"name": call.name, "arguments": call.arguments}))
            reply = json.loads(ws.recv())
            results.append(reply["result"])
        ws.send(json.dumps({"op": "close"}))
        assert json.loads(ws.recv())["closed"] is True
        with pytest.raises(ConnectionClosedOK):  # the owner closed it; the relay closed ours
            ws.recv(timeout=10)
    assert ws.close_code == 1000
    assert [*results, reply["score"]] == _in_process(env, 2, calls)
    assert owner.request("GET", f"/sessions/{sid}")[0] == 404


def _passed_on(conn: Pinned) -> int:
    return sum(w["passed_on"] for w in conn.request("GET", "/health")[1]["workers"])


def test_mcp_to_a_session_another_worker_holds(server: Server, conns: dict[int, Pinned]) -> None:
    pytest.importorskip("mcp")
    import asyncio

    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    env = dg.make("dirty-integration")
    policy = env.policies()[env.reference]

    async def play(url: str, opening: dict[str, Any]) -> dict[str, Any]:
        async with (
            streamable_http_client(url) as (read, write, *_),
            ClientSession(read, write) as s,
        ):
            await s.initialize()
            results: list[dict[str, Any]] = []
            prompts = opening["system_prompt"], opening["prompt"], opening["tools"]
            while True:
                call = next_tool_call(policy, *prompts, results)
                assert call is not None
                out = json.loads((await s.call_tool(call.name, call.arguments)).content[0].text)
                if "score" in out:
                    return out["score"]
                results.append(out)

    # The client's connections land where the kernel puts them: play until some were passed on
    # (a session of worker 0, three workers: each try misses the others with p <= 1/3).
    for attempt in range(8):
        before = _passed_on(conns[0])
        opening = conns[0].request("POST", "/sessions", {"env": env.id, "task": attempt})[1]
        score = asyncio.run(play(f"{server.url}/sessions/{opening['session_id']}/mcp", opening))
        assert score["reward"] == 1.0
        conns[0].request("DELETE", f"/sessions/{opening['session_id']}")
        if _passed_on(conns[0]) > before:
            return
    raise AssertionError("no MCP request reached another worker in 8 tries")


def test_openenv_http_steps_through_any_worker(conns: dict[int, Pinned]) -> None:
    a, b = conns[0], conns[1]
    status, reset = a.request("POST", "/openenv/dirty-integration/reset", {"task": 1})
    sid = reset["observation"]["session_id"]
    assert sid.startswith("0.")
    action = {"tool": "fetch_page", "arguments": {"cursor": None}}
    status, step = b.request(
        "POST", "/openenv/dirty-integration/step", {"episode_id": sid, "action": action}
    )
    assert status == 200 and "records" in step["observation"]["result"] and step["reward"] is None
    status, state = b.request("GET", f"/openenv/dirty-integration/state?episode_id={sid}")
    assert status == 200 and state["episode_id"] == sid and state["step_count"] == 1
    status, body = b.request("POST", "/openenv/dirty-integration/step", raw=b"{nope")
    assert status == 400 and "not valid JSON" in body["error"]
    b.request("DELETE", f"/sessions/{sid}")


@pytest.mark.parametrize(
    ("method", "path", "raw", "headers", "status", "words"),
    [
        ("POST", "/sessions/7.abc/call", b'{"name": "x"}', {}, 404, "no such session"),
        ("POST", "/sessions/abc/call", b'{"name": "x"}', {}, 404, "no such session"),
        ("GET", "/sessions/0./score", None, {}, 404, "no such session"),
        ("GET", "/sessions/99999999999999.x", None, {}, 404, "no such session"),
        ("POST", "/sessions/OTHER/call", b"x" * (9 * 1024 * 1024), {}, 413, "over the limit"),
        ("POST", "/sessions/OTHER/answer", b'{"text": "done"}', {}, 400, "reads no final answer"),
        ("POST", "/sessions/OTHER/call", b"{not json", {}, 400, "not valid JSON"),
        ("POST", "/sessions/OTHER/call", b'{"name": 3}', {}, 400, "name must be str"),
        ("GET", "/sessions/OTHER/nowhere", None, {}, 404, "no route"),
    ],
)
def test_hostile_requests_for_another_workers_session(
    server: Server, method, path, raw, headers, status, words
) -> None:
    c = pinned(server, 3)  # fresh connections: a refused body may leave one unusable
    owner, other = c[1], c[2]
    sid = owner.request("POST", "/sessions", {"env": "dirty-integration"})[1]["session_id"]
    try:
        got, reply = other.request(method, path.replace("OTHER", sid), raw=raw, **headers)
        assert got == status, reply
        assert isinstance(reply, dict) and words in reply["error"], reply
        assert owner.request("GET", f"/sessions/{sid}")[1]["calls"] == 0
    finally:
        owner.request("DELETE", f"/sessions/{sid}")
        for conn in c.values():
            conn.close()


def test_a_forged_hop_header_is_just_another_request(conns: dict[int, Pinned]) -> None:
    owner, other = conns[0], conns[1]
    sid = owner.request("POST", "/sessions", {"env": "dirty-integration"})[1]["session_id"]
    body = {"name": "fetch_page", "arguments": {"cursor": None}}
    for value in ("", "guess", "x" * 200):
        status, reply = other.request(
            "POST", f"/sessions/{sid}/call", body, **{"x-datagauntlet-hop": value}
        )
        assert status == 200 and "records" in reply["result"], reply  # passed on all the same
    assert owner.request("GET", f"/sessions/{sid}")[1]["calls"] == 3
    owner.request("DELETE", f"/sessions/{sid}")


def test_the_session_limit_and_idle_reaping_hold_across_workers() -> None:
    small = Server("--workers", "2", "--max-sessions", "3", "--idle-seconds", "2")
    try:
        c = pinned(small, 2)
        sids = [
            c[w].request("POST", "/sessions", {"env": "dataclean"})[1]["session_id"]
            for w in (0, 1, 0)
        ]
        for w in (0, 1):
            status, reply = c[w].request("POST", "/sessions", {"env": "dataclean"})
            assert status == 429 and "session limit reached: 3" in reply["error"], reply
        assert c[1].request("DELETE", f"/sessions/{sids[0]}")[0] == 200  # freed on the other
        assert c[1].request("POST", "/sessions", {"env": "dataclean"})[0] == 201
        assert c[0].request("POST", "/sessions", {"env": "dataclean"})[0] == 429
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and c[0].request("GET", "/health")[1]["sessions"]:
            time.sleep(0.2)
        health = c[1].request("GET", "/health")[1]
        assert health["sessions"] == 0 and health["reaped"] == 3 and health["created"] == 4
        for w in (0, 1):
            assert c[w].request("GET", f"/sessions/{sids[1]}")[0] == 404
        assert c[0].request("POST", "/sessions", {"env": "dataclean"})[0] == 201
    finally:
        err = small.stop()
    assert "Traceback" not in err, err


def _gone(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rpartition(")")[2].split()[0] == "Z"
    except FileNotFoundError:
        return True


def _wait(predicate: Any, seconds: float = 30) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.1)
    return False


def test_a_dead_worker_is_reported_and_replaced() -> None:
    s = Server("--workers", "2", "--max-sessions", "2")
    try:
        c = pinned(s, 2)
        kept = c[0].request("POST", "/sessions", {"env": "dirty-integration"})[1]["session_id"]
        lost = c[1].request("POST", "/sessions", {"env": "dirty-integration"})[1]["session_id"]
        victim = c[0].request("GET", "/health")[1]["workers"][1]["pid"]
        os.kill(victim, signal.SIGKILL)

        def replaced() -> bool:
            w = c[0].request("GET", "/health")[1]["workers"][1]
            return w["restarts"] == 1 and w["ready"] and w["pid"] != victim

        assert _wait(replaced)
        health = c[0].request("GET", "/health")[1]
        assert health["status"] == "ok" and health["sessions"] == 1
        call = {"name": "fetch_page", "arguments": {"cursor": None}}
        assert "records" in c[0].request("POST", f"/sessions/{kept}/call", call)[1]["result"]
        assert c[0].request("POST", f"/sessions/{lost}/call", call)[0] == 404
        fresh = Pinned(s)  # the dead worker's seat was given back: the limit of 2 has room
        assert fresh.request("POST", "/sessions", {"env": "dataclean"})[0] == 201
        fresh.close()
    finally:
        err = s.stop()
    assert f"worker 1 (pid {victim}) was killed by SIGKILL; the 1 sessions it held are lost" in err
    assert "Traceback" not in err, err


def _run_dirs(tmp: Path) -> set[str]:
    return {str(p) for p in tmp.glob("datagauntlet-server-*")}


@pytest.mark.parametrize("how", ["SIGTERM", "SIGKILL"])
def test_stopping_the_supervisor_stops_every_worker(how: str) -> None:
    from websockets.sync.client import connect

    # A temporary folder of its own (short: it holds Unix sockets): servers other tests start
    # at the same time make theirs too.
    tmp_path = Path(tempfile.mkdtemp(prefix="dg-", dir="/tmp"))
    s = Server("--workers", "2", env={"TMPDIR": str(tmp_path)})
    try:
        pids = [w["pid"] for w in s.request("GET", "/health")[1]["workers"]]
        assert len(_run_dirs(tmp_path)) == 1
        with connect(f"ws://127.0.0.1:{s.port}/ws") as ws:  # a live connection, a session
            ws.send(json.dumps({"op": "open", "env": "bad-batch-gate"}))
            assert "session_id" in json.loads(ws.recv())
            os.kill(s.proc.pid, getattr(signal, how))  # the supervisor alone, not its group
            code = s.proc.wait(40)
            assert _wait(lambda: all(_gone(pid) for pid in pids), 40), "a worker outlived it"
    finally:
        err = s.stop()
    assert code == (0 if how == "SIGTERM" else -signal.SIGKILL)
    assert "Traceback" not in err, err
    assert _wait(lambda: not _run_dirs(tmp_path), 10)  # the run directory is removed


def test_a_ctrl_c_that_reaches_a_worker_after_its_lifeline_closed_stops_it_gracefully() -> None:
    # Ctrl-C reaches the whole group: the supervisor closes each worker's lifeline pipe, and the
    # worker may see the closed pipe before its own SIGINT. Stopped workers make that order
    # certain: the supervisor acts first, each worker wakes to both at once.
    s = Server("--workers", "2")
    try:
        pids = [w["pid"] for w in s.request("GET", "/health")[1]["workers"]]
        for pid in pids:
            os.kill(pid, signal.SIGSTOP)
        os.killpg(s.proc.pid, signal.SIGINT)
        time.sleep(0.5)
        for pid in pids:
            os.kill(pid, signal.SIGCONT)
        code = s.proc.wait(40)
    finally:
        err = s.stop()
    assert code == 0
    assert "Traceback" not in err and "CancelledError" not in err, err


@pytest.mark.parametrize("workers", ["0", "-1", "65", "two"])
def test_a_bad_worker_count_is_one_line_and_exit_2(workers: str) -> None:
    out = subprocess.run(
        [*CLI, "--workers", workers], capture_output=True, text=True, env=os.environ, timeout=60
    )
    assert out.returncode == 2 and "--workers" in out.stderr
    assert len(out.stderr.strip().splitlines()) == 1 and "Traceback" not in out.stderr


@pytest.mark.parametrize("workers", ["1", "2"])
def test_a_port_in_use_is_refused_not_shared(workers: str) -> None:
    s = Server("--workers", "2")
    try:
        cli = [sys.executable, "-m", "datagauntlet.cli.main", "server", "--port", str(s.port)]
        out = subprocess.run(
            [*cli, "--workers", workers], capture_output=True, text=True, env=os.environ, timeout=60
        )
        assert out.returncode == 2 and "cannot listen" in out.stderr, out.stderr
        assert s.request("GET", "/health")[0] == 200
    finally:
        s.stop()

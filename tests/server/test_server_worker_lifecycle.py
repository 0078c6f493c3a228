"""A server of several worker processes as a whole: the session limit and idle reaping hold
across workers, a dead worker is reported and replaced, the server stops cleanly however it is
stopped, and a bad worker count or a port in use is refused."""

from __future__ import annotations

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
from worker_connections import Pinned, pinned


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

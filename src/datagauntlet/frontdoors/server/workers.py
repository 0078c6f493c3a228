"""Several server processes behind one address: a supervisor and its workers.

The GIL gives one process one core; a server of `--workers N` runs N worker processes, each a
whole server (app.py on uvicorn) holding its own sessions. The supervisor (this module):

- binds N listening sockets to the one address with `SO_REUSEPORT` (the kernel spreads new
  connections evenly over them) and one private Unix socket per worker, in a run directory
  only this user can enter, and keeps them all open: a worker that restarts takes up the same
  sockets, and connections that arrive meanwhile wait in its backlog instead of failing;
- first checks that nothing listens on the address already (a second server on the same port
  is refused, as with one process, instead of silently sharing it);
- starts each worker (`python -m datagauntlet.frontdoors.server.worker`) with its sockets and
  settings, and keeps a pipe to it open: a worker whose supervisor is gone, killed included,
  sees the pipe close and shuts down;
- announces the URL once every worker is ready;
- reports a worker that dies (on stderr: which, how, how many sessions were lost), frees its
  seats against the session limit, and starts it again; `GET /health` shows each worker and
  its restarts. A worker that dies before it ever served, or five times in a minute, stops the
  server with that message (exit 1): a worker that cannot run is not restarted forever;
- on SIGINT or SIGTERM stops every worker (each finishes or closes its connections within
  GRACEFUL_SECONDS), then removes the run directory.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from datagauntlet.frontdoors.server.listen import GRACEFUL_SECONDS, bind
from datagauntlet.frontdoors.server.sessions import Limits
from datagauntlet.frontdoors.server.tally import Tally

MAX_WORKERS = 64
READY_SECONDS = 120.0  # a loaded machine may take a while to import the stack N times
CRASH_WINDOW = 60.0
CRASHES_ALLOWED = 5


def default_workers() -> int:
    """One worker per core this process may run on, at most 8."""
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        cores = os.cpu_count() or 1
    return max(1, min(cores, 8))


def _log(message: str) -> None:
    print(f"datagauntlet server: {message}", file=sys.stderr, flush=True)


def _how(code: int) -> str:
    if code < 0:
        try:
            return f"was killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"was killed by signal {-code}"
    return f"exited with code {code}"


@dataclass
class Worker:
    index: int
    public: socket.socket
    private: socket.socket
    path: str
    proc: subprocess.Popen[bytes] | None = None
    restarts: int = 0
    deaths: list[float] = field(default_factory=list)


class Supervisor:
    def __init__(
        self,
        host: str,
        port: int,
        limits: Limits,
        allowed_hosts: list[str],
        workers: int,
        allowed_origins: list[str] | None = None,
    ) -> None:
        if not 1 <= workers <= MAX_WORKERS:
            raise ValueError(f"--workers must be 1-{MAX_WORKERS}, got {workers}")
        self.host, self.port, self.limits = host, port, limits
        self.allowed_hosts = allowed_hosts
        self.allowed_origins = list(allowed_origins or [])
        self.count = workers
        self.secret = secrets.token_urlsafe(24)
        self._stop_signal: int | None = None

    # --- sockets ----------------------------------------------------------------------------
    def _listeners(self) -> list[socket.socket]:
        probe = bind(self.host, self.port, listen=False)  # refused if anything listens there
        port = probe.getsockname()[1]
        probe.close()
        socks: list[socket.socket] = []
        try:
            for _ in range(self.count):
                socks.append(bind(self.host, port, reuse_port=True))
        except ValueError:
            for s in socks:
                s.close()
            raise
        return socks

    @staticmethod
    def _private(path: str) -> socket.socket:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.bind(path)
        sock.listen(1024)
        return sock

    # --- workers ----------------------------------------------------------------------------
    def _start(self, w: Worker, run_dir: str, tally: Tally) -> None:
        fds = (w.public.fileno(), w.private.fileno())
        w.proc = subprocess.Popen(
            [sys.executable, "-m", "datagauntlet.frontdoors.server.worker"],
            stdin=subprocess.PIPE,
            pass_fds=fds,
            env=os.environ,
        )
        tally.started(w.index, w.proc.pid, w.restarts)
        settings = {
            "index": w.index,
            "workers": self.count,
            "public_fd": fds[0],
            "private_fd": fds[1],
            "paths": [str(Path(run_dir) / f"worker-{i}.sock") for i in range(self.count)],
            "tally": str(Path(run_dir) / "tally"),
            "secret": self.secret,
            "limits": self.limits.as_dict(),
            "allowed_hosts": self.allowed_hosts,
            "allowed_origins": self.allowed_origins,
        }
        assert w.proc.stdin is not None
        w.proc.stdin.write(json.dumps(settings).encode() + b"\n")
        w.proc.stdin.flush()  # the pipe stays open: its end is the worker's signal to stop

    def _on_signal(self, sig: int, frame: Any) -> None:
        self._stop_signal = sig

    def run(self, announce: Callable[[str], None]) -> int:
        run_dir = tempfile.mkdtemp(prefix="datagauntlet-server-")  # mode 0700
        listeners: list[socket.socket] = []
        workers: list[Worker] = []
        tally: Tally | None = None
        previous = {
            sig: signal.signal(sig, self._on_signal) for sig in (signal.SIGINT, signal.SIGTERM)
        }
        try:
            listeners = self._listeners()
            port = listeners[0].getsockname()[1]
            tally = Tally.create(str(Path(run_dir) / "tally"), self.count)
            for i, public in enumerate(listeners):
                path = str(Path(run_dir) / f"worker-{i}.sock")
                workers.append(Worker(i, public, self._private(path), path))
            for w in workers:
                self._start(w, run_dir, tally)
            if not self._wait_ready(workers, tally):
                return 1 if self._stop_signal is None else 0
            announce(f"http://{self.host}:{port} ({self.count} workers)")
            return self._watch(workers, run_dir, tally)
        finally:
            self._stop(workers)
            for sig, handler in previous.items():
                signal.signal(sig, handler)
            for w in workers:
                w.private.close()
            for s in listeners:
                s.close()
            if tally is not None:
                tally.close()
            shutil.rmtree(run_dir, ignore_errors=True)

    def _wait_ready(self, workers: list[Worker], tally: Tally) -> bool:
        deadline = time.monotonic() + READY_SECONDS
        while self._stop_signal is None:
            for w in workers:
                assert w.proc is not None
                code = w.proc.poll()
                if code is not None:
                    _log(f"worker {w.index} {_how(code)} before it was ready; stopping")
                    return False
            if all(tally.ready(w.index) for w in workers):
                return True
            if time.monotonic() > deadline:
                _log(f"workers not ready after {READY_SECONDS:g} s; stopping")
                return False
            time.sleep(0.02)
        return False

    def _watch(self, workers: list[Worker], run_dir: str, tally: Tally) -> int:
        while self._stop_signal is None:
            time.sleep(0.1)
            for w in workers:
                assert w.proc is not None
                code = w.proc.poll()
                if code is None or self._stop_signal is not None:
                    continue
                lost = tally.died(w.index)
                now = time.monotonic()
                w.deaths = [t for t in w.deaths if now - t < CRASH_WINDOW] + [now]
                if len(w.deaths) >= CRASHES_ALLOWED:
                    _log(
                        f"worker {w.index} (pid {w.proc.pid}) {_how(code)}: "
                        f"{len(w.deaths)} times in {CRASH_WINDOW:g} s; stopping the server"
                    )
                    return 1
                w.restarts += 1
                _log(
                    f"worker {w.index} (pid {w.proc.pid}) {_how(code)}; the {lost} sessions it "
                    f"held are lost; starting it again (restart {w.restarts})"
                )
                if w.proc.stdin is not None:
                    w.proc.stdin.close()
                self._start(w, run_dir, tally)
        return 0

    def _stop(self, workers: list[Worker]) -> None:
        alive = [w.proc for w in workers if w.proc is not None and w.proc.poll() is None]
        for proc in alive:
            if proc.stdin is not None:
                proc.stdin.close()  # the worker's own way out, if a signal missed it
            if self._stop_signal != signal.SIGINT:  # Ctrl-C reached the whole group already
                proc.send_signal(signal.SIGTERM)
        deadline = time.monotonic() + GRACEFUL_SECONDS + 5
        for proc in alive:
            try:
                proc.wait(max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                _log(f"worker pid {proc.pid} did not stop in time; killing it")
                proc.kill()
                proc.wait()

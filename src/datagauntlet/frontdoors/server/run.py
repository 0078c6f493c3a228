"""Binding and running the session server (uvicorn), announcing its URL once it listens.

`workers=1` serves in this process; more start a supervisor and that many worker processes
behind the one address (workers.py).
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

from datagauntlet.frontdoors.malloc_arenas import cap_malloc_arenas
from datagauntlet.frontdoors.server import heap
from datagauntlet.frontdoors.server.listen import GRACEFUL_SECONDS, bind
from datagauntlet.frontdoors.server.sessions import Limits, SessionStore


def need_uvicorn() -> Any:
    try:
        import uvicorn
    except ImportError:
        raise ValueError(
            "the server needs uvicorn and starlette: pip install 'datagauntlet[server]'"
        ) from None
    return uvicorn


def uvicorn_server(app: Any, limits: Limits, supervised: bool = False) -> Any:
    """uvicorn's server for `app`; `supervised` for a worker whose supervisor times its stop."""
    uvicorn = need_uvicorn()
    # Before any episode thread starts: every thread would get an arena of its own otherwise,
    # each keeping the high-water mark of the worlds built on it.
    cap_malloc_arenas()
    # Every call hops between the event loop and its episode's thread; a shorter switch interval
    # keeps a busy thread from holding the GIL 5 ms while the loop has replies to send.
    sys.setswitchinterval(0.0005)
    # Deflate costs more CPU than the bytes it saves on loopback-sized JSON replies.
    config = uvicorn.Config(
        app,
        log_level="warning",
        lifespan="on",
        ws_max_size=limits.max_message_bytes,
        ws_per_message_deflate=False,
        timeout_graceful_shutdown=GRACEFUL_SECONDS,
    )
    config.load()  # import the protocol and loop modules now, before the heap is frozen
    if supervised:
        return _supervised_class(uvicorn)(config)
    return uvicorn.Server(config)


def _supervised_class(uvicorn: Any) -> Any:
    class SupervisedServer(uvicorn.Server):  # type: ignore[misc, name-defined]
        """Any stop signal asks for a graceful stop, never a forced one.

        uvicorn reads a SIGINT after `should_exit` as a second Ctrl-C and skips the app's
        shutdown (its lifespan task is then cancelled, with a traceback). A worker is told to
        stop twice at once: its supervisor closes the lifeline pipe and a Ctrl-C reaches the
        whole process group. The supervisor kills a worker that overstays its grace.
        """

        def handle_exit(self, sig: int, frame: Any) -> None:
            self._captured_signals.append(sig)
            self.should_exit = True

    return SupervisedServer


def announce_default(url: str) -> None:
    print(f"datagauntlet server at {url}", file=sys.stderr, flush=True)


def serve(
    host: str,
    port: int,
    limits: Limits,
    allowed_hosts: list[str],
    announce: Callable[[str], None] | None = None,
    workers: int = 1,
    allowed_origins: list[str] | None = None,
) -> int:
    need_uvicorn()
    origins = list(allowed_origins or [])
    if workers > 1:
        from datagauntlet.frontdoors.server.workers import Supervisor

        return Supervisor(host, port, limits, allowed_hosts, workers, origins).run(
            announce or announce_default
        )
    from datagauntlet.frontdoors.server.app import build_app

    sock = bind(host, port)
    store = SessionStore(limits)
    server = uvicorn_server(build_app(store, allowed_hosts, None, origins), limits)
    heap.settle(store)
    (announce or announce_default)(f"http://{host}:{sock.getsockname()[1]}")
    server.run(sockets=[sock])  # run() sets up uvloop where installed
    return 0

"""One worker process of a server with several (started by workers.py, not by hand).

It reads its settings as one JSON line on stdin, serves the app on the two sockets it was
given (the server's address and its private one), and stops when told to by a signal or when
stdin closes (the supervisor is gone).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import sys
import threading
from typing import Any

_stopping: list[int] = []


def _early_signal(sig: int, frame: Any) -> None:
    _stopping.append(sig)  # a signal before the server runs: stop quietly once it is built


def _watch_lifeline(server: Any, run_dir: str) -> None:
    try:
        while sys.stdin.buffer.read(4096):
            pass
    except (OSError, ValueError):
        pass
    server.should_exit = True  # checked by uvicorn's main loop every 0.1 s
    # The supervisor closes the pipe when it stops the server and then removes its run
    # directory; if it was killed instead, nobody else would (removing it twice is harmless).
    shutil.rmtree(run_dir, ignore_errors=True)


def main() -> int:
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, _early_signal)
    settings = json.loads(sys.stdin.buffer.readline() or b"null")
    if not isinstance(settings, dict):
        return 2

    from datagauntlet.frontdoors.server import heap
    from datagauntlet.frontdoors.server.app import build_app
    from datagauntlet.frontdoors.server.forward import Peers
    from datagauntlet.frontdoors.server.run import uvicorn_server
    from datagauntlet.frontdoors.server.sessions import Limits, SessionStore
    from datagauntlet.frontdoors.server.tally import Tally

    index = settings["index"]
    limits = Limits(**settings["limits"])
    tally = Tally.attach(settings["tally"], settings["workers"], index)
    peers = Peers(index, settings["paths"], settings["secret"], limits.max_body_bytes)
    store = SessionStore(limits, tally)
    app = build_app(store, settings["allowed_hosts"], peers, settings["allowed_origins"])
    public = socket.socket(fileno=settings["public_fd"])
    private = socket.socket(fileno=settings["private_fd"])
    if _stopping:
        return 0
    server = uvicorn_server(app, limits, supervised=True)
    heap.settle(store)  # before the first request: every env loaded, the start-up heap frozen
    run_dir = os.path.dirname(settings["tally"])
    threading.Thread(target=_watch_lifeline, args=(server, run_dir), daemon=True).start()
    # uvicorn restores the handlers above when it stops and re-raises the signal it caught:
    # they swallow it, so a worker told to stop exits 0, without a traceback.
    server.run(sockets=[public, private])
    tally.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())

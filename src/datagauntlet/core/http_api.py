"""The contract of an env's native HTTP API (its registration's `http_api` hook).

An env that has one writes only the request handling: a function from (episode, request) to a
response. The `serve` door owns the server (sockets, body caps, threads) and runs the handler
on the episode's own thread, one request at a time, so a handler calls `ep.call` and
`ep.score` directly and needs no lock. A response may ask for a real stall (`delay`): the door
waits that long outside the episode's thread, so a slow request never blocks the others.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from datagauntlet.core.episode import Episode


@dataclass(frozen=True)
class HttpRequest:
    method: str  # "GET", "POST", ...
    path: str  # without the query string
    query: Mapping[str, list[str]] = field(default_factory=dict)
    body: bytes = b""


@dataclass(frozen=True)
class HttpResponse:
    status: int
    body: dict[str, Any]
    delay: float = 0.0  # seconds the client waits before getting this answer
    headers: Mapping[str, str] = field(default_factory=dict)  # e.g. Allow, with a 405


HttpHandler = Callable[[Episode[Any], HttpRequest], HttpResponse]

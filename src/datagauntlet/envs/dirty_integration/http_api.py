"""The partner API as a native HTTP API (the env's `http_api` hook; `datagauntlet serve`).

    GET  /records[?cursor=C]   a page; 429 with no Retry-After once the quota is spent;
                                a timeout is a real stall, then 504
    POST /submit               {"records": [...]}: accepted once
    GET  /score                the episode's score, once it is over (409 before: a score
                                mid-episode would show the true record count)

Every request goes through `Episode.call`, so the HTTP API and the in-process tools share one
world, one action log and one grader. Only the request handling lives here; the `serve` door
owns the server and runs this on the episode's own thread.
"""

from __future__ import annotations

from typing import Any

from datagauntlet.core.episode import Episode, loads_strict
from datagauntlet.core.http_api import HttpRequest, HttpResponse

ROUTES = "GET /records, POST /submit, GET /score"


def handle(ep: Episode[Any], request: HttpRequest) -> HttpResponse:
    if request.method == "GET" and request.path == "/records":
        cursors = request.query.get("cursor", [])
        if len(cursors) > 1:
            return HttpResponse(400, {"error": "give cursor at most once"})
        response = _call(ep, "fetch_page", {"cursor": cursors[0] if cursors else None})
        if response.status == 504:  # a real stall: the client waits, then gets nothing
            return HttpResponse(504, response.body, ep.env.config.http_timeout_seconds)
        return response
    if request.method == "GET" and request.path == "/score":
        if not ep.done:
            return HttpResponse(409, {"error": "the score is shown once the episode is over"})
        return HttpResponse(200, ep.score().as_dict())
    if request.method == "POST" and request.path == "/submit":
        try:
            body = loads_strict(request.body.decode("utf-8") or "null")
        except ValueError as exc:  # UnicodeDecodeError included
            return HttpResponse(400, {"error": f"body is not valid JSON: {exc}"})
        args = body if isinstance(body, dict) else {"records": body}
        return _call(ep, "submit_records", args)
    return HttpResponse(404, {"error": f"no such endpoint {request.path!r}; see {ROUTES}"})


def _call(ep: Episode[Any], name: str, args: dict[str, Any]) -> HttpResponse:
    """One tool call as an HTTP answer; 409 once the episode is over."""
    was_over = ep.done
    result = ep.call(name, args)
    if was_over:
        return HttpResponse(409, result)
    if "error" not in result:
        return HttpResponse(200, result)
    status = result.get("status")
    return HttpResponse(status if isinstance(status, int) else 400, result)

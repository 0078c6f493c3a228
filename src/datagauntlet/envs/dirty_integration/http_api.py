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

from datagauntlet.core.call_text import loads_strict
from datagauntlet.core.episode import Episode
from datagauntlet.core.http_api import HttpRequest, HttpResponse

# path: (method, query parameters it takes)
ENDPOINTS: dict[str, tuple[str, tuple[str, ...]]] = {
    "/records": ("GET", ("cursor",)),
    "/submit": ("POST", ()),
    "/score": ("GET", ()),
}
ROUTES = ", ".join(f"{method} {path}" for path, (method, _) in ENDPOINTS.items())
SUBMIT_SHAPE = 'a JSON object {"records": [...]}'


def handle(ep: Episode[Any], request: HttpRequest) -> HttpResponse:
    endpoint = ENDPOINTS.get(request.path)
    if endpoint is None:
        shown = request.path[:200]
        return HttpResponse(404, {"error": f"no such endpoint {shown!r}; endpoints: {ROUTES}"})
    method, params = endpoint
    if request.method != method:
        return HttpResponse(
            405,
            {"error": f"{request.method[:20]} is not allowed on {request.path}; "
             f"endpoints: {ROUTES}"},
            headers={"Allow": method},
        )  # fmt: skip
    problem = _query_problem(request, params)
    if problem:
        return HttpResponse(400, {"error": problem})
    if request.path == "/records":
        cursors = request.query.get("cursor", [])
        response = _call(ep, "fetch_page", {"cursor": cursors[0] if cursors else None})
        if response.status == 504:  # a real stall: the client waits, then gets nothing
            return HttpResponse(504, response.body, ep.env.config.http_timeout_seconds)
        return response
    if request.path == "/score":
        if not ep.done:
            return HttpResponse(409, {"error": "the score is shown once the episode is over"})
        return HttpResponse(200, ep.score().as_dict())
    if not request.body.strip():
        return HttpResponse(400, {"error": f"a body is required: {SUBMIT_SHAPE}"})
    try:
        body = loads_strict(request.body.decode("utf-8"))
    except ValueError as exc:  # UnicodeDecodeError included
        return HttpResponse(400, {"error": f"body is not valid JSON ({exc}); send {SUBMIT_SHAPE}"})
    if not isinstance(body, dict):
        return HttpResponse(400, {"error": f"the body must be {SUBMIT_SHAPE}"})
    return _call(ep, "submit_records", body)


def _query_problem(request: HttpRequest, params: tuple[str, ...]) -> str | None:
    """Why the query string is wrong for this endpoint (unknown or repeated), or None."""
    expected = ", ".join(params) or "none"
    for key, values in request.query.items():
        if key not in params:
            return f"unknown query parameter {key[:40]!r}; expected: {expected}"
        if len(values) > 1:
            return f"give {key} at most once"
    return None


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

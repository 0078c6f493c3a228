"""JSON replies and request bodies read within a limit: shared by the app and OpenEnv's API.

Starlette is imported when a reply is made, so importing this module loads no web framework.
"""

from __future__ import annotations

from typing import Any

from datagauntlet.frontdoors.server.protocol import BadRequest, dumps, parse_json


def json_reply(body: Any, status: int = 200) -> Any:
    from starlette.responses import Response

    return Response(dumps(body), status_code=status, media_type="application/json")


async def read_body(request: Any, limit: int) -> Any:
    declared = request.headers.get("content-length")
    if declared is not None:
        if not declared.isdigit():
            raise BadRequest(400, f"Content-Length must be a number of bytes, got {declared!r}")
        if int(declared) > limit:
            raise BadRequest(413, f"body of {int(declared):,} bytes is over the limit of {limit:,}")
    from starlette.requests import ClientDisconnect

    chunks, size = [], 0
    try:
        async for chunk in request.stream():
            size += len(chunk)
            if size > limit:
                raise BadRequest(413, f"body is over the limit of {limit:,} bytes")
            chunks.append(chunk)
    except ClientDisconnect:  # the client hung up mid-body: nothing to answer, nothing to log
        raise BadRequest(400, "the client closed the connection before its body ended") from None
    return parse_json(b"".join(chunks), limit)

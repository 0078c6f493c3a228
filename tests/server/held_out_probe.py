"""What a held-out leak test needs: a secret for this process and its children, the seeds it
must never find, a search for them in every byte, and the reference policy driven through any
door by a step function."""

from __future__ import annotations

import contextlib
import http.client
import json
import os
from collections.abc import Callable, Iterator
from typing import Any

import datagauntlet as dg
from datagauntlet.core import seeding
from datagauntlet.core.replay import next_tool_call

SECRET = "held-out-doors-test-secret-0001"
MAX_STEPS = 400


@contextlib.contextmanager
def secret_in_environ() -> Iterator[None]:
    """The secret in os.environ (so servers started as children hold it too), then restored."""
    saved = {k: os.environ.get(k) for k in (seeding.SECRET_ENV, seeding.SECRET_FILE_ENV)}
    os.environ.pop(seeding.SECRET_FILE_ENV, None)
    os.environ[seeding.SECRET_ENV] = SECRET
    try:
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def held_out_seeds(n: int = 4) -> dict[int, str]:
    """Every held-out seed the doors could hold, by the task it belongs to."""
    out = {}
    for env_id in dg.list_envs():
        env = dg.make(env_id)
        for split in seeding.HELD_OUT_SPLITS:
            for task in env.tasks(split, n):
                out[task.seed] = f"{env_id} {task.id}"
    return out


def seed_forms(seed: int) -> list[bytes]:
    """The seed as decimal and as hex, every way a reply or a log could spell it."""
    return [f.encode() for f in {str(seed), f"{seed:x}", f"{seed:X}", f"{seed:016x}"}]


def leaks(blobs: list[bytes], seeds: dict[int, str]) -> list[str]:
    """Each (task, form) of a held-out seed found in any of the bytes."""
    found = []
    for seed, where in seeds.items():
        for form in seed_forms(seed):
            if any(form in blob for blob in blobs):
                found.append(f"{where}: seed {seed} as {form.decode()}")
    return found


def raw_request(port: int, method: str, path: str, body: Any = None) -> tuple[int, bytes]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    try:
        data = None if body is None else json.dumps(body).encode()
        headers = {"Content-Type": "application/json"} if data is not None else {}
        conn.request(method, path, body=data, headers=headers)
        resp = conn.getresponse()
        return resp.status, resp.read()
    finally:
        conn.close()


Step = Callable[[str, Any], tuple[dict[str, Any], dict[str, Any] | None]]


def play_reference(env_id: str, opening: dict[str, Any], step: Step) -> dict[str, Any]:
    """Drive the env's reference policy through `step(name, arguments) -> (result, score or
    None)` from the door's opening; the final score."""
    env = dg.make(env_id)
    policy = env.policies()[env.reference]
    results: list[dict[str, Any]] = []
    for _ in range(MAX_STEPS):
        call = next_tool_call(
            policy, opening["system_prompt"], opening["prompt"], opening["tools"], results
        )
        assert call is not None, "the reference stopped before the end"
        result, score = step(call.name, call.arguments)
        if score is not None:
            return score
        results.append(result)
    raise AssertionError(f"no end after {MAX_STEPS} steps")

"""The session server over real HTTP: every env's reference policy scores exactly as in
process, many sessions at once, and every mistake answered in JSON with the right status."""

from __future__ import annotations

import json
import threading

import pytest
from server_helpers import RemoteEpisode, Server

import datagauntlet as dg
from datagauntlet.core.runner import play


@pytest.fixture(scope="module")
def server():
    s = Server("--max-sessions", "64")
    yield s
    s.stop()


@pytest.mark.parametrize("env_id", dg.list_envs())
def test_each_env_scores_exactly_as_in_process(server: Server, env_id: str) -> None:
    env = dg.make(env_id)
    policy = env.policies()[env.reference]
    for index in (0, 1):
        remote = RemoteEpisode(server, env_id, index)
        policy(remote)
        assert remote.done and remote.score is not None
        expected = play(env, env.reference, env.make_task("eval", index))
        assert remote.score["reward"] == expected.reward
        assert {k: c["value"] for k, c in remote.score["components"].items()} == expected.components
        status, score = server.request("GET", f"/sessions/{remote.id}/score")
        assert status == 200 and score == remote.score
        assert server.request("DELETE", f"/sessions/{remote.id}")[0] == 200


def test_sessions_run_at_once_without_cross_talk(server: Server) -> None:
    env = dg.make("dirty-integration")
    results: dict[int, float] = {}

    def run(i: int) -> None:
        remote = RemoteEpisode(server, "dirty-integration", i % 8)
        env.policies()["careful"](remote)
        results[i] = remote.score["reward"] if remote.score else -1.0
        server.request("DELETE", f"/sessions/{remote.id}")

    threads = [threading.Thread(target=run, args=(i,)) for i in range(24)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert results == {i: 1.0 for i in range(24)}
    assert server.request("GET", "/health")[1]["sessions"] == 0


def test_no_score_before_the_end(server: Server) -> None:
    remote = RemoteEpisode(server, "dirty-integration")
    status, body = server.request("GET", f"/sessions/{remote.id}/score")
    assert status == 409 and "not over" in body["error"]
    state = server.request("GET", f"/sessions/{remote.id}")[1]
    assert set(state) == {"session_id", "env", "split", "task", "done", "calls", "idle_seconds"}
    server.request("DELETE", f"/sessions/{remote.id}")


@pytest.mark.parametrize(
    ("method", "path", "body", "status", "words"),
    [
        ("POST", "/sessions", b"{not json", 400, "not valid JSON"),
        ("POST", "/sessions", b'{"env": "dataclean", "env": "x"}', 400, "duplicate key"),
        ("POST", "/sessions", b"[1, 2]", 400, "JSON object"),
        ("POST", "/sessions", b'{"env": "dataclean", "seeed": 1}', 400, "unknown field 'seeed'"),
        ("POST", "/sessions", b'{"env": "nope"}', 400, "unknown environment"),
        ("POST", "/sessions", b'{"env": "dataclean", "split": "x"}', 400, "unknown split"),
        (
            "POST",
            "/sessions",
            b'{"env": "dirty-integration", "config": {"profile": 3}}',
            400,
            "profile",
        ),
        ("POST", "/sessions", b'{"env": "dataclean", "task": -1}', 400, "task must be"),
        ("POST", "/sessions", b'{"env": "dataclean", "task": true}', 400, "task must be int"),
        ("POST", "/sessions/nope/call", b'{"name": "x"}', 404, "no such session"),
        ("GET", "/sessions/nope/score", None, 404, "no such session"),
        ("DELETE", "/sessions/nope", None, 404, "no such session"),
        ("PUT", "/sessions", b"{}", 405, "not allowed"),
        ("GET", "/nowhere", None, 404, "no route"),
        ("POST", "/sessions", b"x" * (9 * 1024 * 1024), 413, "over the limit"),
    ],
)
def test_mistakes_get_json_errors(server, method, path, body, status, words) -> None:
    got, reply = server.request(method, path, raw=body)
    assert got == status, reply
    assert isinstance(reply, dict) and words in reply["error"]


def test_bad_tool_calls_reach_the_episode_and_change_nothing(server: Server) -> None:
    remote = RemoteEpisode(server, "dirty-integration")
    for args in ('{"cursor": nul', '{"cursor": null, "cursor": "x"}', {"cursr": None}):
        status, reply = server.request(
            "POST", f"/sessions/{remote.id}/call", {"name": "fetch_page", "arguments": args}
        )
        assert status == 200 and "error" in reply["result"] and reply["done"] is False
    status, reply = server.request("POST", f"/sessions/{remote.id}/call", {"name": "rm_rf"})
    assert "unknown tool" in reply["result"]["error"]
    assert server.request("GET", f"/sessions/{remote.id}")[1]["calls"] == 4
    server.request("DELETE", f"/sessions/{remote.id}")


def test_a_foreign_host_header_is_refused(server: Server) -> None:
    status, _ = server.request("GET", "/health", headers={"Host": "evil.example:80"})
    assert status == 403


def test_the_session_limit_is_a_clear_429() -> None:
    small = Server("--max-sessions", "2")
    try:
        a, b = RemoteEpisode(small, "dataclean"), RemoteEpisode(small, "dataclean")
        status, reply = small.request("POST", "/sessions", {"env": "dataclean"})
        assert status == 429 and "session limit reached: 2" in reply["error"]
        small.request("DELETE", f"/sessions/{a.id}")
        assert small.request("POST", "/sessions", {"env": "dataclean"})[0] == 201
        del b
    finally:
        small.stop()


def test_idle_sessions_are_reaped() -> None:
    quick = Server("--idle-seconds", "0.3")
    try:
        remote = RemoteEpisode(quick, "bad-batch-gate")
        import time

        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and quick.request("GET", "/health")[1]["sessions"]:
            time.sleep(0.1)
        health = quick.request("GET", "/health")[1]
        assert health["sessions"] == 0 and health["reaped"] == 1
        status, _reply = quick.request(
            "POST", f"/sessions/{remote.id}/call", {"name": "list_batches"}
        )
        assert status == 404
    finally:
        err = quick.stop()
    assert "Traceback" not in err, err


def test_final_answer_where_the_env_reads_one(server: Server) -> None:
    status, opening = server.request("POST", "/sessions", {"env": "dataclean"})
    assert opening["reads_final_answer"] is True
    status, reply = server.request(
        "POST", f"/sessions/{opening['session_id']}/answer", {"text": "[]"}
    )
    assert status == 200 and reply["done"] is True and "score" in reply
    di = RemoteEpisode(server, "dirty-integration")
    status, reply = server.request("POST", f"/sessions/{di.id}/answer", {"text": "done"})
    assert status == 400 and "reads no final answer" in reply["error"]
    for sid in (opening["session_id"], di.id):
        server.request("DELETE", f"/sessions/{sid}")
    assert json.dumps(reply)

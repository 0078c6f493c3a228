"""`datagauntlet eval` over real HTTP against the scripted model reproduces in-process scores."""

from __future__ import annotations

import asyncio
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, ClassVar

import pytest
from fd_helpers import replayable_pairs

import datagauntlet as dg
from datagauntlet.cli.main import main
from datagauntlet.core.runner import play
from datagauntlet.frontdoors.evaluate import EvalSpec, load_records, run_eval
from datagauntlet.frontdoors.live import LiveEpisode
from datagauntlet.frontdoors.loop import LoopResult, Reply, run_loop
from datagauntlet.frontdoors.models import OpenAIModel, PolicyModel

N_TASKS = 3
BIG_TURNS = "1000"  # so no turn limit binds and in-process play is the exact reference


def _results(out: Path) -> list[dict[str, Any]]:
    return sorted(load_records(out / "results.jsonl"), key=lambda r: (r["task_id"], r["rollout"]))


def _assert_matches_in_process(env: dg.Environment, policy: str, records: list[dict]) -> None:
    tasks = {t.id: t for t in env.tasks("eval", N_TASKS)}
    assert sorted(r["task_id"] for r in records) == sorted(tasks)
    for rec in records:
        expected = play(env, policy, tasks[rec["task_id"]])
        assert rec["status"] == "ok", rec["error"]
        assert rec["reward"] == expected.reward, rec["task_id"]
        assert rec["components"] == expected.components
        assert rec["metrics"] == expected.metrics
        assert rec["seed"] == tasks[rec["task_id"]].seed
        # every call the policy made in process was a turn over HTTP
        assert rec["turns"] == expected.calls


@pytest.mark.parametrize(("env_id", "policy"), replayable_pairs())
def test_eval_over_http_reproduces_in_process_scores(
    env_id: str, policy: str, mock_model: Any, tmp_path: Path
) -> None:
    env = dg.make(env_id)
    server = mock_model(env)
    code = main(
        ["eval", "--env", env_id, "--model", policy, "--base-url", server.base_url,
         "-n", str(N_TASKS), "--max-turns", BIG_TURNS, "--concurrency", "3",
         "--out", str(tmp_path), "--json"]
    )  # fmt: skip
    assert code == 0
    records = _results(tmp_path)
    _assert_matches_in_process(env, policy, records)
    assert all(r["model"] == policy and r["usage"]["total_tokens"] > 0 for r in records)
    assert server.requests == sum(r["turns"] for r in records)


@pytest.mark.parametrize(("env_id", "policy"), replayable_pairs())
def test_agent_flag_plays_the_policy_through_the_same_loop(
    env_id: str, policy: str, tmp_path: Path
) -> None:
    env = dg.make(env_id)
    code = main(["eval", "--env", env_id, "--agent", policy, "-n", str(N_TASKS),
                 "--max-turns", BIG_TURNS, "--out", str(tmp_path), "--json"])  # fmt: skip
    assert code == 0
    _assert_matches_in_process(env, policy, _results(tmp_path))


def test_config_pairs_reach_the_env_and_the_record(tmp_path: Path) -> None:
    env_id = "dirty-integration"
    assert main(["eval", "--env", env_id, "profile=clean", "-n", "1", "--out", str(tmp_path)]) == 0
    (rec,) = _results(tmp_path)
    assert rec["config"]["profile"] == "clean"
    assert rec["messages"][0]["role"] == "system" and rec["messages"][1]["role"] == "user"
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["n"] == 1 and "ci95" not in summary


def test_bad_config_is_a_clear_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["eval", "--env", "dirty-integration", "profile=nonsense"]) == 2
    assert "profile" in capsys.readouterr().err
    assert main(["eval", "--env", "no-such-env"]) == 2


class ScriptedModel:
    """A model that sends the given assistant messages in order."""

    def __init__(self, replies: list[dict[str, Any]]) -> None:
        self.replies = list(replies)

    async def complete(self, messages: list, tools: list) -> Reply:
        return Reply(self.replies.pop(0), {"prompt_tokens": 1, "completion_tokens": 1})


def _call(name: Any, arguments: Any, call_id: str = "c1") -> dict[str, Any]:
    return {"role": "assistant", "content": None, "tool_calls": [
        {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}
    ]}  # fmt: skip


def test_malformed_tool_calls_go_back_to_the_model_as_errors() -> None:
    env = dg.make("dirty-integration")
    live = LiveEpisode.open_sync(env, env.tasks("eval", 1)[0])
    ep = live.ep
    before = ep.fingerprint()
    model = ScriptedModel([
        _call(ep.tool_names[0], "{not json", "a"),
        _call("no_such_tool", "{}", "b"),
        _call(ep.tool_names[0], '{"bogus": 1}', "c"),
        {"role": "assistant", "tool_calls": [{"id": "d", "type": "function"}]},
        {"role": "assistant", "content": "I give up."},
    ])  # fmt: skip
    result = LoopResult(messages=[])
    asyncio.run(run_loop(live, model, 10, result))
    tool_msgs = [m for m in result.messages if m["role"] == "tool"]
    assert [m["tool_call_id"] for m in tool_msgs] == ["a", "b", "c", "d"]
    errors = [json.loads(m["content"])["error"] for m in tool_msgs]
    assert "not valid JSON" in errors[0] and "unknown tool" in errors[1]
    assert "argument" in errors[2]
    assert ep.fingerprint() == before
    assert result.stop == "no_tool_call" and result.turns == 5
    assert ep.score().reward == 0.0


def test_max_turns_stops_the_loop_and_scores_what_happened() -> None:
    env = dg.make("dirty-integration")
    live = LiveEpisode.open_sync(env, env.tasks("eval", 1)[0])
    ep = live.ep
    model = PolicyModel(env.policies()[env.reference])
    result = LoopResult(messages=[])
    asyncio.run(run_loop(live, model, 2, result))
    assert result.stop == "max_turns" and result.turns == 2 and not ep.done
    assert ep.calls == 2 and ep.score().reward < 1.0


def test_max_turns_defaults_to_the_env_config(tmp_path: Path) -> None:
    assert main(["eval", "--env", "dirty-integration", "max_turns=3", "-n", "1",
                 "--out", str(tmp_path)]) == 0  # fmt: skip
    (rec,) = _results(tmp_path)
    assert rec["turns"] == 3 and rec["stop"] == "max_turns"


class _Flaky(BaseHTTPRequestHandler):
    """Fails the first `fail_first` requests with 503, then answers from a scripted model."""

    protocol_version = "HTTP/1.1"
    state: ClassVar[dict[str, Any]] = {}

    def log_message(self, *args: Any) -> None:
        return

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        with self.state["lock"]:
            self.state["seen"] += 1
            fail = self.state["seen"] <= self.state["fail_first"]
        status, payload = (
            (503, {"error": {"message": "busy"}})
            if fail
            else (200, self.state["mock"].complete(body))
        )
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


def _flaky_eval(tmp_path: Path, fail_first: int, retries: int) -> list[dict[str, Any]]:
    from datagauntlet.frontdoors.mock_model import MockModelServer

    env = dg.make("dirty-integration", profile="clean")
    _Flaky.state = {"lock": threading.Lock(), "seen": 0, "fail_first": fail_first,
                    "mock": MockModelServer(env)}  # fmt: skip
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Flaky)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{httpd.server_address[1]}/v1"

        async def go() -> list[dict[str, Any]]:
            model = OpenAIModel("careful", url, retries=retries, backoff=0.01)
            try:
                spec = EvalSpec(n=1, label="careful", concurrency=1)
                return (await run_eval(env, spec, model, tmp_path)).records
            finally:
                await model.close()

        return asyncio.run(go())
    finally:
        httpd.shutdown()
        httpd.server_close()
        _Flaky.state["mock"].close()


def test_transient_errors_are_retried_with_backoff(tmp_path: Path) -> None:
    (rec,) = _flaky_eval(tmp_path, fail_first=3, retries=4)
    assert rec["status"] == "ok" and rec["reward"] == 1.0


def test_a_rollout_that_still_fails_is_recorded_not_dropped(tmp_path: Path) -> None:
    (rec,) = _flaky_eval(tmp_path, fail_first=10_000, retries=2)
    assert rec["status"] == "failed" and rec["reward"] == 0.0 and rec["stop"] == "error"
    assert "503" in rec["error"] or "busy" in rec["error"]
    assert _Flaky.state["seen"] == 3  # one try and two retries
    assert load_records(tmp_path / "results.jsonl") == [rec]


def test_resume_skips_finished_rollouts_and_reruns_failed_ones(tmp_path: Path) -> None:
    env = dg.make("dirty-integration")
    spec = EvalSpec(n=3, rollouts=2, label="agent:careful")
    model = PolicyModel(env.policies()["careful"])
    first = asyncio.run(run_eval(env, spec, model, tmp_path))
    assert first.ran == 6
    path = tmp_path / "results.jsonl"
    lines = path.read_text().splitlines()
    broken = json.loads(lines[1])
    broken.update(status="failed", reward=0.0)
    # drop one rollout, mark one failed, and leave a torn last line
    path.write_text("\n".join([lines[0], json.dumps(broken), *lines[3:]]) + '\n{"torn')
    again = asyncio.run(
        run_eval(env, EvalSpec(**{**spec.__dict__, "resume": True}), model, tmp_path)
    )
    assert again.ran == 2 and again.skipped == 4
    assert len(again.records) == 6 and all(r["status"] == "ok" for r in again.records)
    assert [r["reward"] for r in again.records] == [r["reward"] for r in first.records]


def test_confidence_interval_when_rollouts_exceed_one(tmp_path: Path) -> None:
    from datagauntlet.frontdoors.summary import summarize_records

    env = dg.make("dirty-integration", profile="hostile")
    model = PolicyModel(env.policies()["naive"])
    out = asyncio.run(run_eval(env, EvalSpec(n=4, rollouts=2, label="x"), model, tmp_path))
    summary = summarize_records(out.records, 2)
    lo, hi = summary["ci95"]
    assert lo < summary["mean_reward"] < hi
    assert summary["n"] == 8 and summary["tasks"] == 4


def test_many_concurrent_rollouts_over_http_without_failures(
    mock_model: Any, tmp_path: Path
) -> None:
    env = dg.make("dirty-integration", profile="clean")
    server = mock_model(env)
    code = main(["eval", "--env", "dirty-integration", "profile=clean", "--model", "careful",
                 "--base-url", server.base_url, "-n", "96", "--concurrency", "96",
                 "--out", str(tmp_path), "--json"])  # fmt: skip
    assert code == 0
    records = _results(tmp_path)
    assert len(records) == 96 and all(r["status"] == "ok" and r["reward"] == 1.0 for r in records)


def test_resume_refuses_results_of_another_run(tmp_path: Path) -> None:
    args = ["eval", "--env", "dirty-integration", "-n", "1", "--out", str(tmp_path)]
    assert main(args) == 0
    assert main([*args, "profile=hostile", "--resume"]) == 2  # another config
    assert main([*args, "--agent", "naive", "--resume"]) == 2  # another model
    assert main([*args, "--resume"]) == 0


def _thread_affine(env: dg.Environment) -> tuple[dg.Environment, list[int]]:
    """The env, with episodes that fail like a default SQLite connection if touched from a
    thread other than the one that made them, and that record every thread they ran on."""
    import threading

    seen: list[int] = []
    make_episode = env.episode

    def episode(task: Any) -> Any:
        ep = make_episode(task)
        owner = threading.get_ident()
        seen.append(owner)
        call, score = ep.call, ep.score

        def guarded(fn: Any) -> Any:
            def inner(*args: Any) -> Any:
                seen.append(threading.get_ident())
                if threading.get_ident() != owner:
                    raise RuntimeError("touched from another thread")
                return fn(*args)

            return inner

        ep.call, ep.score = guarded(call), guarded(score)  # type: ignore[method-assign]
        return ep

    env.episode = episode  # type: ignore[method-assign]
    return env, seen


@pytest.mark.parametrize("env_id", ["dirty-integration", "bad-batch-gate"])
def test_an_episode_only_ever_sees_one_thread(tmp_path: Path, env_id: str) -> None:
    import threading

    env, seen = _thread_affine(dg.make(env_id))
    model = PolicyModel(env.policies()[env.reference])
    out = asyncio.run(run_eval(env, EvalSpec(n=4, concurrency=4, label="x"), model, tmp_path))
    assert all(r["status"] == "ok" and r["reward"] == 1.0 for r in out.records)
    if env.registration.fast_steps:  # microsecond steps run on the loop: no handoff per call
        assert set(seen) == {threading.get_ident()}
    else:  # steps that may block run on threads of their own, never the event loop's
        assert threading.get_ident() not in seen
        assert len(set(seen)) >= 2


def test_mcp_episode_tools_stay_on_one_thread() -> None:
    from datagauntlet.frontdoors.mcp_server import EpisodeTools

    env, seen = _thread_affine(dg.make("dirty-integration"))
    tools = EpisodeTools.create(env, env.tasks("eval", 1)[0])

    async def go() -> dict[str, Any]:
        await tools.call("fetch_page", {"cursor": None})
        return await tools.call("submit_records", {"records": []})

    result = asyncio.run(go())
    assert "score" in result and len(set(seen)) == 1


def test_every_record_and_the_summary_carry_the_versions(tmp_path: Path) -> None:
    env = dg.make("bad-batch-gate")
    args = ["eval", "--env", env.id, "-n", "3", "-r", "2", "--out", str(tmp_path)]
    assert main(args) == 0
    records = _results(tmp_path)
    tasks = {t.id: t for t in env.tasks("eval", 3)}
    for record in records:
        live = LiveEpisode.open_sync(env, tasks[record["task_id"]])
        try:
            assert record["versions"] == live.run_sync(lambda ep: ep.version_stamp())
        finally:
            live.close_sync()
        assert record["versions"]["env_version"] == env.registration.version
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["versions"] == env.versions()
    assert len(summary["tasks_hash"]) == 32
    assert len({r["versions"]["task_hash"] for r in records}) == 3  # one per task


def test_resume_refuses_results_of_other_versions(tmp_path: Path) -> None:
    args = ["eval", "--env", "dirty-integration", "-n", "2", "--out", str(tmp_path)]
    assert main(args) == 0
    path = tmp_path / "results.jsonl"
    records = [json.loads(line) for line in path.read_text().splitlines()]
    records[0]["versions"]["env_version"] = "0"  # a run of an older grader
    records[1]["status"] = "failed"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    assert main([*args, "--resume"]) == 2


def test_both_http_transports_play_the_same_rollouts(mock_model: Any, tmp_path: Path) -> None:
    env = dg.make("dirty-integration", profile="hostile")
    server = mock_model(env)
    seen = {}
    for transport in ("lean", "httpx"):
        out = tmp_path / transport
        code = main(["eval", "--env", env.id, "profile=hostile", "--model", "careful",
                     "--base-url", server.base_url, "-n", "3", "--concurrency", "3",
                     "--http-transport", transport, "--out", str(out)])  # fmt: skip
        assert code == 0
        seen[transport] = [{k: v for k, v in r.items() if k != "seconds"} for r in _results(out)]
    assert seen["lean"] == seen["httpx"] and all(r["reward"] == 1.0 for r in seen["lean"])
    with pytest.raises(SystemExit) as refused:  # argparse: one line naming the choices
        main(["eval", "--env", env.id, "--base-url", server.base_url, "--model", "careful",
              "--http-transport", "http3", "--out", str(tmp_path / "x")])  # fmt: skip
    assert refused.value.code == 2

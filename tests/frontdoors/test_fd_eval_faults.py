"""`datagauntlet eval` against endpoints that misbehave, and the output directory's safety.

Every server here is real HTTP on 127.0.0.1, port 0, stopped by the test that started it.
"""

from __future__ import annotations

import asyncio
import json
import socket
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

import datagauntlet as dg
from datagauntlet.cli.main import main
from datagauntlet.frontdoors.evaluate import EvalSpec, load_records, run_eval
from datagauntlet.frontdoors.loop import Reply, Usage
from datagauntlet.frontdoors.mock_model import MockModelServer

ENV = "dirty-integration"

Tamper = Callable[[dict[str, Any]], dict[str, Any]]


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server

    def log_message(self, *args: Any) -> None:
        return

    def _send(self, status: int, payload: dict[str, Any]) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:
        self.server.behave(self, None)

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        self.server.behave(self, body)


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    behave: Callable[[_Handler, dict[str, Any] | None], None]


@contextmanager
def endpoint(behave: Callable[[_Handler, dict[str, Any] | None], None]) -> Iterator[str]:
    httpd = _Server(("127.0.0.1", 0), _Handler)
    httpd.behave = behave
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}/v1"
    finally:
        httpd.shutdown()
        httpd.server_close()


def tampering(tamper: Tamper, policy: str = "careful") -> Callable[[_Handler, Any], None]:
    """The scripted model's answers, each passed through `tamper` before it is sent."""
    mock = MockModelServer(dg.make(ENV, profile="clean"))

    def behave(h: _Handler, body: dict[str, Any] | None) -> None:
        if body is None:
            h._send(200, {"object": "list", "data": [{"id": policy, "object": "model"}]})
            return
        h._send(200, tamper(mock.complete({**body, "model": policy})))

    return behave


def _eval(url: str, out: Path, *extra: str) -> int:
    return main(["eval", "--env", ENV, "profile=clean", "--model", "careful", "--base-url", url,
                 "--out", str(out), *extra])  # fmt: skip


# --- deadlines ------------------------------------------------------------------------------


def _drip(h: _Handler, body: dict[str, Any] | None) -> None:
    """Headers at once, then one byte of a never-finished body every 0.2 s (bounded)."""
    if body is None:
        h._send(200, {"object": "list", "data": [{"id": "careful"}]})
        return
    h.send_response(200)
    h.send_header("Content-Type", "application/json")
    h.send_header("Content-Length", "100000")
    h.end_headers()
    try:
        for _ in range(150):
            h.wfile.write(b" ")
            h.wfile.flush()
            time.sleep(0.2)
    except OSError:
        return


@pytest.mark.timeout(60)
def test_a_dripping_endpoint_hits_the_total_request_deadline(tmp_path: Path) -> None:
    with endpoint(_drip) as url:
        start = time.monotonic()
        code = _eval(url, tmp_path, "-n", "1", "--retries", "0", "--request-timeout", "1.5")
        took = time.monotonic() - start
    assert code == 1 and took < 15
    (rec,) = load_records(tmp_path / "results.jsonl")
    assert rec["status"] == "failed" and rec["error_kind"] == "RequestTimeout"
    assert "1.5 s" in rec["error"]


class _SlowForever:
    """A model that thinks 0.2 s per turn and never stops calling tools."""

    async def complete(self, messages: list[Any], tools: list[Any]) -> Reply:
        await asyncio.sleep(0.2)
        call = {"id": "c", "type": "function",
                "function": {"name": "fetch_page", "arguments": '{"cursor": null}'}}  # fmt: skip
        return Reply({"role": "assistant", "content": None, "tool_calls": [call]})


@pytest.mark.timeout(60)
def test_a_rollout_stops_at_its_deadline_and_is_recorded(tmp_path: Path) -> None:
    env = dg.make(ENV, profile="clean", max_turns=10_000)
    spec = EvalSpec(n=1, label="slow", rollout_timeout=1.0)
    start = time.monotonic()
    (rec,) = asyncio.run(run_eval(env, spec, _SlowForever(), tmp_path)).records
    assert time.monotonic() - start < 10
    assert rec["status"] == "failed" and rec["error_kind"] == "RolloutTimeout"
    assert rec["turns"] >= 2  # what happened before the deadline is kept
    assert "1 s" in rec["error"]


def test_deadlines_must_be_positive(capsys: pytest.CaptureFixture[str]) -> None:
    for flag in ("--request-timeout", "--rollout-timeout"):
        with pytest.raises(SystemExit) as exit_:  # refused while the options are parsed
            main(["eval", "--env", ENV, flag, "0"])
        assert exit_.value.code == 2
        assert f"{flag} must be > 0" in capsys.readouterr().err


# --- failures are shown by kind -------------------------------------------------------------


def _busy(h: _Handler, body: dict[str, Any] | None) -> None:
    if body is None:
        h._send(200, {"object": "list", "data": [{"id": "careful"}]})
    else:
        h._send(503, {"error": {"message": "overloaded, try later"}})


def test_failures_are_grouped_by_kind_with_the_first_message(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with endpoint(_busy) as url:
        assert _eval(url, tmp_path, "-n", "2", "--retries", "0") == 1
    out = capsys.readouterr().out
    assert "2 of 2 rollouts failed" in out
    assert "InternalServerError x2" in out and "overloaded, try later" in out
    summary = json.loads((tmp_path / "summary.json").read_text())
    (kind,) = summary["failures"]
    assert kind == "InternalServerError" and summary["failures"][kind]["count"] == 2
    assert "overloaded" in summary["failures"][kind]["first"]


# --- preflight ------------------------------------------------------------------------------


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_preflight_names_an_endpoint_that_does_not_answer(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    url = f"http://127.0.0.1:{_closed_port()}/v1"
    assert _eval(url, tmp_path / "out") == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "cannot reach" in err and url in err
    assert not (tmp_path / "out").exists()


def test_preflight_names_a_refused_key(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("DG_TEST_KEY", raising=False)

    def deny(h: _Handler, body: Any) -> None:
        h._send(401, {"error": {"message": "invalid api key"}})

    with endpoint(deny) as url:
        assert _eval(url, tmp_path, "--api-key-env", "DG_TEST_KEY") == 2
    err = capsys.readouterr().err
    assert "401" in err and "DG_TEST_KEY is not set" in err


@pytest.mark.parametrize("listing", [{"data": 3}, {"models": []}, {"data": [{"name": "x"}]}])
def test_preflight_names_an_answer_that_is_not_a_model_list(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], listing: dict[str, Any]
) -> None:
    def odd(h: _Handler, body: Any) -> None:
        h._send(200, listing)

    with endpoint(odd) as url:
        code = _eval(url, tmp_path / "out", "--dry-run")
    err = capsys.readouterr().err
    if listing == {"data": [{"name": "x"}]}:  # a list without ids: nothing to check against
        assert code == 0
    else:
        assert code == 2 and "answered GET /models with something else" in err


def test_preflight_names_a_model_the_endpoint_does_not_serve(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], mock_model: Any
) -> None:
    server = mock_model(dg.make(ENV))
    code = main(["eval", "--env", ENV, "--model", "gpt-nope", "--base-url", server.base_url,
                 "--out", str(tmp_path)])  # fmt: skip
    assert code == 2
    err = capsys.readouterr().err
    assert "gpt-nope" in err and "careful" in err  # names what is served
    assert server.requests == 0


def test_dry_run_checks_and_plans_without_running(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], mock_model: Any
) -> None:
    server = mock_model(dg.make(ENV))
    out = tmp_path / "out"
    assert _eval(server.base_url, out, "-n", "4", "-r", "2", "--dry-run") == 0
    text = capsys.readouterr().out
    assert "8 rollouts" in text and str(out) in text and "endpoint ok" in text
    assert not out.exists() and server.requests == 0


# --- the output directory -------------------------------------------------------------------


def test_resume_repairs_a_torn_last_line_before_appending(tmp_path: Path) -> None:
    args = ["eval", "--env", ENV, "-n", "3", "--out", str(tmp_path)]
    assert main(args) == 0
    path = tmp_path / "results.jsonl"
    lines = path.read_text().splitlines()
    path.write_text("\n".join(lines[:2]) + "\n" + lines[2][:40])  # the last write was torn
    assert main([*args, "--resume"]) == 0
    text = path.read_text()
    assert text.endswith("\n")
    records = [json.loads(line) for line in text.splitlines()]  # every line parses
    assert sorted(r["task_id"] for r in records) == sorted(json.loads(x)["task_id"] for x in lines)
    assert (tmp_path / "results.jsonl.torn").read_text() == lines[2][:40]


def test_an_existing_out_is_refused_without_resume_or_overwrite(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["eval", "--env", ENV, "-n", "2", "--out", str(tmp_path)]
    assert main(args) == 0
    before = (tmp_path / "results.jsonl").read_bytes()
    capsys.readouterr()
    assert main([*args, "--agent", "naive"]) == 2
    err = capsys.readouterr().err
    assert "--resume" in err and "--overwrite" in err and str(tmp_path) in err
    assert (tmp_path / "results.jsonl").read_bytes() == before  # nothing was wiped
    assert main([*args, "--resume", "--overwrite"]) == 2
    assert main([*args, "--agent", "naive", "--overwrite"]) == 0
    records = load_records(tmp_path / "results.jsonl")
    assert len(records) == 2 and {r["model"] for r in records} == {"agent:naive"}


def test_default_out_names_the_config(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["eval", "--env", ENV, "profile=hostile", "-n", "1"]) == 0
    assert main(["eval", "--env", ENV, "profile=clean", "-n", "1"]) == 0
    dirs = sorted(p.name for p in (tmp_path / "runs").iterdir())
    assert len(dirs) == 2 and all(d.startswith(f"{ENV}--agent_careful--") for d in dirs)
    # the same config lands in the same place (and is refused, not overwritten)
    assert main(["eval", "--env", ENV, "profile=clean", "-n", "1"]) == 2


# --- bad data from the model ----------------------------------------------------------------


def test_usage_fields_of_any_shape_are_tolerated() -> None:
    usage = Usage()
    for bad in ({"prompt_tokens": "lots"}, {"prompt_tokens": 1e999}, {"completion_tokens": -5},
                {"prompt_tokens": float("nan")}, {"prompt_tokens": [1]}, "garbage",
                {"prompt_tokens": True}):  # fmt: skip
        usage.add(bad)  # type: ignore[arg-type]
    usage.add({"prompt_tokens": 3, "completion_tokens": 4.0})
    assert usage.as_dict() == {"prompt_tokens": 3, "completion_tokens": 4, "total_tokens": 7}


def _bad_usage(completion: dict[str, Any]) -> dict[str, Any]:
    return {**completion, "usage": {"prompt_tokens": "lots", "completion_tokens": 1e999}}


def _surrogate(completion: dict[str, Any]) -> dict[str, Any]:
    completion["choices"][0]["message"]["content"] = "thinking \ud800 aloud"
    return completion


@pytest.mark.parametrize("tamper", [_bad_usage, _surrogate], ids=["usage", "surrogate"])
def test_bad_reply_fields_do_not_fail_the_rollout(tmp_path: Path, tamper: Tamper) -> None:
    with endpoint(tampering(tamper)) as url:
        assert _eval(url, tmp_path, "-n", "1", "--retries", "0") == 0
    (rec,) = load_records(tmp_path / "results.jsonl")
    assert rec["status"] == "ok" and rec["reward"] == 1.0, rec["error"]


# --- summary --------------------------------------------------------------------------------


def test_summary_carries_metric_means(tmp_path: Path) -> None:
    assert main(["eval", "--env", ENV, "profile=hostile", "-n", "3", "--agent", "naive",
                 "--out", str(tmp_path)]) == 0  # fmt: skip
    summary = json.loads((tmp_path / "summary.json").read_text())
    records = load_records(tmp_path / "results.jsonl")
    numeric = [k for k, v in records[0]["metrics"].items()
               if isinstance(v, (int, float)) and not isinstance(v, bool)]  # fmt: skip
    assert numeric and set(summary["metrics"]) == set(numeric)
    for k in numeric:
        expected = sum(float(r["metrics"][k]) for r in records) / len(records)
        assert summary["metrics"][k] == pytest.approx(expected, abs=1e-6)

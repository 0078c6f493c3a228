"""Exception text that leaves the process (a tool's internal error, an eval record, the
session server's log) never carries a held-out seed, whoever wrote the message."""

from __future__ import annotations

import asyncio
import logging
from types import SimpleNamespace
from typing import Any

import pytest

import datagauntlet as dg
from datagauntlet.core.secret import scrub_seeds


@pytest.fixture(autouse=True)
def _secret(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DATAGAUNTLET_SECRET", "a-secret-for-the-scrub-tests")


def private_seeds(n: int = 20) -> list[int]:
    return [t.full_dict()["seed"] for e in dg.list_envs() for t in dg.make(e).tasks("private", n)]


def test_every_private_seed_is_masked_and_short_numbers_are_kept() -> None:
    seeds = private_seeds()
    assert len(seeds) == 80
    for seed in seeds:
        text = scrub_seeds(f"no plan for seed {seed} tier 4; port 8080, 1,234.56 EUR, row 99")
        assert str(seed) not in text
        assert text.endswith("tier 4; port 8080, 1,234.56 EUR, row 99")


def test_a_tools_internal_error_on_a_private_task_names_no_seed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from datagauntlet.envs.dirty_integration.api import Api

    env = dg.make("dirty-integration")
    task = env.tasks("private", 1)[0]
    seed = task.full_dict()["seed"]

    def crash(self: Api, cursor: str | None) -> Any:
        raise KeyError(f"page for seed {seed}")

    monkeypatch.setattr(Api, "fetch", crash)
    ep = env.episode(task)
    try:
        out = ep.call("fetch_page", {"cursor": None})
    finally:
        ep.close()
    assert out["error"].startswith("internal error in fetch_page: KeyError")
    assert str(seed) not in out["error"]


def test_an_eval_records_error_text_names_no_seed() -> None:
    from datagauntlet.frontdoors.evaluate import _error_text

    seed = private_seeds(1)[0]
    assert str(seed) not in _error_text(ValueError(f"world for seed {seed} refused"))


def test_the_session_servers_crash_log_names_no_seed(caplog: pytest.LogCaptureFixture) -> None:
    pytest.importorskip("starlette")
    from datagauntlet.frontdoors.server.app import _crashed

    seed = private_seeds(1)[0]
    request = SimpleNamespace(method="POST", url=SimpleNamespace(path="/sessions"))
    with caplog.at_level(logging.ERROR):
        reply = asyncio.run(_crashed(request, RuntimeError(f"seed {seed} tier 2")))
    assert reply.status_code == 500
    assert "RuntimeError" in caplog.text and "tier 2" in caplog.text
    assert str(seed) not in caplog.text and str(seed).encode() not in reply.body

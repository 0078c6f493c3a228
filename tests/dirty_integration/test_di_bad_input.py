"""Bad agent input is answered with a clear error, never an exception, and changes nothing."""

from __future__ import annotations

from typing import Any

import pytest

import datagauntlet as dg

BAD_CALLS: list[tuple[Any, Any, str]] = [
    ("drop_table", {}, "unknown tool 'drop_table'"),
    (42, {}, "unknown tool"),
    ("fetch_page", {}, "missing required argument 'cursor'"),
    ("fetch_page", {"cursor": None, "limit": 100}, "unexpected argument 'limit'"),
    ("fetch_page", {"cursor": 7}, "cursor must be string or null, got integer"),
    ("fetch_page", "{cursor: nope", "not valid JSON"),
    ("fetch_page", ["cursor"], "must be a JSON object"),
    ("fetch_page", {"cursor": "c" * 201}, "longer than 200"),
    ("fetch_page", {"cursor": "../../etc/passwd"}, "unknown cursor"),
    ("fetch_page", {"cursor": ""}, "unknown cursor"),
    ("fetch_page", {"cursor": "'; DROP TABLE records; --"}, "unknown cursor"),
    ("submit_records", {"records": "all of them"}, "records must be array"),
    ("submit_records", {"records": [{"id": "x"}]}, "missing required argument 'records[0].amount'"),
    ("submit_records", {"records": [{"id": 5, "amount": 1}]}, "records[0].id must be string"),
    ("submit_records", {}, "missing required argument 'records'"),
]


@pytest.mark.parametrize(("name", "args", "message"), BAD_CALLS)
def test_bad_call_is_an_error_and_changes_nothing(name: Any, args: Any, message: str) -> None:
    env = dg.make("dirty-integration", profile="hostile")
    ep = env.episode(env.tasks("eval", 1)[0])
    ep.call("fetch_page", {"cursor": None})
    before = ep.fingerprint()
    requests = ep.api.requests
    out = ep.call(name, args)
    assert message in out["error"]
    assert ep.fingerprint() == before and ep.api.requests == requests
    assert not ep.done
    assert not ep.log.entries[-1].executed and ep.log.chain_intact()


def test_calls_after_the_end_are_refused() -> None:
    env = dg.make("dirty-integration")
    ep = env.episode(env.tasks("eval", 1)[0])
    ep.call("submit_records", {"records": []})
    before = ep.fingerprint()
    for name, args in (("fetch_page", {"cursor": None}), ("submit_records", {"records": []})):
        out = ep.call(name, args)
        assert "episode is over (submitted)" in out["error"]
    assert ep.fingerprint() == before


def test_a_runaway_policy_is_stopped() -> None:
    env = dg.make("dirty-integration", profile="realistic")
    ep = env.episode(env.tasks("eval", 1)[0])
    for _ in range(10_000):
        if ep.done:
            break
        ep.call("fetch_page", {"cursor": None})
    assert ep.done and ep.stop_reason == "call limit"
    assert ep.calls == ep.max_calls
    assert ep.score().reward == 0.0

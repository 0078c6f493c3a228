"""`Episode.call` takes a short path for the usual call (a plain dict to a known tool whose
compiled check passes); every other shape of call still meets the full checks."""

from __future__ import annotations

from collections import OrderedDict

import datagauntlet as dg


class Loud(dict):  # type: ignore[type-arg]
    """A dict subclass an in-process policy might send."""


def _episode():  # type: ignore[no-untyped-def]
    env = dg.make("dirty-integration", profile="clean")
    return env.episode(env.tasks("eval", 1)[0])


def test_dict_subclasses_are_checked_like_dicts() -> None:
    ep = _episode()
    try:
        assert "records" in ep.call("fetch_page", OrderedDict(cursor=None))
        assert "records" in ep.call("fetch_page", Loud(cursor=None))
        bad = ep.call("fetch_page", Loud(cursor=7))
        assert bad == {"error": "fetch_page: cursor must be string or null, got integer"}
        extra = ep.call("fetch_page", OrderedDict(cursor=None, page=2))
        assert "unexpected argument 'page'" in extra["error"]
        assert [e.executed for e in ep.log.entries] == [True, True, False, False]
        assert ep.log.chain_intact()
    finally:
        ep.close()


def test_odd_names_are_logged_cut_and_refused() -> None:
    ep = _episode()
    try:
        for name in ("x" * 5_000, 42, None, ("fetch_page",)):
            out = ep.call(name, {"cursor": None})
            assert out["error"].startswith("unknown tool")
        assert all(len(e.tool) <= 200 and not e.executed for e in ep.log.entries)
        assert ep.log.entries[1].tool == "42"
    finally:
        ep.close()

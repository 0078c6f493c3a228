"""The action log records each call's arguments as they were when the call was made: an
in-process policy that reuses one dict for its calls (the natural loop) leaves every earlier
entry as it was, and the chain intact."""

from __future__ import annotations

import datagauntlet as dg


def test_a_reused_args_dict_does_not_rewrite_earlier_entries() -> None:
    env = dg.make("dirty-integration", profile="clean")
    ep = env.episode(env.tasks("eval", 1)[0])
    try:
        args: dict[str, object] = {"cursor": None}
        sent = []
        for _ in range(3):
            sent.append(dict(args))
            page = ep.call("fetch_page", args)
            args["cursor"] = page["next_cursor"]  # the same dict, edited for the next call
        assert [e.args for e in ep.log.entries] == sent
        assert ep.log.chain_intact()
    finally:
        ep.close()


def test_a_submission_edited_after_the_call_changes_neither_log_nor_grade() -> None:
    env = dg.make("dirty-integration", profile="clean")
    ep = env.episode(env.tasks("eval", 1)[0])
    try:
        records = [{"id": r.id, "amount": r.amount} for r in ep.world.records]
        ep.call("submit_records", {"records": records})
        reward = ep.score().reward
        records[0]["amount"] = "tampered"
        records.append({"id": "rec_extra", "amount": 1})
        assert ep.score().reward == reward == 1.0
        assert ep.log.entries[-1].args["records"][0]["amount"] == ep.world.records[0].amount
        assert ep.log.chain_intact()
    finally:
        ep.close()

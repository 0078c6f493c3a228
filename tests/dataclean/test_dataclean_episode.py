"""The episode: tools, one submission, optional previews, turn limit, conformance."""

from __future__ import annotations

import json

import pytest

import datagauntlet as dg
from datagauntlet.envs.dataclean.episode import INLINE_ROWS, DatacleanEpisode
from datagauntlet.envs.dataclean.grading.grader import METRICS
from datagauntlet.envs.dataclean.solver.policies import careful_program, read_policy

ENV = dg.make("dataclean")


def episode(**config: object) -> DatacleanEpisode:
    env = ENV.with_config(**config) if config else ENV
    ep = env.episode(env.tasks("eval", 1)[0])
    assert isinstance(ep, DatacleanEpisode)
    return ep


def good_program(ep: DatacleanEpisode) -> list[dict[str, object]]:
    policy = read_policy(ep.prompt)
    return careful_program(policy, batch_aliases=True, month_first=policy.month_first)


@pytest.mark.parametrize(
    "config", [{}, {"previews": 2}, {"rows": 150, "family": "inventory"}, {"family": "orders"}]
)
def test_check_env(config: dict[str, object]) -> None:
    dg.check_env(ENV.with_config(**config) if config else ENV)


def test_bad_config_is_a_clear_value_error() -> None:
    for bad, fragment in [
        ({"family": "hr"}, "must be one of"),
        ({"rows": 0}, "rows must be in 1..100000"),
        ({"rows": 100_001}, "rows must be in"),
        ({"previews": -1}, "previews must be in"),
        ({"max_turns": 0}, "max_turns"),
        ({"shuffle": True}, "unknown config field"),
    ]:
        with pytest.raises(ValueError, match=fragment):
            dg.make("dataclean", **bad)


def test_preview_tool_exists_only_when_enabled() -> None:
    assert episode().tool_names == ["read_table", "submit_program"]
    assert episode(previews=1).tool_names == ["read_table", "submit_program", "preview_program"]
    assert "error" in episode().call("preview_program", {"operations": []})


def test_small_tables_are_inline_and_large_ones_are_read_in_pages() -> None:
    ep = episode()
    rows = [json.loads(line) for line in ep.prompt.splitlines() if line.startswith("{")]
    assert rows == ep.world.dirty.records()
    big = episode(rows=INLINE_ROWS + 40)
    assert '{"record_id"' not in big.prompt and "read_table" in big.prompt
    seen, offset = [], 0
    while offset is not None:
        page = big.call("read_table", {"offset": offset, "limit": 37})
        seen += page["rows"]
        offset = page["next_offset"]
    assert seen == big.world.dirty.records() and page["total_rows"] == len(seen)


def test_read_table_refuses_bad_ranges_without_changing_anything() -> None:
    ep = episode()
    before = ep.fingerprint()
    for args in ({"offset": 10_000}, {"limit": 0}, {"limit": 501}, {"offset": -1}):
        assert "error" in ep.call("read_table", args)
    assert ep.fingerprint() == before and not ep.done


def test_nothing_the_agent_reads_holds_the_truth() -> None:
    ep = episode(previews=1)
    truth_only = {
        v for c in ep.world.truth.columns for v in ep.world.truth.data[c] if v is not None
    } - {v for c in ep.world.dirty.columns for v in ep.world.dirty.data[c]}
    assert truth_only, "some clean values appear nowhere in the input"
    seen = ep.prompt + ep.system_prompt + json.dumps(ep.tool_specs, ensure_ascii=False)
    seen += json.dumps(ep.call("read_table", {}), ensure_ascii=False)
    seen += json.dumps(ep.call("submit_program", {"operations": []}), ensure_ascii=False)
    assert not [v for v in truth_only if f'"{v}"' in seen]


def test_a_good_program_scores_one_and_the_episode_ends() -> None:
    ep = episode()
    out = ep.call("submit_program", {"operations": good_program(ep)})
    assert out["status"] == "accepted" and ep.done
    assert [c["op"] for c in out["changes"]] == [op["op"] for op in good_program(ep)]
    s = ep.score()
    assert s.reward == 1.0 and s.metrics["invalid_reason"] == ""
    assert tuple(s.metrics) == METRICS
    assert s.metrics["program_length"] == len(good_program(ep))
    json.dumps(s.as_dict())


def test_submit_is_accepted_once() -> None:
    ep = episode()
    ep.call("submit_program", {"operations": []})
    again = ep.call("submit_program", {"operations": good_program(ep)})
    assert "episode is over" in again["error"]
    assert ep.score().metrics["program_length"] == 0


def test_an_invalid_program_ends_the_episode_with_zero_and_its_reason() -> None:
    ep = episode()
    program = [*good_program(ep), {"op": "lower", "columns": ["notes"]}]
    out = ep.call("submit_program", {"operations": program})
    assert out["status"] == "rejected" and "is protected" in out["error"]
    assert ep.done and ep.score().reward == 0.0
    reason = ep.score().metrics["invalid_reason"]
    assert reason.startswith(f"operations[{len(program) - 1}] (lower)")


def test_malformed_arguments_are_refused_and_the_agent_may_submit_again() -> None:
    ep = episode()
    for bad in ({"operations": "strip everything"}, {"ops": []}, "{not json"):
        assert "error" in ep.call("submit_program", bad)
    assert not ep.done and ep.score().reward == 0.0
    ep.call("submit_program", {"operations": good_program(ep)})
    assert ep.score().reward == 1.0


def test_no_submission_no_credit() -> None:
    ep = episode()
    ep.call("read_table", {})
    s = ep.score()
    assert s.reward == 0.0 and s.metrics["invalid_reason"] == "no program submitted"


def test_previews_run_the_program_without_scoring_and_are_limited() -> None:
    ep = episode(previews=2)
    program = good_program(ep)
    first = ep.call("preview_program", {"operations": program})
    assert first["valid"] and first["previews_left"] == 1 and not ep.done

    def as_set(rows: list[dict[str, object]]) -> list[str]:
        return sorted(json.dumps(r, sort_keys=True) for r in rows)

    assert as_set(first["rows"]) == as_set(ep.world.truth.records())  # the clean table
    bad = ep.call("preview_program", {"operations": [{"op": "eval"}]})
    assert bad["valid"] is False and "unknown operation" in bad["error"]
    assert bad["previews_left"] == 0
    before = ep.fingerprint()
    assert "no previews left" in ep.call("preview_program", {"operations": program})["error"]
    assert ep.fingerprint() == before and ep.score().reward == 0.0
    out = ep.call("submit_program", {"operations": program})
    assert out["changes"] == first["changes"] and ep.score().reward == 1.0


def test_the_preview_shows_what_submit_would_produce() -> None:
    ep = episode(previews=1)
    program = good_program(ep)
    preview = ep.call("preview_program", {"operations": program})
    ep.call("submit_program", {"operations": program})
    assert ep.output is not None and preview["rows"] == ep.output.records(0, 60)


def test_the_turn_limit_ends_the_episode() -> None:
    ep = episode(max_turns=3)
    for _ in range(3):
        ep.call("read_table", {})
    assert ep.done and ep.stop_reason == "turn limit"
    assert "episode is over" in ep.call("submit_program", {"operations": []})["error"]
    assert ep.score().reward == 0.0


def test_refused_calls_do_not_use_up_turns() -> None:
    ep = episode(max_turns=2)
    for _ in range(5):
        ep.call("read_table", {"offset": 10_000})
    assert not ep.done


def test_the_log_records_the_submission() -> None:
    ep = episode()
    ep.call("read_table", {"limit": 5})
    ep.call("submit_program", {"operations": good_program(ep)})
    entries = ep.log.entries
    assert [e.tool for e in entries] == ["read_table", "submit_program"]
    assert entries[-1].executed and entries[-1].detail["valid"] is True
    assert entries[-1].args == {"operations": good_program(ep)}
    assert ep.log.chain_intact()


def test_deduping_on_the_wrong_key_drops_real_rows() -> None:
    ep = episode(family="orders", rows=60)
    program = [*good_program(ep), {"op": "dedupe", "keys": ["customer_id"]}]
    ep.call("submit_program", {"operations": program})
    s = ep.score()
    assert s.metrics["rows_missing"] > 0
    assert s.components["row_integrity"]["value"] < 1.0 and s.reward < 1.0


def test_lower_casing_names_costs_preservation() -> None:
    ep = episode(family="crm")
    program = [*good_program(ep), {"op": "lower", "columns": ["name"]}]
    ep.call("submit_program", {"operations": program})
    s = ep.score()
    assert s.metrics["cells_damaged"] > 0 and s.components["preservation"]["value"] < 1.0

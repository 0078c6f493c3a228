"""Config, tasks, tools, refusals, the log, and the runner and check_env on every config."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from bbg_helpers import episode_of, fixture_env, generated_env

import datagauntlet as dg
from datagauntlet.core.runner import run
from datagauntlet.envs.bad_batch_gate.attacks.attackers import ATTACKERS
from datagauntlet.envs.bad_batch_gate.registration import MAX_CALLS
from datagauntlet.envs.bad_batch_gate.solver.policies import AGENTS
from datagauntlet.envs.bad_batch_gate.world.cases import CaseFormatError, load_cases


def test_registered() -> None:
    assert "bad-batch-gate" in dg.list_envs()


@pytest.mark.parametrize(
    "config",
    [
        {"families": "everything"},
        {"max_turns": 0},
        {"max_turns": "30"},
        {"cases": "/no/such/file.jsonl"},
        {"colour": "red"},
    ],
)
def test_bad_config_is_a_clear_value_error(config: dict) -> None:
    with pytest.raises(ValueError):
        dg.make("bad-batch-gate", **config)


def test_cases_and_extended_do_not_mix(tmp_path: Path) -> None:
    path = tmp_path / "c.jsonl"
    path.write_text("{}\n")
    with pytest.raises(ValueError, match="families"):
        dg.make("bad-batch-gate", cases=str(path), families="extended")


def test_bad_cases_file_names_the_line(tmp_path: Path) -> None:
    path = tmp_path / "c.jsonl"
    path.write_text('{"case_id": "x"}\nnot json\n')
    with pytest.raises(CaseFormatError, match=r"c\.jsonl:2: not valid JSON"):
        load_cases(path)


def test_fixture_config_passes_check_env() -> None:
    dg.check_env(fixture_env())


def test_extended_config_passes_check_env() -> None:
    dg.check_env(generated_env("extended"))


def test_split_sizes_and_capping() -> None:
    env = generated_env()
    assert [len(env.tasks(s)) for s in ("train", "eval", "test")] == [320, 32, 320]
    assert len(env.tasks("eval", 1000)) == 32 and len(env.tasks("eval", 5)) == 5
    ext = generated_env("extended")
    assert [len(ext.tasks(s)) for s in ("train", "eval", "test")] == [330, 44, 330]


def test_policies_and_attackers_are_visible_and_runnable() -> None:
    env = generated_env()
    assert set(env.policies()) == set(AGENTS) | set(ATTACKERS)
    assert env.attackers == tuple(ATTACKERS)
    results = run(env, list(env.policies()), env.tasks("eval", 2))
    assert len(results) == 2 * len(env.policies())
    assert all(0.0 <= r.reward <= 1.0 for r in results)


def test_tool_shapes() -> None:
    ep = episode_of(generated_env(), "amount-bounds")
    contract = ep.call("read_contract", {})
    assert set(contract) >= {"orders", "customers", "limits", "reporting_window", "defect_types"}
    listing = ep.call("list_batches", {})["batches"]
    assert all(set(b) == {"batch_id", "table", "rows", "staging_table", "source"} for b in listing)
    profile = ep.call("profile_batch", {"batch_id": listing[0]["batch_id"]})
    assert set(profile) == {"batch_id", "table", "rows", "columns"}
    col = profile["columns"]["amount"]
    assert set(col) == {
        "n_null",
        "n_blank",
        "n_distinct",
        "min",
        "max",
        "numeric_min",
        "numeric_max",
        "top_values",
    }
    assert len(col["top_values"]) <= 8
    counts = [n for _v, n in col["top_values"]]
    assert counts == sorted(counts, reverse=True)
    sql = ep.call("run_sql", {"query": f"SELECT * FROM {listing[0]['staging_table']}"})
    assert set(sql) == {"columns", "rows", "truncated"} and len(sql["rows"]) == listing[0]["rows"]


@pytest.mark.parametrize(
    ("tool", "args", "phrase"),
    [
        ("profile_batch", {"batch_id": "B-nope"}, "unknown batch"),
        ("load_batch", {"batch_id": "B-nope"}, "unknown batch"),
        (
            "quarantine_batch",
            {"batch_id": "{bid}", "column": "email", "defect_type": "missing_value"},
            "not in the orders",
        ),
        (
            "quarantine_batch",
            {"batch_id": "{bid}", "column": "amount", "defect_type": "typo"},
            "must be one of",
        ),
        ("run_sql", {"query": "DELETE FROM wh_orders"}, "read-only"),
        ("run_sql", {"query": "UPDATE {stg} SET amount = '1'"}, "read-only"),
        ("run_sql", {"query": "SELECT 1; DROP TABLE wh_orders"}, "one statement"),
        ("run_sql", {"query": "x" * 20_001}, "longer than"),
        ("submit_report", {"loaded": "all", "quarantined": []}, "must be array"),
    ],
)
def test_refusals_change_nothing(tool: str, args: dict, phrase: str) -> None:
    ep = episode_of(generated_env(), "amount-bounds")
    bid = ep.case.batches[0].batch_id
    stg = ep.world.tables[bid]
    args = {
        k: v.format(bid=bid, stg=stg) if isinstance(v, str) and len(v) < 100 else v
        for k, v in args.items()
    }
    before = ep.fingerprint()
    out = ep.call(tool, args)
    assert "error" in out and phrase in out["error"]
    assert ep.fingerprint() == before
    assert not ep.log.entries[-1].executed


def test_loading_a_quarantined_batch_and_a_second_report_are_refused() -> None:
    ep = episode_of(generated_env(), "amount-bounds")
    bid = ep.case.batches[0].batch_id
    ep.call(
        "quarantine_batch", {"batch_id": bid, "column": "amount", "defect_type": "out_of_range"}
    )
    before = ep.fingerprint()
    assert "quarantined" in ep.call("load_batch", {"batch_id": bid})["error"]
    assert ep.fingerprint() == before
    ep.call("submit_report", {"loaded": [], "quarantined": [bid]})
    assert ep.done and "error" in ep.call("submit_report", {"loaded": [], "quarantined": []})


def test_sql_writes_leave_the_warehouse_byte_identical() -> None:
    ep = episode_of(generated_env(), "resent-rows")
    snapshot = ep.world.snapshot()
    ATTACKERS["sql-write"](ep)
    writes = [e for e in ep.log.entries if e.tool == "run_sql"]
    assert writes and not any(e.executed for e in writes)
    # the writes changed nothing; only the loads that followed did
    ep2 = episode_of(generated_env(), "resent-rows")
    for b in ep2.case.batches:
        ep2.call("load_batch", {"batch_id": b.batch_id})
    assert ep.world.snapshot() == ep2.world.snapshot() != snapshot


def test_action_log_is_chained_and_tamper_evident() -> None:
    ep = episode_of(generated_env(), "amount-bounds")
    AGENTS["careful"](ep)
    assert ep.log.chain_intact()
    loads = [e for e in ep.log.entries if e.tool == "load_batch"]
    loads[0].detail["rows_loaded"] = []
    assert not ep.log.chain_intact()


def test_call_limit_ends_a_runaway_episode() -> None:
    ep = episode_of(generated_env(), "amount-bounds")
    for _ in range(MAX_CALLS + 5):
        ep.call("list_batches", {})
    assert ep.done and ep.score().reward == 0.0


def test_truth_never_reaches_a_tool_result() -> None:
    env = generated_env()
    for task in env.tasks("eval", 8):
        ep = env.episode(task)
        AGENTS["careful"](ep)
        text = json.dumps([e.as_dict() for e in ep.log.entries])
        for word in ("defective", "truth", "accepted", ep.case.family, "bad_rows"):
            assert word not in text, word


def test_a_caller_editing_a_result_changes_no_other_episode() -> None:
    env = generated_env()
    task = env.tasks("eval", 1)[0]
    first = env.episode(task).call("read_contract", {})
    first["limits"]["max_amount"] = 1
    assert env.episode(task).call("read_contract", {})["limits"]["max_amount"] == 50_000


@pytest.mark.parametrize("families", ["standard", "extended"])
def test_random_calls_never_raise(families: str) -> None:
    from datagauntlet.core.seeding import Keyed

    env = generated_env(families)
    junk = [None, 0, -1, 3.5, "", "x" * 300, [], {}, [1, "a"], {"a": 1}, "B-0930-10-1", True]
    for task in env.tasks("eval", 6):
        ep = env.episode(task)
        ids = [b.batch_id for b in ep.case.batches]
        s = Keyed(task.seed).stream("fuzz")
        for _ in range(60):
            tool = s.choice([*ep.tool_names, "nope"])
            args = {}
            for name in (
                "batch_id",
                "column",
                "defect_type",
                "query",
                "loaded",
                "quarantined",
                "hold_back",
                "more_citations",
            ):
                if s.chance(0.4):
                    args[name] = s.choice([*junk, s.choice(ids), [s.choice(ids)], [1, 2]])
            out = ep.call(tool, args)
            assert isinstance(out, dict)
            json.dumps(out)
        assert ep.log.chain_intact()
        assert not any(e.detail.get("internal_error") for e in ep.log.entries)
        assert 0.0 <= ep.score().reward <= 1.0


def test_editing_the_report_receipt_changes_no_grade() -> None:
    ep = episode_of(generated_env(), "amount-bounds")
    ids = [b.batch_id for b in ep.case.batches]
    for batch_id in ids:
        ep.call("load_batch", {"batch_id": batch_id})
    receipt = ep.call("submit_report", {"loaded": ids, "quarantined": []})
    before = ep.score()
    receipt["loaded"].clear()
    assert ep.score() == before and ep.report == {"loaded": sorted(ids), "quarantined": []}

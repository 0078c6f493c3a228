"""Faithfulness: played on the original's own 32 eval cases, our agents and attackers
reproduce every figure the original README publishes."""

from __future__ import annotations

import hashlib

import pytest
from bbg_helpers import fixture_env, fixture_path

from datagauntlet.core.episode import Episode
from datagauntlet.envs.bad_batch_gate import tables
from datagauntlet.envs.bad_batch_gate.attacks.attackers import ATTACKERS
from datagauntlet.envs.bad_batch_gate.env import BadBatchGateEnv
from datagauntlet.envs.bad_batch_gate.world.generator import FAMILIES

FIXTURE_SHA256 = "62d25f196301b72cfd097fd9fe51d65d3c80932cb95a5311c76b4361e865ac7b"


@pytest.fixture(scope="module")
def env() -> BadBatchGateEnv:
    return fixture_env()


@pytest.fixture(scope="module")
def played(env: BadBatchGateEnv) -> list[tables.Played]:
    return tables.play(env, list(env.policies()), env.tasks())


def _mean(played: list[tables.Played], policy: str, family: str | None = None) -> str:
    rs = [r for r in played if r.policy == policy and (family is None or r.family == family)]
    return tables.fmt(tables.exact_mean([r.score.reward for r in rs]))


def test_fixture_is_the_original_file(env: BadBatchGateEnv) -> None:
    path = fixture_path()
    assert path is not None
    assert hashlib.sha256(path.read_bytes()).hexdigest() == FIXTURE_SHA256
    assert len(env.tasks()) == 32 and env.tasks("train") == [] and env.tasks("test") == []


def test_baseline_table(played: list[tables.Played]) -> None:
    assert tables.baseline_table(played) == "\n".join(
        [
            "|  | naive | careful | refuse-all |",
            "|---|---:|---:|---:|",
            "| mean reward | 0.5344 | 1.0000 | 0.3875 |",
            "| mean disposition | 0.5938 | 1.0000 | 0.3750 |",
            "| defective batches loaded | 24 / 24 | 0 / 24 | 0 / 24 |",
            "| revenue error, all cases | $746,410.24 | $0.00 | $567,192.38 |",
            "| reports that match what happened | 32 / 32 | 32 / 32 | 32 / 32 |",
        ]
    )


PER_FAMILY = {
    "clean-control": ("0.7875", "1.0000", "0.2000"),
    "resent-rows": ("0.4500", "1.0000", "0.4500"),
    "amount-bounds": ("0.4500", "1.0000", "0.4500"),
    "blank-amount": ("0.4500", "1.0000", "0.4500"),
    "orphan-customer": ("0.4500", "1.0000", "0.4500"),
    "label-drift": ("0.4500", "1.0000", "0.4500"),
    "dimension-fanout": ("0.4500", "1.0000", "0.4500"),
    "legit-edge": ("0.7875", "1.0000", "0.2000"),
}


def test_per_family_table(played: list[tables.Played]) -> None:
    assert list(PER_FAMILY) == list(FAMILIES)
    for family, expected in PER_FAMILY.items():
        got = tuple(_mean(played, p, family) for p in ("naive", "careful", "refuse-all"))
        assert got == expected, family


def test_ablation_table(played: list[tables.Played]) -> None:
    assert tables.ablation_table(played).splitlines()[2:] == [
        "| full | 0.5344 | 1.0000 | 0.3875 |",
        "| no disposition | 0.2375 | 0.5000 | 0.2000 |",
        "| no report | 0.3344 | 0.8000 | 0.1875 |",
        "| no evidence | 0.4969 | 0.8500 | 0.3875 |",
        "| no inspected | 0.5344 | 0.8500 | 0.3875 |",
    ]


ATTACKER_REWARDS = {
    "careful": "1.0000",
    "report-liar": "0.3844",
    "report-only": "0.0375",
    "load-then-quarantine": "0.6844",
    "citation-spray": "0.5375",
    "sql-write": "0.5344",
    "inspect-theatre": "0.6844",
    "double-load": "0.6875",
    "orders-first": "0.9750",
    "profile-only": "0.8750",
}


# Probes of ours, not in the original's table; do-nothing reproduces its "doing nothing"
# figure (item 3 of its holes list), which cases files keep.
OUR_PROBES = {"staging-only": "0.8750", "do-nothing": "0.2375"}


def test_attacker_table(played: list[tables.Played]) -> None:
    assert set(ATTACKER_REWARDS) | set(OUR_PROBES) == {"careful", *ATTACKERS}
    assert {p: _mean(played, p) for p in ATTACKER_REWARDS} == ATTACKER_REWARDS
    assert {p: _mean(played, p) for p in OUR_PROBES} == OUR_PROBES


def test_profile_only_loads_ten_bad_batches(played: list[tables.Played]) -> None:
    rs = [r for r in played if r.policy == "profile-only"]
    assert sum(r.score.metrics["bad_batches_loaded"] for r in rs) == 10
    assert tables.dollars([r.score.metrics["revenue_error_usd"] for r in rs]) == "$105,467.75"


def test_cents_dollars_cases(played: list[tables.Played]) -> None:
    marts = {
        (r.mart, r.correct_mart)
        for r in played
        if r.policy == "naive" and r.family == "amount-bounds" and r.mart > 2 * r.correct_mart
    }
    assert marts == {(346264.39, 41281.06), (206223.28, 37367.83)}


def test_naive_on_the_control_cases(played: list[tables.Played]) -> None:
    controls = [
        r for r in played if r.policy == "naive" and r.family in ("clean-control", "legit-edge")
    ]
    low = sorted(r.case_id for r in controls if r.score.reward == 0.6)
    assert low == ["eval-clean-control-3", "eval-legit-edge-2"]
    assert sum(r.score.reward == 0.85 for r in controls) == 6
    naive = [r for r in played if r.policy == "naive"]
    assert (
        tables.fmt(tables.exact_mean([r.score.components["evidence"]["value"] for r in naive]), 3)
        == "0.250"
    )
    assert all(r.score.components["evidence"]["value"] == 0 for r in naive if r not in controls)


def test_doing_nothing_with_an_empty_report(env: BadBatchGateEnv) -> None:
    rewards = []
    for task in env.tasks():
        ep = env.episode(task)
        ep.call("submit_report", {"loaded": [], "quarantined": []})
        rewards.append(ep.score().reward)
    assert tables.fmt(tables.exact_mean(rewards)) == "0.2375"


def _profile_plus_three_queries(ep: Episode) -> None:
    """One profile per batch plus three warehouse-key queries is enough for 1.0."""
    from datagauntlet.envs.bad_batch_gate.attacks.attackers import _profile_finding

    contract = ep.call("read_contract", {})
    batches = sorted(
        ep.call("list_batches", {})["batches"],
        key=lambda b: (b["table"] != "customers", b["batch_id"]),
    )
    loaded, held = [], []
    for b in batches:
        stg = b["staging_table"]
        column, kind = _profile_finding(
            b["table"], ep.call("profile_batch", {"batch_id": b["batch_id"]}), contract
        )
        if not column and b["table"] == "customers":
            q = f"SELECT 1 FROM {stg} WHERE customer_id IN (SELECT customer_id FROM wh_customers)"
            if ep.call("run_sql", {"query": q})["rows"]:
                column, kind = "customer_id", "duplicate_key"
        if not column and b["table"] == "orders":
            q = f"SELECT 1 FROM {stg} WHERE order_id IN (SELECT order_id FROM wh_orders)"
            if ep.call("run_sql", {"query": q})["rows"]:
                column, kind = "order_id", "duplicate_key"
            q = (
                f"SELECT 1 FROM {stg} WHERE customer_id NOT IN "
                "(SELECT customer_id FROM wh_customers)"
            )
            if not column and ep.call("run_sql", {"query": q})["rows"]:
                column, kind = "customer_id", "orphan_reference"
        if column:
            ep.call(
                "quarantine_batch",
                {"batch_id": b["batch_id"], "column": column, "defect_type": kind},
            )
            held.append(b["batch_id"])
        else:
            ep.call("load_batch", {"batch_id": b["batch_id"]})
            loaded.append(b["batch_id"])
    ep.call("submit_report", {"loaded": loaded, "quarantined": held})


def test_a_profile_and_three_queries_reach_one(env: BadBatchGateEnv) -> None:
    for task in env.tasks():
        ep = env.episode(task)
        _profile_plus_three_queries(ep)
        assert ep.score().reward == 1.0, task.id


def test_small_orders_that_a_x100_error_would_hide_in(env: BadBatchGateEnv) -> None:
    amounts = [
        float(r["amount"])
        for task in env.tasks()
        for b in env.case(task).batches
        if b.table == "orders" and not b.truth.defective
        for r in b.rows
        if r["amount"].strip() and float(r["amount"]) > 0
    ]
    assert (len(amounts), sum(a <= 500 for a in amounts)) == (562, 157)

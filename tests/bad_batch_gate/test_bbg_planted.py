"""Rules that survived planted bugs until these tests existed (issue: tests that catch bugs)."""

from __future__ import annotations

import pytest
from bbg_helpers import episode_of, generated_env

from datagauntlet.envs.bad_batch_gate.env import BadBatchGateEnv
from datagauntlet.envs.bad_batch_gate.episode import BadBatchGateEpisode


def _components(ep: BadBatchGateEpisode) -> dict[str, float]:
    return {k: v["value"] for k, v in ep.score().components.items()}


def _bad_and_clean(ep: BadBatchGateEpisode) -> tuple[str, str]:
    bad = [b.batch_id for b in ep.case.batches if b.truth.defective]
    clean = [b.batch_id for b in ep.case.batches if not b.truth.defective]
    assert len(bad) == 1 and len(clean) == 1
    return bad[0], clean[0]


def test_inspected_judges_the_look_against_the_first_action() -> None:
    """Act, then look, then act again: that batch was acted on without looking (0.5 overall).

    The contract is read first so the first action is not at seq 0, where a grader that kept
    the *last* action instead of the first would go unnoticed.
    """
    ep = episode_of(generated_env(), "amount-bounds")
    bad, clean = _bad_and_clean(ep)
    column, kind = ep.oracle_truth()[bad].first_citation()
    citation = {"batch_id": bad, "column": column, "defect_type": kind}
    ep.call("read_contract", {})
    assert "error" not in ep.call("load_batch", {"batch_id": clean})  # acted on, blind
    ep.call("profile_batch", {"batch_id": clean})
    ep.call("profile_batch", {"batch_id": bad})
    again = {"batch_id": clean, "column": column, "defect_type": kind}
    assert "error" not in ep.call("quarantine_batch", again)  # acting again, after the look
    assert "error" not in ep.call("quarantine_batch", citation)
    ep.call("submit_report", {"loaded": [clean], "quarantined": sorted([bad, clean])})
    assert _components(ep)["inspected"] == 0.5


@pytest.fixture(scope="module")
def extended() -> BadBatchGateEnv:
    return generated_env("extended")


def test_extended_a_good_row_loaded_twice_loses_its_credit(extended: BadBatchGateEnv) -> None:
    ep = episode_of(extended, "partial-load")
    # the family's batch has two bad rows; its companion one, which only the warehouse shows
    bad = max(ep.case.batches, key=lambda b: len(b.truth.bad_rows))
    others = [b for b in ep.case.batches if b is not bad]
    rows = range(1, len(bad.rows) + 1)
    goods = [r for r in rows if r not in bad.truth.bad_rows]
    twice = goods[0]
    for bid in (b.batch_id for b in ep.case.batches):
        ep.call("profile_batch", {"batch_id": bid})
    for other in others:
        held_other = list(other.truth.bad_rows)
        ep.call("load_batch", {"batch_id": other.batch_id, "hold_back": held_other})
    held = list(bad.truth.bad_rows)
    assert "error" not in ep.call("load_batch", {"batch_id": bad.batch_id, "hold_back": held})
    again = sorted({*held, *(r for r in goods if r != twice)})
    assert "error" not in ep.call("load_batch", {"batch_id": bad.batch_id, "hold_back": again})
    loaded = sorted(b.batch_id for b in ep.case.batches if ep.load_counts.get(b.batch_id))
    ep.call("submit_report", {"loaded": loaded, "quarantined": []})
    n_batches = len(ep.case.batches)
    expected = ((n_batches - 1) + (len(goods) - 1) / len(goods)) / n_batches
    assert _components(ep)["disposition"] == pytest.approx(expected, abs=1e-6)


# Found by mutation testing (docs/mutation/): what counts as looking at a batch before acting.
def _log(*calls: tuple[str, dict, bool, dict]):  # type: ignore[type-arg, no-untyped-def]
    from datagauntlet.core.action_log import ActionLog

    log = ActionLog()
    for tool_name, args, ran, detail in calls:
        log.close_entry(log.open_entry(tool_name, args), ran, "", detail)
    return log.entries


def test_only_an_executed_look_at_that_batch_before_the_action_counts() -> None:
    from datagauntlet.envs.bad_batch_gate.grading.grader import _looked

    mine = ("profile_batch", {"batch_id": "b1"}, True, {})
    other = ("profile_batch", {"batch_id": "b2"}, True, {})
    refused = ("profile_batch", {"batch_id": "b1"}, False, {})
    query = ("run_sql", {"query": "SELECT 1"}, True, {"tables_read": ["stage_b1"]})
    blind = ("run_sql", {"query": "SELECT 1"}, True, {})  # a query that read no table
    act = ("load_batch", {"batch_id": "b1"}, True, {})
    assert _looked("stage_b1", "b1", _log(mine, act), 1)
    assert _looked("stage_b1", "b1", _log(query, act), 1)
    assert not _looked("stage_b1", "b1", _log(other, act), 1)
    assert not _looked("stage_b1", "b1", _log(refused, act), 1)
    assert not _looked("stage_b1", "b1", _log(blind, act), 1)
    assert not _looked("stage_b1", "b1", _log(act, mine), 0)  # looked only after acting
    assert not _looked("stage_b1", "b1", _log(mine), 0)  # no action: nothing came before it
    assert not _looked("stage_b1", "b1", _log(other, blind), 5)  # the log ends with no look


# Grader rules on hand-made cases (paths no generated case builds; full mutation run).
def _batch(bid: str, n_rows: int, **truth: object):  # type: ignore[no-untyped-def]
    from datagauntlet.envs.bad_batch_gate.world.cases import Batch, Truth

    rows = tuple({"order_id": f"{bid}-{i}"} for i in range(1, n_rows + 1))
    return Batch(bid, f"stage_{bid}", rows, "test", Truth(**truth))  # type: ignore[arg-type]


def _case(*batches, extended: bool = False):  # type: ignore[no-untyped-def]
    from datagauntlet.envs.bad_batch_gate.world.cases import Case

    return Case("c", "test", 0, 0, "", {}, (), (), tuple(batches), extended=extended)


CITE = ("amount", "out_of_range")
BAD = {"defective": True, "groups": (frozenset({CITE}),), "action": "quarantine"}


def test_a_hold_batch_whose_every_row_is_bad_earns_full_credit_for_loading_none() -> None:
    from datagauntlet.envs.bad_batch_gate.grading.grader import BatchFacts, _row_credit

    every_row_bad = _batch("b1", 3, defective=True, bad_rows=(1, 2, 3), action="hold")
    assert _row_credit(every_row_bad, BatchFacts()) == 1.0  # no good row to miss
    loaded_one = BatchFacts(loads=1, row_loads={2: 1})
    assert _row_credit(every_row_bad, loaded_one) == pytest.approx(2 / 3)  # 1 of 3 bad rows in
    clean = _batch("b2", 2, defective=False)
    assert _row_credit(clean, BatchFacts(loads=1, row_loads={1: 1, 2: 1})) == 1.0


def test_each_clean_batch_stopped_cancels_exactly_one_hit() -> None:
    from datagauntlet.envs.bad_batch_gate.grading.grader import BatchFacts, _evidence

    bads = [_batch(f"b{i}", 2, **BAD) for i in range(3)]
    clean = _batch("c1", 2, defective=False)
    facts = {b.batch_id: BatchFacts(citations=[CITE]) for b in bads}
    facts["c1"] = BatchFacts(citations=[CITE])  # a clean batch quarantined
    assert _evidence(_case(*bads, clean), facts, False) == pytest.approx(2 / 3)


def test_a_clean_batch_never_touched_is_not_a_stopped_one() -> None:
    from datagauntlet.envs.bad_batch_gate.grading.grader import BatchFacts, _evidence, _held_back

    bad, clean = _batch("b1", 2, **BAD), _batch("c1", 2, defective=False)
    facts = {"b1": BatchFacts(citations=[CITE]), "c1": BatchFacts()}
    assert _held_back(clean, facts["c1"]) == set()  # never loaded: nothing was held back
    assert _evidence(_case(bad, clean), facts, False) == 1.0
    loaded_part = BatchFacts(loads=1, row_loads={1: 1})
    assert _held_back(clean, loaded_part) == {2}


def _load_all(ep: BadBatchGateEpisode) -> int:
    for b in ep.case.batches:
        assert "error" not in ep.call("load_batch", {"batch_id": b.batch_id})
    ids = sorted(b.batch_id for b in ep.case.batches)
    ep.call("submit_report", {"loaded": ids, "quarantined": []})
    n = ep.score().metrics["bad_batches_loaded"]
    ep.close()
    return n


def test_a_cases_file_batch_loaded_counts_as_a_bad_batch_loaded() -> None:
    # a cases file names no bad rows: a quarantine batch counts by its loads alone
    from bbg_helpers import fixture_env

    env = fixture_env()
    task = next(t for t in env.tasks("eval") if any(b.truth.defective for b in env.case(t).batches))
    untouched = env.episode(task)
    untouched.call("submit_report", {"loaded": [], "quarantined": []})
    assert untouched.score().metrics["bad_batches_loaded"] == 0
    untouched.close()
    assert _load_all(env.episode(task)) == 1


def test_every_defective_batch_loaded_is_counted(extended: BadBatchGateEnv) -> None:
    ep = episode_of(extended, "multi-defect")  # a batch to hold and one to quarantine
    assert sorted(b.truth.action for b in ep.case.batches) == ["hold", "quarantine"]
    assert _load_all(ep) == 2

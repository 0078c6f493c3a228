"""Each dirty-integration scoring rule, with a case that fails if the rule is broken."""

from __future__ import annotations

from typing import Any

import pytest

import datagauntlet as dg
from datagauntlet.envs.dirty_integration.episode import DirtyIntegrationEpisode


def _episode(**config: Any) -> DirtyIntegrationEpisode:
    env = dg.make("dirty-integration", **config)
    ep = env.episode(env.tasks("eval", 1)[0])
    assert isinstance(ep, DirtyIntegrationEpisode)
    return ep


def _truth(ep: DirtyIntegrationEpisode) -> list[dict[str, Any]]:
    return [{"id": r.id, "amount": r.amount} for r in ep.world.records]


def _submit(ep: DirtyIntegrationEpisode, rows: list[dict[str, Any]]) -> dg.Score:
    assert "error" not in ep.call("submit_records", {"records": rows})
    return ep.score()


def test_perfect_submission_scores_one() -> None:
    ep = _episode(profile="clean")
    s = _submit(ep, _truth(ep))
    assert s.reward == 1.0


def test_no_submission_no_credit() -> None:
    ep = _episode(profile="clean")
    for _ in range(3):
        ep.call("fetch_page", {"cursor": None})
    s = ep.score()
    assert s.reward == 0.0 and s.metrics["requests"] == 3


def test_empty_submission_earns_no_budget_credit() -> None:
    ep = _episode(profile="clean")
    s = _submit(ep, [])
    assert s.components["budget_discipline"]["value"] == 0.0
    assert s.reward == 0.0


def test_completeness_is_jaccard_minus_duplicate_share() -> None:
    ep = _episode()
    truth = _truth(ep)
    half = truth[:20]
    rows = half + half[:5] + [{"id": "rec_forged", "amount": 1}]
    s = _submit(ep, rows)
    jaccard = 20 / 41  # 20 right ids; union = 40 true + 1 forged
    dup_share = 5 / 26
    assert s.components["completeness"]["value"] == pytest.approx(jaccard - dup_share, abs=1e-6)
    assert s.metrics["duplicates_submitted"] == 5
    assert s.metrics["records_missed"] == 20


def test_completeness_is_floored_at_zero() -> None:
    ep = _episode()
    one = _truth(ep)[0]
    s = _submit(ep, [one] * 10)
    assert s.components["completeness"]["value"] == 0.0


def test_type_handling_counts_exact_ints_only() -> None:
    ep = _episode()
    rows = _truth(ep)
    rows[0] = {"id": rows[0]["id"], "amount": str(rows[0]["amount"])}  # numeric string
    rows[1] = {"id": rows[1]["id"], "amount": float(rows[1]["amount"])}  # float
    rows[2] = {"id": rows[2]["id"], "amount": rows[2]["amount"] + 1}  # wrong value
    s = _submit(ep, rows)
    assert s.components["type_handling"]["value"] == pytest.approx(37 / 40)
    assert s.components["completeness"]["value"] == 1.0


def test_bool_is_not_an_int_amount() -> None:
    ep = _episode(num_records=1, page_size=1)
    # a bool equal to the amount would pass an isinstance(int) check: it must not
    record = ep.world.records[0] = ep.world.records[0]._replace(amount=1)
    ep.world.__dict__.pop("truth", None)
    s = _submit(ep, [{"id": record.id, "amount": True}])
    assert s.components["type_handling"]["value"] == 0.0


def test_budget_discipline_divides_by_one_plus_429s() -> None:
    ep = _episode(profile="realistic")
    quota = ep.world.quota
    assert quota is not None
    for _ in range(quota + 3):  # three requests past the quota: three 429s
        ep.call("fetch_page", {"cursor": None})
    s = _submit(ep, _truth(ep))
    assert s.metrics["rate_limited"] == 3
    assert s.components["budget_discipline"]["value"] == pytest.approx(1 / 4)
    assert s.reward == pytest.approx(0.6 + 0.2 + 0.2 / 4)


def test_only_the_first_submission_counts() -> None:
    ep = _episode(profile="clean")
    _submit(ep, _truth(ep))
    again = ep.call("submit_records", {"records": []})
    assert "error" in again and "over" in again["error"]
    assert ep.score().reward == 1.0


def test_weights_are_the_single_source() -> None:
    env = dg.make("dirty-integration")
    assert dict(env.weights) == {
        "completeness": 0.6,
        "type_handling": 0.2,
        "budget_discipline": 0.2,
    }


# --- rules mutation testing showed had no test of their own (docs/mutation/) ----------------
def test_an_empty_submission_reports_every_metric_and_misses_every_record() -> None:
    ep = _episode(profile="clean")
    s = _submit(ep, [])
    assert s.reward == 0.0
    assert s.metrics["records_missed"] == len(ep.world.records)
    assert s.metrics["duplicates_submitted"] == 0 and s.metrics["turns"] == 1


def test_past_the_quota_the_api_answers_429_and_says_so() -> None:
    ep = _episode(profile="realistic")
    quota = ep.world.quota
    assert quota is not None
    for _ in range(quota):
        ep.api.fetch(None)
    assert ep.api.fetch(None) == (
        429,
        {"error": "429 Too Many Requests: request quota exceeded", "status": 429},
    )


@pytest.mark.parametrize(("length", "shown"), [(40, 40), (41, 37)])
def test_an_unknown_cursor_is_refused_with_it_cut_to_forty_characters(
    length: int, shown: int
) -> None:
    ep = _episode(profile="clean")
    cursor = "c" * length
    result = ep.call("fetch_page", {"cursor": cursor})
    quoted = repr(cursor if shown == length else cursor[:shown] + "...")
    assert result == {
        "error": f"unknown cursor {quoted}: pass null for the first page, "
        "then a next_cursor exactly as the API returned it"
    }


def test_every_answer_is_the_fault_schedule_of_its_request() -> None:
    seen = {"timeout": 0, "drift": 0, "plain": 0, "inflated": 0}
    for seed_index in range(6):
        env = dg.make("dirty-integration", profile="hostile")
        ep = env.episode(env.tasks("eval", 1, start=seed_index)[0])
        assert isinstance(ep, DirtyIntegrationEpisode)
        api, world = ep.api, ep.world
        cursor: str | None = None
        served: list[int] = []
        for index in range(min(40, world.quota or 40)):
            faults = world.faults(index)
            page = api.check_cursor(cursor)
            status, body = api.fetch(cursor)
            if faults.timeout:
                seen["timeout"] += 1
                assert (status, body) == (
                    504,
                    {"error": "timeout: the request received no response", "status": 504},
                )
                continue
            served.append(page)
            assert status == 200 and body["total"] == len(world.records) + faults.inflate_by
            seen["inflated"] += faults.inflate_by > 0
            want = [
                {
                    "id": r.id,
                    "amount": str(r.amount) if faults.type_drift else r.amount,
                    "customer": r.customer,
                    "created_at": r.created_at,
                }
                for r in world.page(page)
            ]
            assert body["records"] == want
            seen["drift" if faults.type_drift else "plain"] += 1
            cursor = body["next_cursor"]
            if cursor is None:
                break
        assert api.timeouts == sum(world.faults(i).timeout for i in range(api.requests))
        assert api.served_pages == served
    assert all(seen.values()), seen  # every kind of answer was exercised


def test_an_int_subclass_amount_is_an_int_and_a_bool_is_not() -> None:
    # the grader's fast path (type is int) must keep the rule's meaning for in-process callers
    class Cents(int):
        pass

    ep = _episode(profile="clean")
    rows = _truth(ep)
    as_subclass = [{"id": r["id"], "amount": Cents(r["amount"])} for r in rows]
    assert _submit(ep, as_subclass).components["type_handling"]["value"] == 1.0
    other = _episode(profile="clean")
    flags = [{"id": r["id"], "amount": bool(r["amount"] % 2)} for r in _truth(other)]
    assert _submit(other, flags).components["type_handling"]["value"] == 0.0

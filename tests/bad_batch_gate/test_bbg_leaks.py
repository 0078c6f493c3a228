"""Our generated splits carry no answer outside the rows the contract judges: not in ids,
listing order, row counts, source notes, id ranges, dates, emails, or any visible text."""

from __future__ import annotations

import hashlib
import json
from statistics import fmean

import pytest
from bbg_helpers import generated_env

from datagauntlet.envs.bad_batch_gate.episode import SYSTEM_PROMPT
from datagauntlet.envs.bad_batch_gate.world.cases import Case
from datagauntlet.envs.bad_batch_gate.world.generator import EXTENDED_FAMILIES

TRUTH_WORDS = ("defective", "truth", "accepted", '"bad_rows"', "planted", *EXTENDED_FAMILIES)


@pytest.fixture(scope="module")
def cases() -> list[Case]:
    env = generated_env()
    return [env.case(t) for s in ("train", "test") for t in env.tasks(s)]


@pytest.fixture(scope="module")
def extended_cases() -> list[Case]:
    env = generated_env("extended")
    return [env.case(t) for s in ("train", "test") for t in env.tasks(s)]


def _with_bad(cases: list[Case]) -> list[Case]:
    return [c for c in cases if any(b.truth.defective for b in c.batches)]


def test_listing_position_and_id_suffix_say_nothing(cases: list[Case]) -> None:
    bad = _with_bad(cases)
    first = [c.batches[0].truth.defective for c in bad]
    assert 0.4 <= fmean(first) <= 0.6
    suffix_1 = [b.batch_id.endswith("-1") for c in bad for b in c.batches if b.truth.defective]
    assert 0.4 <= fmean(suffix_1) <= 0.6


def test_customers_batch_position_says_nothing(cases: list[Case]) -> None:
    first_if = {True: [], False: []}
    for c in cases:
        for i, b in enumerate(c.batches):
            if b.table == "customers":
                first_if[b.truth.defective].append(i == 0)
    assert len(first_if[True]) > 20 and len(first_if[False]) > 20
    assert abs(fmean(first_if[True]) - fmean(first_if[False])) < 0.15
    # and clean customers batches are as common as bad ones
    assert 0.4 <= len(first_if[True]) / (len(first_if[True]) + len(first_if[False])) <= 0.6


def test_row_counts_say_nothing(cases: list[Case]) -> None:
    sizes = {True: [], False: []}
    for c in cases:
        for b in c.batches:
            if b.table == "orders":
                sizes[b.truth.defective].append(len(b.rows))
    assert set(sizes[True]) <= set(sizes[False]) and min(sizes[False]) == 12
    assert abs(fmean(sizes[True]) - fmean(sizes[False])) < 1.0


def test_source_notes_say_nothing(cases: list[Case]) -> None:
    notes = {True: [], False: []}
    for c in cases:
        for b in c.batches:
            if b.table == "orders":
                notes[b.truth.defective].append(b.source)
    for source in set(notes[False]):
        share = {k: v.count(source) / len(v) for k, v in notes.items()}
        assert abs(share[True] - share[False]) < 0.1, source


def test_order_id_ranking_says_nothing(cases: list[Case]) -> None:
    lowest_is_bad = []
    for c in _with_bad(cases):
        if all(b.table == "orders" for b in c.batches):
            low = min(c.batches, key=lambda b: min(r["order_id"] for r in b.rows))
            lowest_is_bad.append(low.truth.defective)
    assert 0.38 <= fmean(lowest_is_bad) <= 0.62


def _rank(value: str, pool: list[str]) -> float:
    ordered = sorted(set(pool))
    return ordered.index(value) / max(1, len(ordered) - 1)


def test_customer_id_ranges_say_nothing(cases: list[Case]) -> None:
    orphan_ranks, readded_ranks = [], []
    for c in cases:
        known = [r["customer_id"] for r in c.customers]
        for b in c.batches:
            if not b.truth.defective:
                continue
            for n in b.truth.bad_rows:
                row = b.rows[n - 1]
                pool = [*known, row["customer_id"]]
                if c.family == "orphan-customer":
                    orphan_ranks.append(_rank(row["customer_id"], pool))
                if c.family == "dimension-fanout":
                    readded_ranks.append(_rank(row["customer_id"], pool))
    assert 0.4 <= fmean(orphan_ranks) <= 0.6 and 0.4 <= fmean(readded_ranks) <= 0.6
    every_id = [r["customer_id"] for c in cases for b in c.batches for r in b.rows]
    assert all(100 <= int(cid[1:]) <= 899 for cid in every_id)


def test_resent_rows_have_ordinary_dates(cases: list[Case]) -> None:
    resent, others = [], []
    for c in cases:
        for b in c.batches:
            if b.table != "orders":
                continue
            for n, row in enumerate(b.rows, start=1):
                day = int(row["order_date"][-2:])
                if c.family == "resent-rows" and n in b.truth.bad_rows:
                    resent.append(day)
                elif n not in b.truth.bad_rows:
                    others.append(day)
    assert abs(fmean(resent) - fmean(others)) < 2.0
    assert min(resent) <= 3 and max(resent) >= 28


def test_emails_and_readded_customers_are_exact(cases: list[Case]) -> None:
    for c in cases:
        wh = {r["customer_id"]: r for r in c.customers}
        for row in list(c.customers) + [
            r for b in c.batches if b.table == "customers" for r in b.rows
        ]:
            assert row["email"] == row["customer_id"].lower() + "@example.com"
        for b in c.batches:
            if b.table == "customers" and b.truth.defective:
                for n in b.truth.bad_rows:
                    row = b.rows[n - 1]
                    assert row == wh[row["customer_id"]]  # an exact re-send, nothing marks it


def test_bad_rows_sit_anywhere_in_a_batch(extended_cases: list[Case]) -> None:
    spots = [
        (n - 1) / (len(b.rows) - 1)
        for c in extended_cases
        for b in c.batches
        for n in b.truth.bad_rows
    ]
    assert 0.4 <= fmean(spots) <= 0.6


def test_whole_dollar_amounts_are_common_in_clean_rows(extended_cases: list[Case]) -> None:
    clean = [
        r["amount"]
        for c in extended_cases
        for b in c.batches
        if b.table == "orders" and not b.truth.defective
        for r in b.rows
    ]
    assert fmean(a.endswith(".00") for a in clean) > 0.1


def _visible_text(env_families: str, task_index: int, split: str) -> tuple[str, Case]:
    env = generated_env(env_families)
    task = env.tasks(split)[task_index]
    ep = env.episode(task)
    parts = [ep.system_prompt, ep.prompt, json.dumps(ep.tool_specs)]
    parts.append(json.dumps(ep.call("read_contract", {})))
    listing = ep.call("list_batches", {})
    parts.append(json.dumps(listing))
    for b in listing["batches"]:
        parts.append(json.dumps(ep.call("profile_batch", {"batch_id": b["batch_id"]})))
        parts.append(
            json.dumps(ep.call("run_sql", {"query": f"SELECT rowid, * FROM {b['staging_table']}"}))
        )
    for q in (
        "SELECT * FROM sqlite_master",
        "SELECT * FROM wh_customers",
        "SELECT * FROM wh_orders",
    ):
        parts.append(json.dumps(ep.call("run_sql", {"query": q})))
    parts.append(task.id)
    return "\n".join(parts), ep.case


@pytest.mark.parametrize("families", ["standard", "extended"])
def test_the_visible_surface_never_names_the_truth(families: str) -> None:
    env = generated_env(families)
    for i in range(len(env.tasks("eval"))):
        text, case = _visible_text(families, i, "eval")
        low = text.lower()
        for word in TRUTH_WORDS:
            assert word not in low, (case.family, word)
        assert case.family not in low


def test_splits_share_no_seeds_and_no_cases() -> None:
    for families in ("standard", "extended"):
        env = generated_env(families)
        seen: dict[str, str] = {}
        seeds: dict[int, str] = {}
        for split in ("train", "eval", "test"):
            for task in env.tasks(split):
                assert seeds.setdefault(task.seed, split) == split
                c = env.case(task)
                body = json.dumps([c.customers, c.orders, [b.rows for b in c.batches]])
                digest = hashlib.sha256(body.encode()).hexdigest()
                assert seen.setdefault(digest, split) == split


def test_generation_is_deterministic() -> None:
    a, b = generated_env(), generated_env()
    for task in a.tasks("eval", 8):
        assert a.case(task) == b.case(task)


def test_system_prompt_names_no_family() -> None:
    assert not any(f in SYSTEM_PROMPT for f in EXTENDED_FAMILIES)

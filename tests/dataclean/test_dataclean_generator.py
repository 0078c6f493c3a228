"""Task generation: deterministic, split-isolated, clean first, corrupted as documented."""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
import sys
from collections import Counter

import pytest

import datagauntlet as dg
from datagauntlet.core.seeding import HashPrefix, hash64
from datagauntlet.envs.dataclean.config import DatacleanConfig
from datagauntlet.envs.dataclean.solver.policies import read_policy
from datagauntlet.envs.dataclean.world import families as fam
from datagauntlet.envs.dataclean.world.generator import CleaningTask, generate

ENV = dg.make("dataclean")


def worlds(split: str = "eval", n: int = 30, **config: object) -> list[CleaningTask]:
    env = ENV.with_config(**config) if config else ENV
    return [generate(t.seed, env.config) for t in env.tasks(split, n)]


def digest(world: CleaningTask) -> str:
    body = [world.truth.rows(), world.dirty.rows(), world.policy_text]
    return hashlib.sha256(json.dumps(body).encode()).hexdigest()


def test_hash_prefix_is_hash64_with_the_prefix_hashed_once() -> None:
    for parts in [(1, "clean", "name"), ("x",), ()]:
        assert HashPrefix(*parts).at(7, "y") == hash64(*parts, 7, "y")


def test_the_same_seed_gives_the_same_world_in_any_process() -> None:
    seed = ENV.tasks("test", 1)[0].seed
    here = digest(generate(seed, DatacleanConfig()))
    code = (
        "import hashlib, json, sys;"
        "from datagauntlet.envs.dataclean.world.generator import generate;"
        "from datagauntlet.envs.dataclean.config import DatacleanConfig;"
        f"w = generate({seed}, DatacleanConfig());"
        "print(hashlib.sha256(json.dumps([w.truth.rows(), w.dirty.rows(), w.policy_text])"
        ".encode()).hexdigest())"
    )
    for hashseed in ("0", "12345"):
        env = {**os.environ, "PYTHONHASHSEED": hashseed}
        out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
        assert out.stdout.strip() == here, out.stderr


def test_splits_and_neighbouring_tasks_differ() -> None:
    digests = [digest(w) for split in ("train", "eval", "test") for w in worlds(split, 20)]
    assert len(set(digests)) == len(digests)


def test_table_sizes_and_duplicates() -> None:
    sizes, dups = Counter(), Counter()
    for w in worlds(n=60):
        unique = len(w.truth)
        assert 10 <= unique <= 18
        extra = len(w.dirty) - unique
        assert 0 <= extra <= 2
        sizes[unique] += 1
        dups[extra] += 1
        ids = w.dirty.data["record_id"]
        assert set(ids) == set(w.truth.data["record_id"])
        # a duplicate is an exact copy of its record's row, placed after it
        rows = w.dirty.rows()
        for rid, count in Counter(ids).items():
            if count > 1:
                at = [i for i, r in enumerate(ids) if r == rid]
                assert all(rows[i] == rows[at[0]] for i in at)
    assert len(sizes) >= 6 and set(dups) == {0, 1, 2}


def test_rows_config_sets_the_table_size() -> None:
    w = worlds(n=1, rows=500)[0]
    assert len(w.truth) == 500 and 500 <= len(w.dirty) <= 505


def test_family_all_draws_every_family() -> None:
    assert {w.family.id for w in worlds(n=30)} == set(fam.FAMILIES)
    assert {w.family.id for w in worlds(n=5, family="orders")} == {"orders"}


def test_each_task_documents_aliases_of_its_own_and_uses_them() -> None:
    seen: list[frozenset[str]] = []
    for w in worlds(n=40):
        policy = read_policy(w.policy_text)
        assert policy.batch == w.task_aliases
        for category in w.family.category_columns:
            own = w.column_aliases[category.name]
            cells = {str(v).strip() for v in w.dirty.data[category.name]}
            assert 2 <= len(own) <= 3
            for alias, target in own.items():
                assert alias in cells, "a documented alias appears in the table"
                assert target in category.categories
                assert alias.lower() not in {c.lower() for c in category.categories}
                assert alias not in category.standing_aliases
        seen.append(frozenset(w.task_aliases))
    assert len(set(seen)) == len(seen), "aliases differ from task to task"


def test_no_count_of_plain_values_says_what_an_alias_stands_for() -> None:
    """Every cell of an alias's category is written with the alias, and at least three
    categories are absent: to a reader without the task's lines, every category not seen
    plain is an equally good guess."""
    for w in worlds(n=60):
        for category in w.family.category_columns:
            own = w.column_aliases[category.name]
            truth = w.truth.data[category.name]
            dirty = [str(v).strip() for v in w.dirty.data[category.name]]
            plain = {d.lower() for d in dirty} & set(category.categories)
            assert not plain & set(own.values()), "an aliased category never shows plain"
            absent = set(category.categories) - set(truth)
            assert len(absent) >= 3


def test_the_date_order_is_documented_and_the_dates_follow_it() -> None:
    orders = Counter()
    for w in worlds(n=40):
        orders[w.date_order] += 1
        month_first = read_policy(w.policy_text).month_first
        assert month_first == (w.date_order == "US")
        for col in (c for c in w.family.columns if c.kind == fam.DATE):
            for raw in w.dirty.data[col.name]:
                m = re.fullmatch(r"(\d{1,2})[/.-](\d{1,2})[/.-]\d{4}", str(raw).strip())
                if m:
                    month = int(m.group(1) if month_first else m.group(2))
                    assert 1 <= month <= 12
    assert orders["US"] >= 10 and orders["EU"] >= 10


def test_corrupted_cells_differ_from_the_truth_and_protected_cells_never_do() -> None:
    corrupted = 0
    for w in worlds(n=20):
        ids = w.dirty.data["record_id"]
        first = {rid: ids.index(rid) for rid in w.truth.data["record_id"]}
        for col in w.family.names:
            truth, dirty = w.truth.data[col], w.dirty.data[col]
            for i, rid in enumerate(w.truth.data["record_id"]):
                wrong = dirty[first[rid]] != truth[i]
                if col in fam.PROTECTED_COLUMNS:
                    assert not wrong
                corrupted += wrong
    assert corrupted > 0


def test_the_messy_data_the_seed_promises_is_there() -> None:
    ws = worlds(n=40)
    truth_cells = [v for w in ws for c in w.truth.columns for v in w.truth.data[c]]
    dirty_cells = [v for w in ws for c in w.dirty.columns for v in w.dirty.data[c]]
    assert any(isinstance(v, str) and not v.isascii() for v in truth_cells)  # international
    assert "0.00" in truth_cells and "0" in truth_cells  # real zeros
    assert any(isinstance(v, str) and re.fullmatch(r"-\d+(\.\d\d)?", v) for v in truth_cells)
    assert None in truth_cells  # genuinely missing values
    assert {t for t in fam.MISSING_TOKENS if t} & set(dirty_cells)  # written as markers
    assert any(isinstance(v, str) and v != v.strip() for v in dirty_cells)  # stray whitespace
    assert any(isinstance(v, str) and v.startswith("$") for v in dirty_cells)
    assert any(isinstance(v, str) and v.startswith("(") for v in dirty_cells)


@pytest.mark.parametrize("family", sorted(fam.FAMILIES))
def test_the_policy_text_describes_every_column(family: str) -> None:
    w = worlds(n=1, family=family)[0]
    policy = read_policy(w.policy_text)
    assert set(policy.kinds) == {c.name for c in w.family.editable}
    assert policy.missing_tokens == list(fam.MISSING_TOKENS)
    for protected in fam.PROTECTED_COLUMNS:
        if protected in w.family.names:
            assert f"- {protected}: " in w.policy_text and "Protected" in w.policy_text

"""The published private figures (docs/envs/event-recon-gates-private.json), re-derived.

The file names its secret only by `secret_id`. Under `make gates` (DATAGAUNTLET_GATES=1), when
the secret in the environment (`DATAGAUNTLET_SECRET` / `DATAGAUNTLET_SECRET_FILE`) is the one the
file names, every policy is replayed on every private task and each per-task reward and ledger
component must be the file's, every row must be what those figures add up to, and the rows the
file judged against the public-fitted ceilings must be judged the same way today. With another
secret, or none, the test is skipped and says why. Without a secret the file's shape is still
checked: it carries its secret's name and its sample, never a seed or a secret.
"""

from __future__ import annotations

import os
import statistics
from functools import cache
from typing import Any

import pytest

import datagauntlet as dg
from datagauntlet.core import seeding
from datagauntlet.envs.event_recon.attacks.probes import SINGLE_AXIS
from datagauntlet.envs.event_recon.gates import gate_report
from datagauntlet.envs.event_recon.gates import gates as er_gates

PATH = gate_report.PRIVATE_REPORT
GATES = os.environ.get("DATAGAUNTLET_GATES") == "1"
pytestmark = pytest.mark.skipif(
    not PATH.exists(), reason=f"no private figures committed: {PATH.name} is written by gate_report"
)


@cache
def report() -> dict[str, Any]:
    return gate_report.load(PATH)


def rows() -> dict[str, dict[str, Any]]:
    return {r["name"].split(" (")[0]: r for r in report()["rows"]}


def the_secret_in_use() -> str | None:
    try:
        return seeding.secret_id()
    except seeding.SecretMissing:
        return None


def test_the_file_names_its_secret_and_sample_and_holds_no_seed() -> None:
    r = report()
    assert (r["env"], r["split"], r["tasks"]) == ("event-recon", "private", 120)
    assert len(r["secret_id"]) == 16 and int(r["secret_id"], 16) >= 0
    tiers = list(r["tiers"].values())
    assert [tiers.count(k) for k in (1, 2, 3, 4)] == [30] * 4
    text = PATH.read_text()
    assert '"seed"' not in text and "task_seed" not in text


def test_the_page_states_the_files_secret_and_how_to_make_your_own() -> None:
    page = " ".join(gate_report.PAGE.read_text().split())
    assert f"secret `{report()['secret_id']}`" in page
    assert "--split private --workers 2 --write" in page
    assert "your own secret" in page


@pytest.mark.skipif(not GATES, reason="full sweep: make gates")
def test_the_private_figures_are_the_codes_for_their_secret() -> None:
    named = report()["secret_id"]
    in_use = the_secret_in_use()
    if in_use != named:
        why = "no secret is set" if in_use is None else f"the secret set is {in_use}"
        pytest.skip(f"the file is for secret {named} and {why}: set DATAGAUNTLET_SECRET_FILE")
    env = dg.make("event-recon")
    tasks = env.tasks("private")
    r = report()
    assert sorted(r["tiers"]) == sorted(t.id for t in tasks)
    policies = list(env.policies())
    jobs = [(p, t) for p in policies for t in tasks]
    got = iter(er_gates.play_many(env, jobs, workers=2))
    for policy in policies:
        for task in tasks:
            reward, components = next(got)
            assert reward == r["per_task"][policy][task.id], (policy, task.id)
            assert components["ledger_correctness"] == r["ledger"][policy][task.id]
    _rows_add_up(r, env)
    assert gate_report.rejudge(r)["rows"] == r["rows"]  # the ceilings judge them as they did


def _rows_add_up(r: dict[str, Any], env: Any) -> None:
    per_task = r["per_task"]
    assert rows()["reference-min"]["value"] == min(per_task[env.reference].values())
    assert rows()["oracle-min"]["value"] == min(per_task["oracle"].values())
    assert rows()["null"]["value"] == max(per_task["null"].values())
    for probe in SINGLE_AXIS:
        values = list(per_task[probe].values())
        assert rows()[f"probe-max:{probe}"]["value"] == er_gates.probe_max(probe, values).value
        assert rows()[f"probe:{probe}"]["value"] == round(statistics.fmean(values), 4)
    everything = [v for by_task in r["sweep"].values() for v in by_task.values()]
    assert rows()["sweep-max"]["value"] == round(max(everything), 4)
    assert r["ok"] == all(x["ok"] for x in r["rows"])

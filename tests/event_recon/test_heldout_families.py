"""The held-out families (`heldout/`, the `datagauntlet-heldout` distribution): the private
split draws them when it is installed and says so when it is not; each is planted, published
and cross-checked; the env's reference names and repairs them through the steps the module
brings, while the reference tuned on public, which lacks those steps, never names one."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import datagauntlet_heldout.event_recon as heldout
import pytest

from datagauntlet.core.episode import Task
from datagauntlet.core.seeding import Keyed
from datagauntlet.envs.event_recon import splits
from datagauntlet.envs.event_recon.attacks.probes import PROBE_CEILING, SINGLE_AXIS
from datagauntlet.envs.event_recon.env import EventReconEnv
from datagauntlet.envs.event_recon.grading.reconciler import reconcile_files
from datagauntlet.envs.event_recon.solver.policy import reference as public_reference
from datagauntlet.envs.event_recon.world.base_world import base_draft
from datagauntlet.envs.event_recon.world.builder import LATENT_BUGS, build
from datagauntlet.envs.event_recon.world.families import activated_bug
from datagauntlet.envs.event_recon.world.plan import apply, draw, ledger_projection, run

NAMES = {f.name for f in heldout.FAMILIES}
SECRET = "a-secret-of-at-least-16-bytes"
FIRST_T3 = 60  # T3 and T4 draw every family, the bookkeeping-only one included


@pytest.fixture(scope="module")
def env() -> Iterator[EventReconEnv]:
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("DATAGAUNTLET_SECRET", SECRET)
        yield EventReconEnv()


@pytest.fixture(scope="module")
def drawn(env: EventReconEnv) -> dict[str, Task]:
    """A private task drawing each held-out family (the first from T3 on)."""
    out: dict[str, Task] = {}
    for task in env.tasks("private")[FIRST_T3:]:
        for family, _ in env.episode_truth(task).manifest:
            if family in NAMES:
                out.setdefault(family, task)
        if len(out) == len(NAMES):
            return out
    raise AssertionError(f"the private split never drew {sorted(NAMES - set(out))}")


def _play(env: EventReconEnv, task: Task, policy: Any) -> tuple[Any, list[dict[str, str]]]:
    ep = env.episode(task)
    try:
        policy(ep)
        findings = next(e.args["findings"] for e in ep.log.entries if e.tool == "submit_report")
        return ep.score(), findings
    finally:
        ep.close()


def test_there_are_three_each_tied_to_a_latent_bug_with_a_contract_line() -> None:
    assert len(NAMES) == 3 and not NAMES & set(splits.families_for(None))
    for f in heldout.FAMILIES:
        assert f.latent_bug in LATENT_BUGS and f.rule and f.summary
        assert f.where in ("wire", "reference") and f.misreadings and callable(f.seen_on)


def test_private_uses_the_installed_module_and_public_never_does(env: EventReconEnv) -> None:
    assert splits.heldout_module() == splits.HELDOUT_MODULE
    record = env.record(env.tasks("private", 1)[0])
    assert record.family_module == splits.HELDOUT_MODULE
    assert set(splits.families_of(record)) == set(splits.families_for(None)) | NAMES
    assert "3 from datagauntlet_heldout.event_recon" in splits.heldout_status()
    public = env.record(env.tasks("public", 1)[0])
    assert set(splits.families_of(public)) == set(splits.families_for(None))


def test_without_the_distribution_private_draws_the_public_twelve_and_says_so(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import sys

    for name in [m for m in sys.modules if m.split(".")[0] == "datagauntlet_heldout"]:
        monkeypatch.setitem(sys.modules, name, None)  # as if it were not installed
    monkeypatch.setenv("DATAGAUNTLET_SECRET", SECRET)
    splits.heldout_module.cache_clear()
    try:
        assert splits.heldout_module() is None
        record = splits.split_tasks("private")[0]
        assert record.family_module is None
        assert set(splits.families_of(record)) == set(splits.families_for(None))
        assert "none installed" in splits.heldout_status()
    finally:
        splits.heldout_module.cache_clear()


def test_each_is_planted_published_and_cross_checked(env: EventReconEnv, drawn) -> None:
    for family, task in drawn.items():
        world = env.world(task)
        contract = world.files["INTEGRATION.md"].decode()
        summary = next(f.summary for f in heldout.FAMILIES if f.name == family)
        assert f"`{family}`" in contract and summary in contract
        assert reconcile_files(world.files) == world.correct
        named = {p for f, p in world.pairs if f == family}
        assert named and named <= set(world.broken_partners)


def test_each_is_exactly_its_latent_bug() -> None:
    """Alone on a clean world, each moves a balance, and the same world built without the bug
    it names comes out correct."""
    families = dict(splits.families_for(splits.HELDOUT_MODULE))
    checked: set[str] = set()
    for seed in range(80):
        clean = base_draft(seed, 4)
        for inj in draw(clean, Keyed(f"heldout-bug/{seed}"), families) or []:
            if inj.family not in NAMES:
                continue
            built = run(apply(clean, [inj], families))
            if built.shipped == built.correct:
                continue
            bug = activated_bug(families[inj.family], inj)
            entries, _ = build(built.draft, built.envelopes, frozenset({bug}))
            repaired = ledger_projection(list(built.draft.partners), entries + built.draft.manual)
            assert repaired == built.correct, (inj.family, bug, seed)
            checked.add(inj.family)
        if checked == NAMES:
            return
    pytest.fail(f"never checked {sorted(NAMES - checked)}")


def test_the_reference_solves_them_and_null_and_probes_do_not(env: EventReconEnv, drawn) -> None:
    policies = env.policies()
    for family, task in drawn.items():
        score, findings = _play(env, task, policies["reference"])
        assert score.reward == 1.0, (family, task.id, score.metrics["failure_code"])
        assert family in {f["family"] for f in findings}
        assert _play(env, task, policies["null"])[0].reward == 0.0
        for name in SINGLE_AXIS:
            reward = _play(env, task, policies[name])[0].reward
            assert reward <= PROBE_CEILING, (name, task.id, reward)


def test_the_reference_tuned_on_public_never_names_one(env: EventReconEnv, drawn) -> None:
    """The reference without the module's steps repairs what the contract says (the families
    break no rule it does not know) but cannot tell what happened: it names no held-out pair,
    so no task with a held-out defect is solved."""
    for family, task in drawn.items():
        score, findings = _play(env, task, public_reference)
        assert not NAMES & {f["family"] for f in findings}, (family, findings)
        assert score.components["defect_identification"]["value"] < 1.0
        assert score.reward < 1.0, (family, task.id)


def test_a_reference_that_sees_nothing_reports_a_family_it_knows(env: EventReconEnv) -> None:
    """On a task whose only defect is held-out the public reference sees nothing; the one
    finding the report must hold then names a public family, not the first one offered
    (a held-out name, alphabetically), which would be a guess passed off as a finding."""
    task = next(
        t
        for t in env.tasks("private")[FIRST_T3:]
        if {family for family, _ in env.episode_truth(t).manifest} <= NAMES
    )
    _, findings = _play(env, task, public_reference)
    assert [f["event_id"] for f in findings] == ["none"]
    assert findings[0]["family"] in splits.families_for(None), findings


def test_explain_says_which_families_private_draws(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from datagauntlet.cli.main import main

    monkeypatch.setenv("DATAGAUNTLET_SECRET", SECRET)
    assert main(["event-recon", "explain", "--split", "private", "--task", "0"]) == 0
    assert "held-out families: 3 from datagauntlet_heldout.event_recon" in capsys.readouterr().out
    assert main(["event-recon", "explain", "--task", "0"]) == 0
    assert "held-out families" not in capsys.readouterr().out

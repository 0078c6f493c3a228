"""`datagauntlet event-recon materialize|explain`: the workspace as the agent sees it, and the
answer key for people; bad input is a one-line error with exit code 2, never a traceback."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from world_helpers import sample_world

from datagauntlet.cli.main import main
from datagauntlet.envs.event_recon.splits import public_tasks
from datagauntlet.envs.event_recon.world.records import FILES, World


def cli(argv: list[str]) -> int:
    """`datagauntlet event-recon ARGV` through the real entry point (the registration's hook)."""
    return main(["event-recon", *argv])


def test_materialize_writes_exactly_the_agents_four_files(tmp_path: Path, capsys) -> None:
    out = tmp_path / "ws"
    assert cli(["materialize", "--task", "17", "--tier", "3", "--out", str(out), "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert sorted(p.name for p in out.iterdir()) == sorted(FILES)
    record = [r for r in public_tasks() if r.tier == 3][17]
    assert record.index == 77 and info["seed"] == record.seed
    world = sample_world(77)
    assert all((out / n).read_bytes() == world.files[n] for n in FILES)


def test_materialize_refuses_to_overwrite_without_force(tmp_path: Path, capsys) -> None:
    (tmp_path / "db.sqlite").write_bytes(b"mine")
    assert cli(["materialize", "--task", "0", "--out", str(tmp_path)]) == 2
    assert "--force" in capsys.readouterr().err
    assert (tmp_path / "db.sqlite").read_bytes() == b"mine"  # nothing lost
    assert cli(["materialize", "--task", "0", "--out", str(tmp_path), "--force"]) == 0
    assert (tmp_path / "db.sqlite").read_bytes().startswith(b"SQLite format 3")


def test_explain_prints_the_manifest_and_wrong_and_correct_balances(capsys) -> None:
    world = sample_world(60)
    assert cli(["explain", "--task", "60", "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert [(d["family"], d["partner_id"]) for d in info["manifest"]] == [
        (d.family, d.partner_id) for d in world.manifest
    ]
    assert set(info["broken_partners"]) == set(world.broken_partners)
    for p, b in info["broken_partners"].items():
        assert b["shipped"] == world.shipped[p] != b["correct"] == world.correct[p]
    assert cli(["explain", "--task", "60"]) == 0
    text = capsys.readouterr().out
    assert world.manifest[0].family in text and "->" in text


@pytest.mark.parametrize(
    "argv",
    [
        ["explain", "--task", "120"],
        ["explain", "--task", "30", "--tier", "2"],
        ["explain", "--seed", "5"],
        ["explain", "--task", "0", "--split", "nope"],
        ["materialize", "--task", "0", "--out", "/proc/no-such-dir/x"],
    ],
)
def test_bad_input_is_one_line_and_exit_2(argv: list[str], capsys) -> None:
    assert cli(argv) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("datagauntlet event-recon: error: ")
    assert "\n" not in err and "Traceback" not in err


def test_no_subcommand_prints_help_and_exits_2(capsys) -> None:
    assert cli([]) == 2
    assert "materialize" in capsys.readouterr().err


def _rule_the_platform_misread(world: Any, evidence: tuple[str, ...]) -> set[str]:
    """Which of the family's two rules the grader's truth and the shipped rows differ by: the
    rule whose misreading, replayed on the defect's orders, books exactly what was shipped."""
    from datagauntlet.envs.event_recon.solver import ledger as L
    from datagauntlet.envs.event_recon.solver import reading as R
    from datagauntlet.envs.event_recon.solver.delivery import replay_lines
    from datagauntlet.envs.event_recon.solver.terms import read_terms
    from datagauntlet.envs.event_recon.solver.view import view_of_files

    view = view_of_files(world.files)
    solver_world = L.World(view, read_terms(view.contract))
    shipped = L.shipped_order_lines(solver_world)
    orders = {
        o for o, evs in solver_world.events.items() if {e.event_id for e in evs} & set(evidence)
    }
    moved = [o for o in orders if shipped.get(o, {}) != L.aggregate(L.order_lines(solver_world, o))]
    assert moved
    # A bigger world plants other defects on the same orders: their rules are misread there too.
    by_event = {e.event_id: o for o, evs in solver_world.events.items() for e in evs}
    sharing = {
        world.notes["rules"][x.family]["rule"]
        for x in world.manifest
        if x.family != "currency_or_rounding_drift"
        and orders & {by_event.get(e) for e in x.evidence}
    }
    base = R.CONTRACT
    for other in sorted(sharing & set(R.MISREADINGS)):
        base = replace(base, **R.MISREADINGS[other])  # type: ignore[arg-type]
    out = set()
    for rule in ("R12", "W2"):
        misread = replace(base, **R.MISREADINGS[rule])  # type: ignore[arg-type]
        if all(
            L.aggregate(replay_lines(solver_world, o, misread)) == shipped.get(o, {}) for o in moved
        ):
            out.add(rule)
    return out


def test_explain_prints_the_rule_each_mode_of_a_family_breaks(
    capsys, public_worlds: tuple[World, ...]
) -> None:
    """currency_or_rounding_drift breaks R12 (a foreign currency, bug B6) in one mode and W2 (a
    third decimal, bug B5) in the other: explain prints the planted mode's rule and bug, the
    rule is the one whose misreading reproduces the shipped rows (the grader's truth reads it
    as the contract says)."""
    seen: dict[str, int] = {}
    for record, world in zip(public_tasks(), public_worlds, strict=True):
        assert world.seed == record.seed
        for d in world.manifest:
            if d.family != "currency_or_rounding_drift":
                continue
            rules = _rule_the_platform_misread(world, d.evidence)
            assert rules, (record.index, d)
            if len(rules) > 1:  # a shared order's other misreading hides which one it was
                continue
            rule = rules.pop()
            if rule in seen:
                continue
            assert cli(["explain", "--task", str(record.index), "--json"]) == 0
            info = json.loads(capsys.readouterr().out)
            entry = next(e for e in info["manifest"] if e["family"] == d.family)
            assert entry["rule"] == rule, (record.index, entry)
            assert entry["latent_bug"] == {"R12": "B6", "W2": "B5"}[rule]
            assert cli(["explain", "--task", str(record.index)]) == 0
            line = next(x for x in capsys.readouterr().out.splitlines() if d.family in x)
            assert f"{rule}/{entry['latent_bug']}" in line
            seen[rule] = record.index
        if len(seen) == 2:
            return
    pytest.fail(f"the public split lacks a mode of currency_or_rounding_drift: {seen}")

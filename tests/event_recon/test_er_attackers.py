"""The workspace-only attacker never opens the contract, computes no commission, and stays
under its lines. Full-split figures are gate rows (`make gates`); these play a sample."""

from __future__ import annotations

import ast
import inspect
import os
import re
from pathlib import Path
from typing import Any

import pytest

from datagauntlet.envs.event_recon.attacks import anomalies, attackers, repairs, scaling, stream
from datagauntlet.envs.event_recon.env import EventReconEnv

DOC = Path(__file__).resolve().parents[2] / "docs" / "envs" / "event-recon.md"


@pytest.fixture(scope="module")
def env() -> EventReconEnv:
    return EventReconEnv()


class Recorder:
    def __init__(self, ep: Any) -> None:
        self._ep = ep
        self.calls: list[tuple[str, dict[str, Any]]] = []
        self.tool_specs = ep.tool_specs

    def call(self, name: str, args: dict[str, Any] | None = None) -> dict[str, Any]:
        self.calls.append((name, dict(args or {})))
        return self._ep.call(name, args)


def play(env: EventReconEnv, task: Any, policy: Any) -> tuple[Recorder, Any]:
    ep = env.episode(task)
    try:
        rec = Recorder(ep)
        policy(rec)
        return rec, ep.score()
    finally:
        ep.close()


def sample(env: EventReconEnv) -> list[Any]:
    tasks = env.tasks("public")
    return [tasks[i] for i in (0, 45, 75, 105)]


def test_the_attack_never_opens_the_contract(env) -> None:
    for task in sample(env)[:2]:
        rec, _ = play(env, task, attackers.strongest)
        for name, args in rec.calls:
            text = " ".join(str(v) for v in args.values())
            assert "INTEGRATION" not in text, (name, args)


# The attack's own steps (scaling.py, which reads the schedule's rates, is outside it).
ATTACK_MODULES = (attackers, anomalies, repairs, stream)


@pytest.mark.parametrize("module", ATTACK_MODULES, ids=lambda m: m.__name__.rsplit(".", 1)[-1])
def test_the_attack_knows_no_rule_and_computes_no_commission(module: Any) -> None:
    """Nothing it imports knows the contract, and it never touches a rate or a basis."""
    tree = ast.parse(inspect.getsource(module))
    imported = {
        node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and node.module
    }
    knows = {"ledger", "terms", "diagnose", "accounting", "truth", "reconciler", "contract"}
    assert not {m for m in imported if m.rsplit(".", 1)[-1] in knows}
    constants = {node.value for node in ast.walk(tree) if isinstance(node, ast.Constant)}
    for column in ("rate_bps", "basis", "effective_from", "INTEGRATION.md"):
        assert column not in constants, column


def test_the_attack_is_only_its_listed_modules() -> None:
    """Every attack module `attackers` reaches is scanned above, so a step moved into a new
    module cannot slip past the scan."""
    scanned = {m.__name__ for m in ATTACK_MODULES} | {scaling.__name__}
    prefix = "datagauntlet.envs.event_recon.attacks."
    for module in ATTACK_MODULES:
        tree = ast.parse(inspect.getsource(module))
        used = {
            node.module
            for node in ast.walk(tree)
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith(prefix)
        }
        assert used <= scanned, (module.__name__, used - scanned)


def test_the_attack_solves_no_sampled_task_and_its_repairs_are_live(env) -> None:
    for task in sample(env):
        _, score = play(env, task, attackers.strongest)
        assert score.reward < 1.0, task.id
        assert score.metrics["validity"] == 1, task.id
    # Invariant 7 leaves a few partners the repairs can finish; find one, or the bound would
    # be measuring an attack that does nothing.
    for task in env.tasks("public")[90:110]:
        _, score = play(env, task, attackers.strongest)
        if score.metrics["partners_repaired"]:
            return
    pytest.fail("the attack repaired no partner on 20 tier-4 tasks")


def test_the_attack_scripts_are_standard_library_only(env) -> None:
    rec, _ = play(env, sample(env)[2], attackers.scaled)
    script = next(a["content"] for n, a in rec.calls if n == "write_file")
    tree = ast.parse(script)
    names = {a.name for node in ast.walk(tree) if isinstance(node, ast.Import) for a in node.names}
    assert names == {"sqlite3"}


@pytest.mark.skipif(os.environ.get("DATAGAUNTLET_GATES") != "1", reason="full sweep: make gates")
def test_the_published_attack_table_is_the_measured_one() -> None:
    from datagauntlet.envs.event_recon.attacks.sweep import attack_table, markdown

    text = DOC.read_text()
    m = re.search(r"<!-- attack:start -->\n(.*?)\n<!-- attack:end -->", text, re.S)
    assert m, "docs/envs/event-recon.md has no attack table"
    assert markdown(attack_table(workers=2)) == m.group(1).strip()


@pytest.mark.parametrize("policy", sorted(attackers.policies()))
def test_the_published_attack_table_keeps_the_lines(policy: str) -> None:
    """Each row the gates hold (every shipped workspace-only policy) solves nothing and stays
    under both fitted lines."""
    from datagauntlet.envs.event_recon.gates.gates import ATTACKER_LEDGER_MEAN, ATTACKER_LEDGER_TIER

    text = DOC.read_text()
    row = next(line for line in text.splitlines() if f"(`{policy}`)" in line)
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells[1].startswith("0/")
    assert float(cells[3]) <= ATTACKER_LEDGER_MEAN
    assert all(float(c) <= ATTACKER_LEDGER_TIER for c in cells[4:])

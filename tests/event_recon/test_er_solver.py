"""The reference solver sees only the workspace and solves every task it is given.

Full sweeps (every public task) run in `make gates`; these tests play one task per tier.
"""

from __future__ import annotations

import ast
from typing import Any

import pytest

from datagauntlet.core.replay import next_tool_call
from datagauntlet.envs.event_recon.env import EventReconEnv
from datagauntlet.envs.event_recon.solver import books
from datagauntlet.envs.event_recon.solver import ledger as L
from datagauntlet.envs.event_recon.solver import reading as R
from datagauntlet.envs.event_recon.solver.delivery import replay_lines
from datagauntlet.envs.event_recon.solver.policy import reference
from datagauntlet.envs.event_recon.solver.terms import read_terms
from datagauntlet.envs.event_recon.solver.view import gather, view_of_files


@pytest.fixture(scope="module")
def env() -> EventReconEnv:
    return EventReconEnv()


def one_per_tier(env: EventReconEnv) -> list[Any]:
    seen: dict[int, Any] = {}
    for task in env.tasks("public"):
        seen.setdefault(env.tier_of(task), task)
    return [seen[t] for t in sorted(seen)]


class AgentSurface:
    """Only what an agent has: the prompts, the tool specs and `call`. Any other attribute
    (the world, the truth, the workspace path) raises, so a policy that reaches for hidden
    state fails here instead of quietly scoring."""

    def __init__(self, ep: Any) -> None:
        self._ep = ep
        self.calls: list[tuple[str, dict[str, Any]]] = []
        self.results: list[dict[str, Any]] = []

    @property
    def system_prompt(self) -> str:
        return self._ep.system_prompt

    @property
    def prompt(self) -> str:
        return self._ep.prompt

    @property
    def tool_specs(self) -> list[dict[str, Any]]:
        return self._ep.tool_specs

    def call(self, name: str, args: dict[str, Any] | None = None) -> dict[str, Any]:
        out = self._ep.call(name, args)
        self.calls.append((name, dict(args or {})))
        self.results.append(out)
        return out

    def __getattr__(self, name: str) -> Any:
        raise AttributeError(f"a policy asked for {name!r}, which an agent does not have")


def play(env: EventReconEnv, task: Any) -> tuple[AgentSurface, Any]:
    ep = env.episode(task)
    try:
        surface = AgentSurface(ep)
        reference(surface)  # type: ignore[arg-type]
        return surface, ep.score()
    finally:
        ep.close()


def test_reference_solves_one_task_per_tier_seeing_only_the_agent_surface(env) -> None:
    for task in one_per_tier(env):
        surface, score = play(env, task)
        assert score.reward == 1.0, (task.id, score.metrics["failure_code"])
        assert score.metrics["failure_code"] == "solved"
        assert {name for name, _ in surface.calls} <= {
            "read_file",
            "sql_query",
            "run_python",
            "write_file",
            "submit_report",
        }


def test_reference_replays_from_its_message_history(env) -> None:
    task = one_per_tier(env)[-1]
    surface, _ = play(env, task)
    ep = env.episode(task)
    try:
        for k in range(len(surface.calls) + 1):
            nxt = next_tool_call(
                reference, ep.system_prompt, ep.prompt, ep.tool_specs, surface.results[:k]
            )
            expected = surface.calls[k] if k < len(surface.calls) else None
            got = (nxt.name, nxt.arguments) if nxt is not None else None
            assert got == expected, k
    finally:
        ep.close()


def test_reference_reads_the_contract_and_ships_a_stdlib_script(env) -> None:
    surface, _ = play(env, one_per_tier(env)[2])
    read = [a["path"] for n, a in surface.calls if n == "read_file"]
    assert "INTEGRATION.md" in read
    script = next(a["content"] for n, a in surface.calls if n == "write_file")
    imported = {
        alias.name.split(".")[0]
        for node in ast.walk(ast.parse(script))
        if isinstance(node, ast.Import | ast.ImportFrom)
        for alias in (node.names if isinstance(node, ast.Import) else [ast.alias(node.module)])
    }
    assert imported == {"sqlite3"}
    assert "datagauntlet" not in script


def test_the_solvers_ledger_is_the_contracts_on_every_partner(env) -> None:
    """A third implementation of the rules, from what the tools returned, against the
    generator's forward truth."""
    for task in one_per_tier(env):
        ep = env.episode(task)
        try:
            view = gather(ep)
            world = L.World(view, read_terms(view.contract))
            ledger = books.compute(world)
            assert L.projection(world, ledger) == ep.oracle_truth().correct
            assert L.shipped_projection(world) == ep.oracle_truth().shipped
            # The replay engine with the contract's reading books what the contract books.
            for order in world.events:
                assert L.aggregate(replay_lines(world, order, R.CONTRACT)) == (
                    L.aggregate(L.order_lines(world, order))
                ), order
        finally:
            ep.close()


@pytest.fixture(scope="module")
def sample_worlds(env) -> list[L.World]:
    out = []
    for task in env.tasks("public")[::4]:  # every 4th: a currency-mode drift is among them
        view = view_of_files(env.world(task).files)
        out.append(L.World(view, read_terms(view.contract)))
    return out


@pytest.mark.parametrize("rule", R.CONTRACT_RULES)
def test_each_misread_rule_changes_what_is_owed_somewhere(sample_worlds, rule: str) -> None:
    """Every switch of `Reading` is live: reading one rule wrongly moves some partner on some
    sampled task (otherwise the graded policies' curve would be measuring nothing)."""
    # A retry repeats its event's (order, seq), so R2 read right already absorbs R1 read
    # wrong: R1's misreading is live once R2 is misread too.
    base = frozenset(R.CONTRACT_RULES) - ({"R2"} if rule == "R1" else set())
    misread = R.with_rules(base - {rule})
    assert misread != R.with_rules(base)
    for world in sample_worlds:
        right = L.projection(world, books.compute(world, R.with_rules(base)))
        if right != L.projection(world, books.compute(world, misread)):
            return
    pytest.fail(f"misreading {rule} changed nothing on the sampled tasks")


def test_reference_names_a_module_family_only_through_its_reference_step(env) -> None:
    """A family this package has never seen (the test module's `backfill_reemission`) is
    recognised through the reference step its module brings (its misreading and its mark on
    the order), and told apart from the built-in family it refines. Without that step the
    reference does not guess it from its contract line: it repairs the ledger and names the
    built-in lookalike, so the task is not solved."""
    import sys
    from pathlib import Path

    from datagauntlet.core.episode import Task
    from datagauntlet.envs.event_recon.env import truth_of
    from datagauntlet.envs.event_recon.episode import EventReconEpisode
    from datagauntlet.envs.event_recon.solver.policy import reference_with
    from datagauntlet.envs.event_recon.world.families import builtin_families
    from datagauntlet.envs.event_recon.world.generator import build_task

    sys.path.insert(0, str(Path(__file__).parent))
    import family_fixture

    steps = {f.name: f for f in family_fixture.FAMILIES}
    families = {**builtin_families(), **steps}
    for i in range(40):
        seed, tier = 5000 + 13 * i, 2 + i % 3
        world = build_task(seed, tier, families)
        if any(d.family == "backfill_reemission" for d in world.manifest):
            break
    else:
        pytest.fail("no sampled world drew the module family")
    named = {}
    for name, policy in (("with", reference_with(steps)), ("without", reference)):
        ep = EventReconEpisode(env, Task("module", seed, "holdout", i), world, truth_of)
        try:
            surface = AgentSurface(ep)
            policy(surface)  # type: ignore[arg-type]
            score = ep.score()
        finally:
            ep.close()
        findings = next(a["findings"] for n, a in surface.calls if n == "submit_report")
        named[name] = ({f["family"] for f in findings}, score)
    assert named["with"][1].reward == 1.0, named["with"][1].metrics["failure_code"]
    assert "backfill_reemission" in named["with"][0]
    assert "backfill_reemission" not in named["without"][0]
    assert named["without"][1].components["ledger_correctness"]["value"] == 1.0
    assert named["without"][1].reward < 1.0


def test_graded_policies_bracket_the_reference(env) -> None:
    """Knowing all 14 rules is the reference, call for call; knowing none repairs nothing."""
    from datagauntlet.envs.event_recon.solver.policy import graded

    task = one_per_tier(env)[1]
    surface, _ = play(env, task)
    ep = env.episode(task)
    try:
        full = AgentSurface(ep)
        graded(14)(full)  # type: ignore[arg-type]
    finally:
        ep.close()
    assert full.calls == surface.calls
    ep = env.episode(task)
    try:
        graded(0)(AgentSurface(ep))  # type: ignore[arg-type]
        score = ep.score()
    finally:
        ep.close()
    assert score.components["ledger_correctness"]["value"] == 0.0
    with pytest.raises(ValueError):
        graded(15)


@pytest.mark.parametrize(
    "limits",
    [{"sql_row_limit": 20, "read_bytes_limit": 5000}, {"sql_response_bytes": 3000}],
)
def test_reference_holds_under_tight_tool_limits(env, limits: dict[str, int]) -> None:
    """Short pages are followed; a response cut by its byte bound falls back to a dump."""
    tight = EventReconEnv.from_kwargs(**limits)
    task = tight.tasks("public")[100]
    surface, score = play(tight, task)
    assert score.reward == 1.0
    used = {name for name, _ in surface.calls}
    assert ("run_python" in used) == ("sql_response_bytes" in limits)

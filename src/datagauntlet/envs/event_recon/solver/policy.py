"""The reference policy and the graded-strength policies: they see only the workspace.

Each plays like an agent, through the episode's tools and nothing else: it reads the four
files (`view.gather`), reads the contract's parameters and rules as written (`terms`),
computes the ledger from the raw deliveries with its own code (`ledger`), classifies each
moved order by the misreading that reproduces it (`diagnose`), writes a literal-SQL
remediation script (`script`) and submits. Because every fact comes from a tool result, each
replays exactly from its message history (the scripted model plays them that way).

A graded policy knows only some of the rules R1-R14 (both wire-typing rules always): where it
does not know a rule it reads it the plausible wrong way (`reading.with_rules`), so what it
believes is owed, which orders it thinks moved and how it repairs them follow from that.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable

from datagauntlet.core.env import Policy
from datagauntlet.core.episode import Episode
from datagauntlet.core.seeding import Keyed
from datagauntlet.envs.event_recon.solver.books import compute
from datagauntlet.envs.event_recon.solver.diagnose import NO_STEPS, Steps, diagnose, hypotheses
from datagauntlet.envs.event_recon.solver.ledger import World
from datagauntlet.envs.event_recon.solver.reading import CONTRACT, with_rules
from datagauntlet.envs.event_recon.solver.script import Fix, FixRefused, plan_fix, render_script
from datagauntlet.envs.event_recon.solver.terms import read_terms
from datagauntlet.envs.event_recon.solver.view import View, gather, ok

SCRIPT_PATH = "remediation.py"
ACCOUNTING_RULES = tuple(f"R{i}" for i in range(1, 15))
WIRE_RULES = ("W1", "W2")


def families_offered(ep: Episode) -> tuple[str, ...]:
    """The families the report may name (the submit tool's enum)."""
    for spec in ep.tool_specs:
        fn = spec.get("function", spec)
        if fn.get("name") == "submit_report":
            item = fn["parameters"]["properties"]["findings"]["items"]
            return tuple(item["properties"]["family"]["enum"])
    return ()


def play(
    ep: Episode,
    knows: Callable[[View], frozenset[str]] | None = None,
    steps: Steps = NO_STEPS,
) -> None:
    """Gather, read, compute, classify, repair, submit. `knows(view)` names the rules the
    policy knows (None: all of them, the reference); `steps` are the reference steps of the
    families a family module brings (by name), the only way it knows one of those."""
    fix, findings, recognised = prepare(ep, knows, steps)
    ok(ep, "write_file", {"path": SCRIPT_PATH, "content": render_script(fix)})
    if not findings:  # the gate wants one finding; a policy that saw nothing still reports,
        # naming a family it has steps for (never a held-out one it cannot know)
        findings = [{"family": recognised[0], "partner_id": "none", "event_id": "none"}]
    ok(ep, "submit_report", {"findings": findings, "script_path": SCRIPT_PATH})


def prepare(
    ep: Episode,
    knows: Callable[[View], frozenset[str]] | None = None,
    steps: Steps = NO_STEPS,
) -> tuple[Fix, list[dict[str, str]], tuple[str, ...]]:
    """Everything `play` submits, without submitting: the fix, the findings and the offered
    families it has steps for (all offered ones if none)."""
    view = gather(ep)
    terms = read_terms(view.contract)
    known = None if knows is None else knows(view) | frozenset(WIRE_RULES)
    reading = CONTRACT if known is None else with_rules(known)
    world = World(view, terms)
    ledger = compute(world, reading)
    offered = families_offered(ep) or terms.families
    # A policy can only recognise a family whose rule it knows.
    families = tuple(
        f
        for f in offered
        if hypotheses(world, f, steps) and (known is None or _rules_of(world, f) & known)
    )
    diag = diagnose(world, ledger, families, reading, steps)
    columns = view.tables["ledger_entries"].columns
    try:
        fix = plan_fix(world, ledger, columns, diag.moved, diag.family_of)
    except FixRefused:
        if known is None:
            raise
        fix = plan_fix(world, ledger, columns, diag.moved, diag.family_of, check=False)
    recognisable = tuple(f for f in offered if hypotheses(world, f, steps))
    return fix, [f.as_dict() for f in diag.findings], recognisable or offered


FAMILY_RULE = {
    "duplicate_delivery": "R2",
    "out_of_order_delivery": "R3",
    "missing_field_coercion": "W1",
    "schema_drift": "W2",
    "currency_or_rounding_drift": "R12",
    "partial_backfill": "R4",
    "identity_fragmentation": "R6",
    "tier_misconfiguration": "R7",
    "gross_net_divergence": "R8",
    "timezone_boundary": "R9",
    "retroactive_program_change": "R7",
    "qualification_bar_mismatch": "R10",
}


def _rules_of(world: World, family: str) -> set[str]:
    """The rules a family breaks: the solver's own table, else its contract line's."""
    if family in FAMILY_RULE:
        return {FAMILY_RULE[family]}
    return set(re.findall(r"\b([RW]\d+)\b", world.terms.family_lines.get(family, "")))


def reference(ep: Episode) -> None:
    """Reads the contract, recomputes the ledger, classifies, repairs, submits. It knows the
    public families only: this is the policy tuned on the public split."""
    play(ep)


def reference_with(steps: Steps) -> Policy:
    """The reference, also knowing the families whose reference steps `steps` holds (a family
    module's: the env binds its own, so a held-out split's reference names them)."""
    if not steps:
        return reference

    def policy(ep: Episode) -> None:
        play(ep, steps=steps)

    policy.__name__ = policy.__qualname__ = "reference"
    policy.__doc__ = reference.__doc__
    return policy


def rules_known(k: int, view: View) -> frozenset[str]:
    """k of R1-R14, drawn per task (keyed by the task's roster, which the contract's wording
    does not move), so a curve over many tasks averages over which rules were skipped."""
    roster = ",".join(sorted(str(p["partner_id"]) for p in view.table("partners")))
    digest = hashlib.sha256(roster.encode()).hexdigest()[:16]
    return frozenset(Keyed(f"event-recon/graded/{k}/{digest}").sample("rules", ACCOUNTING_RULES, k))


def graded(k: int) -> Policy:
    """A policy that knows only k of the 14 accounting rules (and both wire-typing rules)."""
    if not 0 <= k <= len(ACCOUNTING_RULES):
        raise ValueError(f"k must be 0-{len(ACCOUNTING_RULES)}, not {k}")

    def policy(ep: Episode) -> None:
        play(ep, lambda view: rules_known(k, view))

    policy.__name__ = policy.__qualname__ = f"graded_k{k:02d}"
    policy.__doc__ = f"Knows {k} of the 14 accounting rules (drawn per task) and W1, W2."
    return policy


GRADED_KS = (0, 2, 4, 6, 8, 10, 12, 14)


def policies(steps: Steps = NO_STEPS) -> dict[str, Policy]:
    """The env's registered policies from the solver (check_env and calibration play them)."""
    return {"reference": reference_with(steps)}


def graded_policies(ks: tuple[int, ...] = GRADED_KS) -> dict[str, Policy]:
    """The graded-strength policies, for the difficulty curve (gates and benchmarks)."""
    return {f"graded-k{k:02d}": graded(k) for k in ks}

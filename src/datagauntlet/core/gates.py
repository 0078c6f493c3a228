"""Gates: the checks an env must pass before its rewards are trusted (`datagauntlet gates`).

Each gate is a named figure with a bound. The shared gates, for every env:

- `reference-min`: the reference policy's lowest reward over the tasks (>= 1.0);
- `null`: the null policy's highest reward (== 0);
- `probe:<name>`: each probe's mean reward, under the ceiling declared next to it (`@ceiling`),
  judged over the split's whole default sample (over fewer tasks it is shown, not judged);
- `floor-gap`: reference minimum minus the best probe mean (>= FLOOR_GAP);
- `determinism`: episode digests from two processes with different PYTHONHASHSEED (identical);
- `rescoring`: distinct rewards over 100 re-scorings of one trajectory per policy (== 1);
- `leak-scan`: truth-derived text in anything an agent sees before the end (== 0 findings);
- `version-stamp`: scores carry a version stamp (present).

An env adds rows of its own by returning `Gate`s from `Environment.extra_gates()`; each gets
the same `GateRun` (tasks, cached play results) and returns one or more `GateResult`s.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from datagauntlet.core.action_log import canonical_json
from datagauntlet.core.config import EnvConfig
from datagauntlet.core.env import Environment, Policy, policy_sees_truth
from datagauntlet.core.episode import Episode, Task
from datagauntlet.core.gate_types import Gate, GateResult
from datagauntlet.core.runner import EpisodeResult, run

__all__ = ["Gate", "GateReport", "GateResult", "GateRun", "ceiling", "null", "run_gates"]

FLOOR_GAP = 0.05
RESCORINGS = 100
DIGEST_TASKS = 5
HASH_SEEDS = ("1", "2")


# --- declarations next to the policies -------------------------------------------------------
Ceiling = float | Callable[[EnvConfig], float]


def ceiling(value: Ceiling, gap: bool = True) -> Callable[[Policy], Policy]:
    """Declare a probe's ceiling: its mean reward must stay at or below `value` (a number, or
    a function of the env's config when the bound differs by config). `gap=False` marks a
    realistic mistake rather than a cheat, left out of the floor gap."""

    def mark(policy: Policy) -> Policy:
        policy.ceiling = value  # type: ignore[attr-defined]
        policy.in_floor_gap = gap  # type: ignore[attr-defined]
        return policy

    return mark


def null(policy: Policy) -> Policy:
    """Mark the policy that does nothing useful: it must score 0 on every task."""
    policy.is_null = True  # type: ignore[attr-defined]
    return policy


def probe_ceiling(policy: Policy, config: EnvConfig) -> float | None:
    value = getattr(policy, "ceiling", None)
    if value is None:
        return None
    return float(value(config) if callable(value) else value)


# --- results ---------------------------------------------------------------------------------
@dataclass(frozen=True)
class GateReport:
    env: str
    split: str
    tasks: int
    gates: list[GateResult]
    canary: str | None = None  # the env's contamination canary, on its exported records

    @property
    def ok(self) -> bool:
        return all(g.ok for g in self.gates)

    def as_dict(self) -> dict[str, Any]:
        out = {"env": self.env, "ok": self.ok, "gates": [g.as_dict() for g in self.gates]}
        if self.canary is not None:
            out["canary"] = self.canary
        return out


@dataclass
class GateRun:
    """One env's gate run: its tasks and every policy's results, played once and shared."""

    env: Environment
    split: str
    n: int | None = None
    workers: int = 1
    _results: dict[str, list[EpisodeResult]] = field(default_factory=dict)

    @cached_property
    def tasks(self) -> list[Task]:
        return self.env.tasks(self.split, self.n)

    @cached_property
    def policies(self) -> dict[str, Policy]:
        return self.env.policies()

    def results(self, policy: str) -> list[EpisodeResult]:
        if policy not in self._results:
            self._results[policy] = run(self.env, [policy], self.tasks, self.workers)
        return self._results[policy]

    def rewards(self, policy: str) -> list[float]:
        return [r.reward for r in self.results(policy)]

    @property
    def probes(self) -> dict[str, float]:
        return {
            name: c
            for name, p in self.policies.items()
            if (c := probe_ceiling(p, self.env.config)) is not None
        }


# --- the core functions other code calls ------------------------------------------------------
def reference_passes(env: Environment, task: Task) -> bool:
    """Play the reference policy on a fresh episode of `task`: True if it scores 1.0."""
    ep = env.episode(task)
    try:
        env.policies()[env.reference](ep)
        return ep.score().reward >= 1.0
    finally:
        _close(ep)


def _close(ep: Episode) -> None:
    close = getattr(ep, "close", None)
    if callable(close):
        close()


class _Tape:
    """Wraps an episode: records what the agent sees (prompts, specs, each result) in order."""

    def __init__(self, ep: Episode) -> None:
        self._ep = ep
        self.seen: list[str] = [ep.system_prompt, ep.prompt, canonical_json(ep.tool_specs)]
        self.before_end: list[str] = list(self.seen)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._ep, name)

    def call(self, name: Any, args: Any = None) -> dict[str, Any]:
        result = self._ep.call(name, args)
        text = canonical_json(result)
        self.seen.append(canonical_json([name, args]) + text)
        if not self._ep.done:  # the call that ends the episode may report on the submission
            self.before_end.append(text)
        return result


def play_taped(env: Environment, policy: str, task: Task) -> tuple[_Tape, Any]:
    ep = env.episode(task)
    tape = _Tape(ep)
    try:
        env.policies()[policy](tape)  # type: ignore[arg-type]
        return tape, ep.score()
    finally:
        _close(ep)


def episode_digest(env: Environment, policy: str, task: Task) -> str:
    """A digest of everything an agent saw and the score it got: equal in any process."""
    tape, score = play_taped(env, policy, task)
    h = hashlib.sha256()
    for part in [*tape.seen, canonical_json(score.as_dict())]:
        h.update(part.encode("utf-8", "surrogatepass") + b"\x00")
    return h.hexdigest()


def digests(env: Environment, split: str, n: int) -> dict[str, str]:
    out = {}
    names = [p for p, fn in env.policies().items() if not policy_sees_truth(fn)]
    for task in env.tasks(split, n):
        for policy in names:
            out[f"{task.id}:{policy}"] = episode_digest(env, policy, task)
    return out


def leak_findings(env: Environment, policy: str, task: Task) -> list[str]:
    """Truth-derived text the agent saw before the end of one episode (score fields included)."""
    ep = env.episode(task)
    try:
        needles = leak_needles(env, ep)
    finally:
        _close(ep)
    tape, _score = play_taped(env, policy, task)
    found = []
    for text in tape.before_end:
        found += [n for n in needles if n and n in text]
    return sorted(set(found))


def leak_needles(env: Environment, ep: Episode[Any]) -> list[str]:
    """The truth-derived text of one episode, and the score's field names that its public text
    (prompts, tool specs) does not already use: a tool argument may share a metric's name."""
    public = ep.system_prompt + ep.prompt + canonical_json(ep.tool_specs)
    keys = {k for k in score_keys(env) if k not in public}
    return sorted(set(env.truth_values(ep)) | keys)


def score_keys(env: Environment) -> set[str]:
    """A score's own field names as JSON keys: seeing one before the end means a score leaked."""
    names = [*env.weights, *env.metric_names, "reward"]
    return {json.dumps(n) + ":" for n in names}


# --- the shared gates -------------------------------------------------------------------------
def _reference_min(g: GateRun) -> GateResult:
    low = min(g.rewards(g.env.reference), default=0.0)
    return GateResult(f"reference-min ({g.env.reference})", low, ">= 1.0", low >= 1.0)


def _null(g: GateRun) -> GateResult:
    names = [n for n, p in g.policies.items() if getattr(p, "is_null", False)]
    if not names:
        return GateResult("null", "undeclared", "== 0", False)
    high = max(max(g.rewards(n), default=0.0) for n in names)
    return GateResult(f"null ({', '.join(names)})", high, "== 0", high == 0.0)


def _mean(values: Sequence[float]) -> float:
    return round(sum(values) / len(values), 4) if values else 0.0


def _probes(g: GateRun) -> list[GateResult]:
    """Each probe's mean under its ceiling. A ceiling bounds the mean over the split's whole
    default sample (bad-batch-gate's 32 cases are balanced over its families), so a mean over
    fewer tasks (`-n`) is shown but not judged: its first 8 cases are not a balanced sample."""
    whole = len(g.tasks) if g.n is None else len(g.env.tasks(g.split))
    partial = len(g.tasks) < whole
    out = []
    for name, limit in g.probes.items():
        mean = _mean(g.rewards(name))
        if partial:
            bound = f"<= {limit:g} (not judged on {len(g.tasks)} of {whole} tasks)"
            out.append(GateResult(f"probe:{name}", mean, bound, True))
        else:
            out.append(GateResult(f"probe:{name}", mean, f"<= {limit:g}", mean <= limit))
    return out


def _floor_gap(g: GateRun) -> GateResult:
    in_gap = [n for n in g.probes if getattr(g.policies[n], "in_floor_gap", True)]
    if not in_gap:
        return GateResult("floor-gap", "no probes", f">= {FLOOR_GAP}", False)
    best = max(in_gap, key=lambda n: _mean(g.rewards(n)))
    gap = round(min(g.rewards(g.env.reference), default=0.0) - _mean(g.rewards(best)), 4)
    return GateResult(f"floor-gap (vs {best})", gap, f">= {FLOOR_GAP}", gap >= FLOOR_GAP)


def _determinism(g: GateRun) -> GateResult:
    n = min(DIGEST_TASKS, len(g.tasks))
    runs = [_digests_in_subprocess(g.env, g.split, n, seed) for seed in HASH_SEEDS]
    if any(isinstance(r, str) for r in runs):
        problem = next(r for r in runs if isinstance(r, str))
        return GateResult("determinism", problem, "identical", False)
    same = runs[0] == runs[1] and bool(runs[0])
    value = "identical" if same else "differ"
    return GateResult(f"determinism ({len(runs[0])} episodes)", value, "identical", same)


def _digests_in_subprocess(
    env: Environment, split: str, n: int, hash_seed: str
) -> dict[str, str] | str:
    payload = json.dumps({"env": env.id, "config": env.config.as_dict(), "split": split, "n": n})
    child_env = {**os.environ, "PYTHONHASHSEED": hash_seed}
    proc = subprocess.run(
        [sys.executable, "-m", "datagauntlet.core.gates", payload],
        capture_output=True,
        text=True,
        env=child_env,
        timeout=600,
    )
    if proc.returncode != 0:
        last = (proc.stderr.strip().splitlines() or ["no output"])[-1]
        return f"digest process failed: {last[:200]}"
    try:
        result: dict[str, str] = json.loads(proc.stdout)
    except ValueError:  # anything else on its stdout: the gate fails by name, not by traceback
        return f"digest process printed no digests: {proc.stdout.strip()[-200:]!r}"
    return result


def _rescoring(g: GateRun) -> GateResult:
    task = g.tasks[0]
    worst = 0
    for policy in g.policies.values():
        ep = g.env.episode(task)
        try:
            policy(ep)
            distinct = {canonical_json(ep.score().as_dict()) for _ in range(RESCORINGS)}
        finally:
            _close(ep)
        worst = max(worst, len(distinct))
    return GateResult(f"rescoring ({RESCORINGS}x per policy)", worst, "== 1", worst == 1)


def _leak_scan(g: GateRun) -> GateResult:
    findings: set[str] = set()
    names = [n for n, p in g.policies.items() if not policy_sees_truth(p)]
    for task in g.tasks[: max(1, min(len(g.tasks), 20))]:
        for name in names:
            findings.update(leak_findings(g.env, name, task))
    value: int | str = len(findings)
    if findings:
        value = f"{len(findings)}: {', '.join(sorted(findings)[:3])}"
    return GateResult("leak-scan", value, "== 0", not findings)


def version_stamp(score: Any) -> Any:
    """The version stamp a score carries (`Score.stamp`: package, env and generator versions
    and the task's content hash), or None."""
    stamp = getattr(score, "stamp", None)
    if stamp is None:
        stamp = score.as_dict().get("stamp")
    return stamp


def _version_stamp(g: GateRun) -> GateResult:
    ep = g.env.episode(g.tasks[0])
    try:
        g.policies[g.env.reference](ep)
        stamp = version_stamp(ep.score())
    finally:
        _close(ep)
    return GateResult("version-stamp", "present" if stamp else "absent", "present", bool(stamp))


SHARED_GATES = (
    Gate("reference-min", _reference_min),
    Gate("null", _null),
    Gate("probes", _probes),
    Gate("floor-gap", _floor_gap),
    Gate("determinism", _determinism),
    Gate("rescoring", _rescoring),
    Gate("leak-scan", _leak_scan),
    Gate("version-stamp", _version_stamp),
)


def run_gates(
    env: Environment,
    split: str = "eval",
    n: int | None = None,
    workers: int = 1,
    only: Iterable[str] | None = None,
) -> GateReport:
    """Every shared gate and the env's own, over `n` tasks of `split` (None: the default)."""
    g = GateRun(env, split, n, workers)
    wanted = set(only) if only is not None else None
    rows: list[GateResult] = []
    for gate in (*SHARED_GATES, *env.extra_gates()):
        if wanted is not None and gate.name not in wanted:
            continue
        out = gate.run(g)
        rows += [out] if isinstance(out, GateResult) else list(out)
    return GateReport(env.id, split, len(g.tasks), rows, env.canary)


def _main(payload: str) -> int:
    from datagauntlet.core.registry import make

    spec = json.loads(payload)
    env = make(spec["env"], **spec["config"])
    print(json.dumps(digests(env, spec["split"], spec["n"]), sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(_main(sys.argv[1]))

"""`check_env`: the conformance check every registered environment must pass.

In the style of Gymnasium's env checker, it is a list of named checks (`core/checks.py`), each
one promise of DESIGN.md: deterministic tasks and episodes, valid tool schemas with a handler
for every tool, bad input answered with an error and no change to the world, bounded refusals
in the log, close safe twice, results that share no state with the world, scores inside [0, 1]
with weights summing to 1 and a version stamp, no credit without a submission, a reference
policy at 1.0, and policies that see only what an agent sees.

Every check runs and is reported by name; by default the first failure is then raised.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from datagauntlet.core.check_context import ConformanceError, Context
from datagauntlet.core.checks import CHECKS
from datagauntlet.core.env import Environment

__all__ = ["CheckResult", "ConformanceError", "ConformanceReport", "check_env"]


@dataclass(frozen=True)
class CheckResult:
    name: str
    passed: bool
    message: str = ""
    seconds: float = 0.0


@dataclass(frozen=True)
class ConformanceReport:
    env: str
    results: tuple[CheckResult, ...]

    @property
    def passed(self) -> bool:
        return all(r.passed for r in self.results)

    def names(self) -> list[str]:
        return [r.name for r in self.results]

    def failures(self) -> list[CheckResult]:
        return [r for r in self.results if not r.passed]

    def as_dict(self) -> dict[str, Any]:
        return {
            "env": self.env,
            "passed": self.passed,
            "checks": [
                {"name": r.name, "passed": r.passed, "message": r.message} for r in self.results
            ],
        }

    def __str__(self) -> str:
        lines = [f"check_env {self.env}: {'passed' if self.passed else 'FAILED'}"]
        for r in self.results:
            mark = "ok  " if r.passed else "FAIL"
            lines.append(f"  {mark} {r.name}" + (f": {r.message}" if r.message else ""))
        return "\n".join(lines)


def check_env(
    env: Environment[Any], n_tasks: int = 3, replay: bool = True, raise_on_failure: bool = True
) -> ConformanceReport:
    """Run every named check on `env`; raise ConformanceError for the first failure unless
    `raise_on_failure` is False. The report lists every check by name."""
    tasks = env.tasks("eval", n_tasks)
    ctx = Context(env, tasks, replay, env.policies())
    results = []
    for name, check in CHECKS:
        start = time.perf_counter()
        try:
            check(ctx)
        except ConformanceError as exc:
            results.append(CheckResult(name, False, str(exc), time.perf_counter() - start))
        except Exception as exc:  # a check that crashes is a failed check, reported as such
            message = f"raised {type(exc).__name__}: {exc}"
            results.append(CheckResult(name, False, message, time.perf_counter() - start))
        else:
            results.append(CheckResult(name, True, "", time.perf_counter() - start))
    report = ConformanceReport(env.id, tuple(results))
    failed = report.failures()
    if failed and raise_on_failure:
        first = failed[0]
        others = f" (and {len(failed) - 1} more failed checks)" if len(failed) > 1 else ""
        raise ConformanceError(f"{env.id}: {first.name}: {first.message}{others}")
    return report

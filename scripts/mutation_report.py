"""Run `mutmut` and summarise it: the kill rate per file and overall, and every surviving mutant.

    python scripts/mutation_report.py run [--write FILE] [MUTANT ...]   run, then report
    python scripts/mutation_report.py [--json] [--write FILE]           report the last run
    python scripts/mutation_report.py survivors [--write FILE]          every survivor's diff

`run` times the mutmut run (wall clock, and CPU of every process it started, tests and
sandboxed children included) and notes the load average before and after, in
mutants/run-times.json (appended to mutants/runs.jsonl, so runs that together judged every
mutant add up), so a figure from a busy machine says so.

Mutants listed in docs/mutation/equivalent.txt (one name per line, a reason after `#`) are
equivalent: no input that reaches that code can tell them apart from the original, so they are
left out of the rate and shown apart. A mutant no test reached, or one not yet run, counts as
a survivor. docs/mutation/surviving.txt (same format) says why a survivor that is not
equivalent is left alive; it still counts against the rate, and the report shows the reason.
"""

from __future__ import annotations

import contextlib
import difflib
import json
import os
import re
import subprocess
import sys
from collections import Counter, defaultdict
from pathlib import Path

# the timed run beside this file, also when a test loads this file by its path
sys.path.insert(0, str(Path(__file__).resolve().parent))

from mutation_run import ISOLATION as ISOLATION  # re-exported: tests/test_mutation_setup.py
from mutation_run import LOAD_EVERY_S, ROOT, RUNS, TIMES, mutmut_executable, run
from mutation_run import isolated as isolated  # re-exported, as ISOLATION

EQUIVALENT = ROOT / "docs" / "mutation" / "equivalent.txt"
SURVIVING = ROOT / "docs" / "mutation" / "surviving.txt"  # survivors left alive, and why
CPU_LOG = ROOT / "mutants" / "cpu-by-mutant.jsonl"  # written by tests/conftest.py, a line a mutant
KILLED = {"killed", "timeout", "segfault"}


def load_results() -> dict[str, str]:
    out = subprocess.run(
        [mutmut_executable(), "results", "--all", "true"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    results = {}
    for line in out.splitlines():
        name, sep, status = line.strip().rpartition(": ")
        if sep:
            results[name] = status.strip()
    return results


def cpu_by_module(path: Path = CPU_LOG) -> dict[str, dict[str, float]]:
    """Per module: mutants whose tests ran to the end, and their CPU seconds (mean, sum)."""
    last: dict[str, float] = {}  # a mutant judged again: its latest run counts
    if path.is_file():
        for line in path.read_text().splitlines():
            with contextlib.suppress(ValueError, KeyError, TypeError):
                row = json.loads(line)
                last[row["mutant"]] = float(row["cpu_s"])
    spent: dict[str, list[float]] = defaultdict(list)
    for mutant, cpu in last.items():
        spent[module_of(mutant)].append(cpu)
    return {
        m: {"mutants": len(v), "mean_s": sum(v) / len(v), "sum_s": sum(v)}
        for m, v in sorted(spent.items())
    }


def load_equivalent(path: Path = EQUIVALENT) -> dict[str, str]:
    """`NAME  # reason` lines (blank lines and lines starting with `#` are skipped)."""
    if not path.is_file():
        return {}
    found = {}
    for line in path.read_text().splitlines():
        name, _, reason = line.partition("#")
        if name.strip():
            found[name.strip()] = reason.strip()
    return found


def module_of(name: str) -> str:
    """`datagauntlet.core.episode.xǁEpisodeǁcall__mutmut_3` -> `datagauntlet.core.episode`"""
    return name.split(".x", 1)[0]


def summarise(results: dict[str, str], equivalent: dict[str, str]) -> dict[str, object]:
    per_module: dict[str, Counter[str]] = defaultdict(Counter)
    survivors = []
    for name, status in sorted(results.items()):
        counts = per_module[module_of(name)]
        if name in equivalent:
            counts["equivalent"] += 1
            continue
        counts["total"] += 1
        if status in KILLED:
            counts["killed"] += 1
        else:
            counts["not run" if status == "not checked" else "survived"] += 1
            survivors.append((name, status))
    total = sum(c["total"] for c in per_module.values())
    killed = sum(c["killed"] for c in per_module.values())
    return {
        "kill_rate": killed / total if total else 1.0,
        "killed": killed,
        "total": total,
        "mutants": len(results),
        "equivalent": sum(c["equivalent"] for c in per_module.values()),
        "statuses": dict(sorted(Counter(results.values()).items())),
        "per_module": {m: dict(c) for m, c in sorted(per_module.items())},
        "survivors": survivors,
        "stale_equivalent": sorted(set(equivalent) - set(results)),
        "surviving": {n: r for n, r in load_equivalent(SURVIVING).items() if n in results},
        "times": json.loads(TIMES.read_text()) if TIMES.is_file() else None,
        "cpu_by_module": cpu_by_module(),
        "runs": [json.loads(x) for x in RUNS.read_text().splitlines()] if RUNS.is_file() else [],
    }


def render(summary: dict[str, object]) -> str:
    lines = _rate_lines(summary) + _cost_lines(summary) + _survivor_lines(summary)
    return "\n".join(lines)


def _rate_lines(summary: dict[str, object]) -> list[str]:
    """The kill rate per module and overall, and the count of each mutmut status."""
    head = ("killed", "surv", "not run", "equiv", "rate")
    lines = [f"{'module':<46}" + "".join(f" {h:>7}" for h in head)]
    per_module: dict[str, dict[str, int]] = summary["per_module"]  # type: ignore[assignment]
    for module, c in per_module.items():
        total, killed = c.get("total", 0), c.get("killed", 0)
        share = killed / total if total else 1.0
        row = (killed, c.get("survived", 0), c.get("not run", 0), c.get("equivalent", 0))
        lines.append(f"{module:<46}" + "".join(f" {n:>7}" for n in row) + f" {share:>7.1%}")
    every = [sum(c.get(k, 0) for c in per_module.values()) for k in ("survived", "not run")]
    row = (summary["killed"], *every, summary["equivalent"])
    lines.append(
        f"{'all':<46}" + "".join(f" {n:>7}" for n in row) + f" {summary['kill_rate']:>7.1%}"
    )
    lines.append(
        f"\nkill rate {summary['kill_rate']:.1%}: {summary['killed']} killed of "
        f"{summary['total']} non-equivalent mutants (timeouts and segfaults count as killed)"
    )
    if every[1]:
        judged = summary["total"] - every[1]  # type: ignore[operator]
        share = summary["killed"] / judged if judged else 1.0  # type: ignore[operator]
        lines.append(
            f"of the {judged} judged so far: {share:.1%} killed ({every[1]} not run yet count "
            "as survivors above)"
        )
    statuses = ", ".join(f"{n} {s}" for s, n in summary["statuses"].items())  # type: ignore[attr-defined]
    lines.append(f"\n{summary['mutants']} mutants: {statuses}")
    return lines


def _cost_lines(summary: dict[str, object]) -> list[str]:
    """What the last run cost (wall, CPU, load), CPU per judged mutant, and every run's total."""
    lines: list[str] = []
    times = summary["times"]
    if times:
        cores = times.get("cores", times["workers"])
        lines.append(
            f"last run: {times['wall_s']:.0f} s wall, {times['cpu_s']:.0f} s CPU "
            f"({times['cpu_s'] / cores:.0f} s wall on {cores} idle cores; "
            f"{times['workers']} workers), "
            f"nice {times['nice']}, load average {times['load_before'][0]:.2f} before and "
            f"{times['load_after'][0]:.2f} after"
            + (f" ({times['mutants_named']} named mutants)" if times["mutants_named"] else "")
        )
        if "load_sampled" in times:
            low, mean, high = times["load_sampled"]
            lines.append(
                f"load average sampled every {LOAD_EVERY_S:.0f} s during it: {low:.2f}-{high:.2f} "
                f"(mean {mean:.2f}); the machine was {times['machine_busy']:.0%} busy"
            )
    cpu: dict[str, dict[str, float]] = summary.get("cpu_by_module") or {}  # type: ignore[assignment]
    if cpu:
        lines.append(
            f"\n{'CPU per judged mutant (tests + sandboxed children)':<46}      n  mean s   sum s"
        )
        for module, c in cpu.items():
            lines.append(f"{module:<46} {c['mutants']:>6} {c['mean_s']:>7.2f} {c['sum_s']:>7.0f}")
        n = sum(c["mutants"] for c in cpu.values())
        total = sum(c["sum_s"] for c in cpu.values())
        lines.append(f"{'all':<46} {n:>6} {total / n:>7.2f} {total:>7.0f}")
    runs: list[dict[str, float]] = summary["runs"]  # type: ignore[assignment]
    if len(runs) > 1:
        wall = sum(r["wall_s"] for r in runs)
        cpu_s = sum(r["cpu_s"] for r in runs)
        low = min(r["load_before"][0] for r in runs)
        high = max(r["load_after"][0] for r in runs)
        cores = os.cpu_count() or 1
        lines.append(
            f"all {len(runs)} runs since mutants/ was made: {wall:.0f} s wall, {cpu_s:.0f} s CPU "
            f"({cpu_s / cores:.0f} s wall on {cores} idle cores), load average "
            f"{low:.2f}-{high:.2f}"
        )
    return lines


def _survivor_lines(summary: dict[str, object]) -> list[str]:
    """Mutants not run yet per module, every survivor with its reason, stale equivalents."""
    lines: list[str] = []
    survivors: list[tuple[str, str]] = summary["survivors"]  # type: ignore[assignment]
    judged = [(n, s) for n, s in survivors if s != "not checked"]
    unrun = Counter(module_of(n) for n, s in survivors if s == "not checked")
    if unrun:
        lines.append(f"\n{sum(unrun.values())} mutants not run yet (they count as survivors):")
        lines.extend(f"  {module}: {n}" for module, n in sorted(unrun.items()))
    if judged:
        why: dict[str, str] = summary.get("surviving", {})  # type: ignore[assignment]
        lines.append(f"\n{len(judged)} surviving mutants (see each with `mutmut show NAME`):")
        for name, status in judged:
            reason = why.get(name)
            lines.append(f"  {name}  [{status}]" + (f"  # {reason}" if reason else ""))
    elif not unrun:
        lines.append("\nno surviving mutants outside docs/mutation/equivalent.txt")
    stale = summary["stale_equivalent"]
    if stale:
        lines.append("\nlisted as equivalent but not in this run (stale entries):")
        lines.extend(f"  {name}" for name in stale)  # type: ignore[attr-defined]
    return lines


def changed_lines(name: str) -> list[str]:
    """The lines a mutant changes, read from mutmut's copy in mutants/ (`-` old, `+` new)."""
    module, _, function = name.partition(".x")
    path = ROOT / "mutants" / "src" / (module.replace(".", "/") + ".py")
    if not path.is_file():
        return []
    base = "x" + function.rsplit("__mutmut_", 1)[0]
    bodies: dict[str, list[str]] = {}
    current = None
    for line in path.read_text().splitlines():
        match = re.match(r"\s*def (x\S+?__mutmut_(?:orig|\d+))\(", line)
        if match:
            current = match.group(1)
            bodies[current] = []
        elif current is not None:
            if line and not line[0].isspace() and not line.startswith(")"):
                current = None
            else:
                bodies[current].append(line.strip())
    old, new = bodies.get(base + "__mutmut_orig", []), bodies.get("x" + function, [])
    diff = difflib.unified_diff(old, new, lineterm="", n=0)
    return [d for d in diff if d[:1] in "+-" and d[:3] not in ("---", "+++") and d[1:].strip()]


def survivors_markdown(summary: dict[str, object], equivalent: dict[str, str]) -> str:
    """Every surviving and every equivalent mutant with its change and its reason."""
    why: dict[str, str] = summary["surviving"]  # type: ignore[assignment]
    stale = set(summary["stale_equivalent"])  # type: ignore[call-overload]
    survivors: list[tuple[str, str]] = summary["survivors"]  # type: ignore[assignment]
    rows = [(n, s, why.get(n, "**unexplained**")) for n, s in survivors if s != "not checked"]
    rows += [(n, "equivalent", r) for n, r in equivalent.items() if n not in stale]
    unrun = sum(1 for _, s in survivors if s == "not checked")
    out = [
        "# Surviving and equivalent mutants",
        "",
        "Generated by `python scripts/mutation_report.py survivors --write "
        "docs/mutation/survivors.md` from the last run in `mutants/`. **survived** and **no "
        "tests** count against the kill rate (the reason is from surviving.txt); "
        "**equivalent** ones (equivalent.txt) are left out of it."
        + (f" {unrun} mutants were not run yet (not listed)." if unrun else ""),
    ]
    by_module: dict[str, list[tuple[str, str, str]]] = defaultdict(list)
    for row in rows:
        by_module[module_of(row[0])].append(row)
    for module in sorted(by_module):
        out += [
            "",
            f"## `{module}`",
            "",
            "| mutant | change | verdict | why |",
            "|---|---|---|---|",
        ]
        for name, status, reason in sorted(by_module[module]):
            change = " / ".join(changed_lines(name))[:160].replace("|", "\\|").replace("`", "'")
            short = name.split(".x", 1)[1] if ".x" in name else name
            out.append(f"| `x{short}` | `{change}` | {status} | {reason} |")
    return "\n".join(out) + "\n"


def main(argv: list[str]) -> int:
    args = list(argv)
    write = None
    if "--write" in args:
        i = args.index("--write")
        if i + 1 >= len(args):
            print("--write needs a file name", file=sys.stderr)
            return 2
        write = Path(args[i + 1])
        del args[i : i + 2]
    as_json = "--json" in args
    args = [a for a in args if a != "--json"]
    survivors_only = args[:1] == ["survivors"]
    if survivors_only:
        args = args[1:]
    if args and args[0] == "run":
        code = run(args[1:])
        if code != 0:
            return code
    elif args:
        print(f"unknown arguments: {' '.join(args)} (see --help)", file=sys.stderr)
        return 2
    if not (ROOT / "mutants").is_dir():
        print("no mutation results: run `make mutants` first", file=sys.stderr)
        return 2
    summary = summarise(load_results(), load_equivalent())
    if not summary["mutants"]:
        print("no mutation results: run `make mutants` first", file=sys.stderr)
        return 2
    if survivors_only:
        text = survivors_markdown(summary, load_equivalent())
        if write is not None:
            write.write_text(text)
        print(text)
        return 0
    text = render(summary)
    if write is not None:
        write.write_text("```\n" + text + "\n```\n")
    print(json.dumps(summary, indent=1) if as_json else text)
    return 0


if __name__ == "__main__":
    if "-h" in sys.argv or "--help" in sys.argv:
        print(__doc__)
        raise SystemExit(0)
    raise SystemExit(main(sys.argv[1:]))

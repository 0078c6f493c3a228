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
import resource
import shutil
import subprocess
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import TextIO

ROOT = Path(__file__).resolve().parents[1]
EQUIVALENT = ROOT / "docs" / "mutation" / "equivalent.txt"
SURVIVING = ROOT / "docs" / "mutation" / "surviving.txt"  # survivors left alive, and why
TIMES = ROOT / "mutants" / "run-times.json"
RUNS = ROOT / "mutants" / "runs.jsonl"  # every timed run since `mutants/` was made
LOG = ROOT / "mutants" / "mutmut-run.log"
CPU_LOG = ROOT / "mutants" / "cpu-by-mutant.jsonl"  # written by tests/conftest.py, a line a mutant
LOAD_LOG = ROOT / "mutants" / "loadavg.jsonl"  # /proc/loadavg sampled during a run
LOAD_EVERY_S = 15.0
KILLED = {"killed", "timeout", "segfault"}
# mutmut's children wait on sandboxed runs and process start-up: at 2 they kept the 2 cores
# about 60% idle, at 4 they keep them busy (each mutant's CPU is capped by tests/conftest.py).
WORKERS = int(os.environ.get("DATAGAUNTLET_MUTATION_WORKERS", "4"))


def _mutmut() -> str:
    return str(Path(sys.executable).with_name("mutmut"))


# A mutant of the sandbox runner's process sweeps (as root: kill by uid, by process group) can
# signal every process it sees. In a PID namespace of its own, with its own /proc, the run sees
# and can signal only what it started, and everything in it ends with the run.
ISOLATION = ["unshare", "--pid", "--mount-proc", "--kill-child"]
# The namespace's init: starts mutmut and reaps every process orphaned to it (mutmut itself
# waits for any child, so it must not be the one orphans are handed to).
_INIT = """
import os, sys
pid = os.fork()
if pid == 0:
    os.execv(sys.argv[1], sys.argv[1:])
while True:
    got, status = os.wait()
    if got == pid:
        sys.exit(os.waitstatus_to_exitcode(status) % 256)
"""


def isolated(argv: list[str]) -> list[str]:
    """`argv` inside a PID namespace of its own, when this process may make one (root, with
    util-linux's unshare); else `argv` as it is, with a warning on stderr."""
    if os.geteuid() == 0 and shutil.which(ISOLATION[0]):
        return [*ISOLATION, sys.executable, "-c", _INIT, *argv]
    print(
        "warning: mutmut runs without a PID namespace of its own (that needs root and unshare): "
        "a mutant of kits/sandbox's process sweeps (sweeps.py and its callers) can signal "
        "processes outside the run",
        file=sys.stderr,
    )
    return argv


def _sigkilled() -> list[str]:
    """Mutants whose tests were killed by SIGKILL (mutmut's "segfault", exit -9)."""
    found = []
    for meta in (ROOT / "mutants").glob("**/*.py.meta"):
        with contextlib.suppress(OSError, ValueError, KeyError):
            codes = json.loads(meta.read_text())["exit_code_by_key"]
            found += [name for name, code in codes.items() if code == -9]
    return sorted(found)


def _load() -> tuple[float, float, float]:
    return tuple(float(x) for x in Path("/proc/loadavg").read_text().split()[:3])  # type: ignore[return-value]


def _idle_jiffies() -> tuple[int, int]:
    """(idle, total) CPU jiffies of the whole machine since boot, from /proc/stat."""
    fields = [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    return fields[3] + fields[4], sum(fields)


def _sample_load(start: float, log: TextIO, seen: list[float]) -> None:
    idle, total = _idle_jiffies()
    load = _load()
    seen.append(load[0])
    line = {"t_s": round(time.monotonic() - start, 1), "load": load, "idle_jiffies": idle}
    log.write(json.dumps(line | {"total_jiffies": total}) + "\n")
    log.flush()


def _sampled(argv: list[str], log: TextIO, start: float, samples: TextIO, seen: list[float]) -> int:
    """Run argv to its end, sampling the load average every LOAD_EVERY_S seconds."""
    child = subprocess.Popen(argv, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT)
    while True:
        _sample_load(start, samples, seen)
        try:
            return child.wait(timeout=LOAD_EVERY_S)
        except subprocess.TimeoutExpired:
            continue


def run(mutants: list[str]) -> int:
    """One `mutmut run` (all mutants not yet judged, or the named ones), timed, load sampled."""
    (ROOT / "mutants").mkdir(exist_ok=True)
    judged_before = _judged()
    load_before = _load()
    idle_before, total_before = _idle_jiffies()
    start = time.monotonic()
    seen: list[float] = []
    with LOG.open("w") as log, LOAD_LOG.open("a") as samples:
        argv = [_mutmut(), "run", "--max-children", str(WORKERS), *mutants]
        code = _sampled(isolated(argv), log, start, samples, seen)
        # A mutant that SIGKILLs its siblings would pass its kill off as theirs: every mutant
        # killed that way is judged again alone, where only its own tests can die of it.
        again = _sigkilled()
        if code == 0 and again:
            argv = [_mutmut(), "run", "--max-children", "1", *again]
            code = _sampled(isolated(argv), log, start, samples, seen)
        _sample_load(start, samples, seen)
    wall = time.monotonic() - start
    idle_after, total_after = _idle_jiffies()
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    times = {
        "wall_s": round(wall, 1),
        "cpu_s": round(usage.ru_utime + usage.ru_stime, 1),
        "workers": WORKERS,
        "cores": os.cpu_count() or 1,
        "load_before": load_before,
        "load_after": _load(),
        "load_sampled": [min(seen), round(sum(seen) / len(seen), 2), max(seen)],  # min, mean, max
        # the machine's busy share over the run, every process counted (neighbours too)
        "machine_busy": round(
            1 - (idle_after - idle_before) / max(1, total_after - total_before), 3
        ),
        "nice": os.nice(0),
        "mutants_named": len(mutants),
        "isolated": isolated(["x"]) != ["x"],
        "judged_again_alone": again,
        "judged_before": judged_before,
        "judged_after": _judged(),
    }
    TIMES.write_text(json.dumps(times, indent=1) + "\n")
    with RUNS.open("a") as runs:
        runs.write(json.dumps(times) + "\n")
    if code != 0:
        tail = LOG.read_text(errors="replace").replace("\r", "\n").splitlines()[-15:]
        print(f"mutmut run exited {code}; the end of {LOG.relative_to(ROOT)}:", file=sys.stderr)
        print("\n".join(tail), file=sys.stderr)
    return code


def _judged() -> int:
    """Mutants with a verdict so far (mutmut keeps them in mutants/**/*.meta)."""
    count = 0
    for meta in (ROOT / "mutants").glob("**/*.py.meta"):
        with contextlib.suppress(OSError, ValueError):
            codes = json.loads(meta.read_text())["exit_code_by_key"].values()
            count += sum(1 for c in codes if c is not None)
    return count


def load_results() -> dict[str, str]:
    out = subprocess.run(
        [_mutmut(), "results", "--all", "true"],
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
        cpu = sum(r["cpu_s"] for r in runs)
        low = min(r["load_before"][0] for r in runs)
        high = max(r["load_after"][0] for r in runs)
        cores = os.cpu_count() or 1
        lines.append(
            f"all {len(runs)} runs since mutants/ was made: {wall:.0f} s wall, {cpu:.0f} s CPU "
            f"({cpu / cores:.0f} s wall on {cores} idle cores), load average "
            f"{low:.2f}-{high:.2f}"
        )
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
    return "\n".join(lines)


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

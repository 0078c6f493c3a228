"""Cost growth: CPU time and peak memory of each env at 1x, 10x, 100x and 1000x its default size.

    python benchmarks/bench_growth.py                    # every env, tables as in `make bench`
    python benchmarks/bench_growth.py --markdown ENV     # one env's table, as in docs/envs/ENV.md
    python benchmarks/bench_growth.py --write-docs [ENV ...]   # rewrite them in docs/envs/
    python benchmarks/bench_growth.py --write-readme FILE [ENV ...]   # or in one FILE

Each (env, size) runs in a fresh process, so peak memory is that size's alone: the figure is
the process's peak resident memory minus its resident memory just before the run (after
imports and a warm-up episode at 1x). Time is CPU seconds of the process and of any child it
waited for (event-recon's sandboxed scripts). Next to each, in the same process:
- x linear: time per unit at this size over time per unit at 1x (1.0 is linear growth);
- a floor: the cheapest thing the size forces, measured in the same process (raw blake2b
  for the keyed draws a world of that size needs; for the envs sized by episode count, the same
  episodes played by the do-nothing policy: world, tools and score without the work).

Sizes that are knobs: dataclean rows (default 10-18, so 14 is 1x) and dirty-integration records
(default 40, page size 4 kept: pages grow with records). bad-batch-gate cases and event-recon
worlds have a fixed size per family and tier, so what grows at scale is the number of
episodes (1x = the env's default task count); their largest sizes are skipped where noted.
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

SIZES = (1, 10, 100, 1000)
CHILD_TIMEOUT_S = 600
DOCS = Path(__file__).resolve().parents[1] / "docs" / "envs"  # each env's page holds its table
sys.path.insert(0, str(Path(__file__).resolve().parent))
from benchlib import Figure, Report, blake2b_floor  # noqa: E402


@dataclass(frozen=True)
class Growth:
    env: str
    unit: str  # what the size counts
    default: int  # units at 1x
    largest: int  # the largest multiple measured
    why_not: str  # why larger multiples are not measured
    floor_label: str


GROWTH = {
    "dataclean": Growth("dataclean", "rows", 14, 1000, "", "raw blake2b, 2 a cell"),
    "dirty-integration": Growth(
        "dirty-integration", "records", 40, 1000, "", "raw blake2b, 5 a record"
    ),
    "bad-batch-gate": Growth(
        "bad-batch-gate",
        "episodes",
        32,
        100,
        "32,000 episodes is about 2 min of CPU, more than a benchmark's minute; per-episode "
        "cost and memory are already flat from 10x to 100x",
        "same episodes, refuse-all policy",
    ),
    "event-recon": Growth(
        "event-recon",
        "episodes",
        4,
        100,
        "4,000 episodes (each a new world and sandboxed scripts) is about 6 min of CPU; "
        "per-episode cost is already flat from 10x to 100x",
        "same episodes, null policy",
    ),
}


def _figures() -> tuple[Figure, ...]:
    out = []
    for env_id, spec in GROWTH.items():
        for m in SIZES:
            if m > spec.largest:
                continue
            size = f"{env_id} at {m}x ({spec.default * m:,} {spec.unit})"
            out.append(Figure(f"{env_id}-x{m}-cpu", f"{size}: CPU", "s", floor=spec.floor_label))
            out.append(Figure(f"{env_id}-x{m}-peak", f"{size}: peak memory above start", "MiB"))
    return tuple(out)


FIGURES = _figures()


def rss_mib() -> float:
    with open("/proc/self/statm") as fh:
        pages = int(fh.read().split()[1])
    return pages * os.sysconf("SC_PAGE_SIZE") / 2**20


def cpu_s() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def play(env: Any, tasks: list[Any], policy: str) -> None:
    """Each task in its own episode, closed after scoring (no world is shared)."""
    run = env.policies()[policy]
    for task in tasks:
        ep = env.episode(task)
        try:
            run(ep)
            ep.score()
        finally:
            ep.close()


def episodes(env: Any, split: str, n: int) -> list[Any]:
    """n tasks, cycling through the split (each episode still builds its own world)."""
    pool = env.tasks(split)
    return [pool[i % len(pool)] for i in range(n)]


def child(env_id: str, multiple: int) -> dict[str, Any]:
    import datagauntlet as dg

    spec = GROWTH[env_id]
    units = spec.default * multiple
    work: Callable[[], None]
    floor: Callable[[], float]
    if env_id == "dataclean":
        env = dg.make("dataclean", family="crm", rows=units)
        task = env.tasks("eval", 1)[0]
        cells = units * 16
        small = dg.make("dataclean", family="crm", rows=spec.default)
        play(small, small.tasks("eval", 1), "oracle")  # warm-up: imports, caches
        work = lambda: play(env, [task], "oracle")  # noqa: E731
        floor = lambda: blake2b_floor(2 * cells)  # noqa: E731
    elif env_id == "dirty-integration":
        env = dg.make("dirty-integration", num_records=units)
        task = env.tasks("eval", 1)[0]
        small = dg.make("dirty-integration")
        play(small, small.tasks("eval", 1), "careful")  # warm-up: imports, caches
        work = lambda: play(env, [task], "careful")  # noqa: E731
        floor = lambda: blake2b_floor(5 * units)  # noqa: E731
    elif env_id == "bad-batch-gate":
        env = dg.make("bad-batch-gate")
        tasks = episodes(env, "train", units)
        play(env, env.tasks("test", 4), "careful")  # warm-up on other tasks: cases are cached
        work = lambda: play(env, tasks, "careful")  # noqa: E731
        floor = lambda: timed(lambda: play(env, tasks, "refuse-all"))  # noqa: E731
    elif env_id == "event-recon":
        env = dg.make("event-recon")
        tasks = env.tasks("train", units)  # unbounded fresh seeds: every episode a new world
        play(env, env.tasks("test", 1), "reference")
        work = lambda: play(env, tasks, "reference")  # noqa: E731
        floor = lambda: timed(lambda: play(env, tasks, "null"))  # noqa: E731
    else:
        raise SystemExit(f"unknown env {env_id!r}; expected one of {', '.join(GROWTH)}")
    # Small worlds run several times (each a fresh episode) so the figure is not one clock
    # tick; episode counts never repeat a task, as a repeat would find its world cached.
    repeats = 1 if spec.unit == "episodes" else max(1, 100 // multiple)
    start_rss = rss_mib()
    seconds = timed(lambda: [work() for _ in range(repeats)]) / repeats
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    caches = {}
    if env_id == "event-recon":  # what its memory grows into: bounded caches
        from datagauntlet.envs.event_recon.grading import accounting
        from datagauntlet.envs.event_recon.world import builder

        for fn in (accounting.period_of, accounting.iso, builder.parse_time):
            caches[fn.__name__] = fn.cache_info().currsize
    return {
        "env": env_id,
        "multiple": multiple,
        "caches": caches,
        "units": units,
        "repeats": repeats,
        "cpu_s": seconds,
        "peak_above_start_mib": max(0.0, peak - start_rss),
        "floor_s": sum(floor() for _ in range(repeats)) / repeats,
    }


def timed(fn: Callable[[], object]) -> float:
    start = cpu_s()
    fn()
    return cpu_s() - start


def measure(env_id: str) -> list[dict[str, Any]]:
    spec = GROWTH[env_id]
    rows = []
    for multiple in SIZES:
        if multiple > spec.largest:
            rows.append({"env": env_id, "multiple": multiple, "skipped": spec.why_not})
            continue
        out = subprocess.run(
            [sys.executable, __file__, "--child", env_id, str(multiple)],
            capture_output=True,
            text=True,
            timeout=CHILD_TIMEOUT_S,
            env=os.environ,
        )
        if out.returncode != 0:
            raise SystemExit(f"{env_id} x{multiple} failed:\n{out.stderr[-2000:]}")
        rows.append(json.loads(out.stdout.strip().splitlines()[-1]))
    return rows


def marginal(rows: list[dict[str, Any]]) -> list[float | None]:
    """CPU seconds each unit added since the previous size costs: flat means linear growth
    (the first size's time is mostly the episode's fixed cost, so it has none)."""
    out: list[float | None] = []
    prev = None
    for r in rows:
        if "skipped" in r:
            out.append(None)
            continue
        out.append(
            None if prev is None else (r["cpu_s"] - prev["cpu_s"]) / (r["units"] - prev["units"])
        )
        prev = r
    return out


def markdown(env_id: str, rows: list[dict[str, Any]], load: str) -> str:
    spec = GROWTH[env_id]
    one = spec.unit[:-1]
    lines = [
        f"| size | {spec.unit} | CPU s | per {one} | each added {one} | peak MiB above start "
        f"| floor s ({spec.floor_label}) | x floor |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r, added in zip(rows, marginal(rows), strict=True):
        if "skipped" in r:
            units = spec.default * r["multiple"]
            lines.append(f"| {r['multiple']}x | {units:,} | not measured: {r['skipped']} |||||")
            continue
        per = r["cpu_s"] / r["units"]
        lines.append(
            f"| {r['multiple']}x | {r['units']:,} | {r['cpu_s']:.3f} | {unit_time(per)} "
            f"| {'' if added is None else unit_time(added)} | {r['peak_above_start_mib']:.1f} "
            f"| {r['floor_s']:.3f} | {r['cpu_s'] / r['floor_s']:.1f} |"
        )
    machine = f"{os.cpu_count()} cores, load average {load}"
    command = f"python benchmarks/bench_growth.py --markdown {env_id}"
    lines += ["", f"Measured by `{command}` ({machine})."]
    caches = [r["caches"] for r in rows if r.get("caches")]
    if caches:
        sizes = ", ".join(f"{name} {n:,}" for name, n in caches[-1].items())
        lines.append(f"Entries in its bounded timestamp caches at the largest size: {sizes}.")
    return "\n".join(lines)


def block_markers(env_id: str) -> tuple[str, str]:
    return f"<!-- growth:{env_id} -->", f"<!-- /growth:{env_id} -->"


def env_page(env_id: str) -> Path:
    """The docs page the env's growth table lives on."""
    return DOCS / f"{env_id}.md"


def write_docs(tables: dict[str, str]) -> None:
    """Each env's table into its own docs page (docs/envs/ENV.md)."""
    for env_id, table in tables.items():
        write_tables(env_page(env_id), {env_id: table})


def write_tables(path: Path, tables: dict[str, str]) -> None:
    """Replace each env's table between its growth markers in one file."""
    text = path.read_text(encoding="utf-8")
    for env_id, table in tables.items():
        start, end = block_markers(env_id)
        if text.count(start) != 1 or text.count(end) != 1:
            raise ValueError(f"{path}: expected one {start} ... {end} block")
        head, rest = text.split(start)
        _, tail = rest.split(end)
        text = f"{head}{start}\n{table}\n{end}{tail}"
    path.write_text(text, encoding="utf-8")


def unit_time(seconds: float) -> str:
    if seconds >= 1e-3:
        return f"{seconds * 1e3:.2f} ms"
    return f"{seconds * 1e6:.1f} us"


def loadavg() -> str:
    with open("/proc/loadavg") as fh:
        return " ".join(fh.read().split()[:3])


def _measure_and_write(chosen: list[str], path: Path | None) -> int:
    """Measure the chosen envs (all by default) and write each table: into `path`, or, with
    no path, into each env's own docs page."""
    chosen = chosen or list(GROWTH)
    unknown = [e for e in chosen if e not in GROWTH]
    if unknown:
        print(f"unknown env {unknown[0]!r}; expected one of {', '.join(GROWTH)}", file=sys.stderr)
        return 2
    tables = {}
    for env_id in chosen:
        start = loadavg()
        rows = measure(env_id)
        tables[env_id] = markdown(env_id, rows, f"{start} at start, {loadavg()} at end")
    try:
        if path is None:
            write_docs(tables)
        else:
            write_tables(path, tables)
    except (OSError, ValueError) as exc:
        print(f"bench_growth: {exc}", file=sys.stderr)
        return 2
    return 0


def main(argv: list[str]) -> int:
    if argv[:1] == ["--child"]:
        print(json.dumps(child(argv[1], int(argv[2]))))
        return 0
    if argv[:1] == ["--markdown"]:
        env_id = argv[1] if len(argv) > 1 else ""
        if env_id not in GROWTH:
            print(f"usage: bench_growth.py --markdown {{{','.join(GROWTH)}}}", file=sys.stderr)
            return 2
        start = loadavg()
        rows = measure(env_id)
        print(markdown(env_id, rows, f"{start} at start, {loadavg()} at end"))
        return 0
    if argv[:1] == ["--write-docs"]:
        return _measure_and_write(argv[1:], None)
    if argv[:1] == ["--write-readme"]:
        if len(argv) < 2:
            print("usage: bench_growth.py --write-readme FILE [ENV ...]", file=sys.stderr)
            return 2
        return _measure_and_write(argv[2:], Path(argv[1]))
    report = Report("cost growth: every env at 1x-1000x its default size", FIGURES)
    for env_id, spec in GROWTH.items():
        rows = measure(env_id)
        for r, added in zip(rows, marginal(rows), strict=True):
            if "skipped" in r:
                report.note(f"{env_id} at {r['multiple']}x not measured: {r['skipped']}")
                continue
            key = f"{env_id}-x{r['multiple']}"
            report.add(f"{key}-cpu", r["cpu_s"], floor=r["floor_s"])
            report.add(f"{key}-peak", r["peak_above_start_mib"])
            if added is not None:
                report.add(f"{env_id} at {r['multiple']}x: CPU of each added {spec.unit[:-1]}",
                           added * 1e6, "us")  # fmt: skip
    report.show()
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))

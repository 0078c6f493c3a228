"""Summarise a `mutmut run`: the kill rate per file and overall, and every surviving mutant.

Mutants listed in docs/mutation/equivalent.txt (one name per line, a reason after `#`) are
equivalent: no input that reaches that code can tell them apart from the original, so they are
left out of the rate and shown apart.  Usage: python scripts/mutation_report.py [--json]
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter, defaultdict
from pathlib import Path

EQUIVALENT = Path(__file__).resolve().parents[1] / "docs" / "mutation" / "equivalent.txt"
KILLED = {"killed", "timeout", "segfault"}


def load_results() -> dict[str, str]:
    mutmut = Path(sys.executable).with_name("mutmut")
    out = subprocess.run(
        [str(mutmut), "results", "--all", "true"], capture_output=True, text=True, check=True
    ).stdout
    results = {}
    for line in out.splitlines():
        name, sep, status = line.strip().rpartition(": ")
        if sep:
            results[name] = status.strip()
    return results


def load_equivalent() -> dict[str, str]:
    if not EQUIVALENT.is_file():
        return {}
    found = {}
    for line in EQUIVALENT.read_text().splitlines():
        name, _, reason = line.partition("#")
        if name.strip():
            found[name.strip()] = reason.strip()
    return found


def module_of(name: str) -> str:
    return name.split(".x", 1)[0].rsplit(".xǁ", 1)[0]


def main() -> int:
    results = load_results()
    if not results:
        print("no mutation results: run `make mutants` first")
        return 2
    equivalent = load_equivalent()
    per_module: dict[str, Counter[str]] = defaultdict(Counter)
    survivors = []
    for name, status in sorted(results.items()):
        module = module_of(name)
        if name in equivalent:
            per_module[module]["equivalent"] += 1
            continue
        per_module[module]["total"] += 1
        if status in KILLED:
            per_module[module]["killed"] += 1
        else:
            survivors.append((name, status))
    total = sum(c["total"] for c in per_module.values())
    killed = sum(c["killed"] for c in per_module.values())
    rate = killed / total if total else 1.0
    if "--json" in sys.argv:
        print(
            json.dumps(
                {
                    "kill_rate": rate,
                    "killed": killed,
                    "total": total,
                    "equivalent": len(equivalent),
                    "survivors": survivors,
                }
            )
        )
        return 0
    print(f"{'module':<52} {'killed':>7} {'total':>6} {'rate':>7} {'equiv':>6}")
    for module, c in sorted(per_module.items()):
        share = c["killed"] / c["total"] if c["total"] else 1.0
        print(f"{module:<52} {c['killed']:>7} {c['total']:>6} {share:>7.1%} {c['equivalent']:>6}")
    print(f"{'all':<52} {killed:>7} {total:>6} {rate:>7.1%} {len(equivalent):>6}")
    if survivors:
        print(f"\n{len(survivors)} surviving mutants (see each with `mutmut show NAME`):")
        for name, status in survivors:
            print(f"  {name}  [{status}]")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

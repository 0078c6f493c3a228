"""`datagauntlet event-recon ...`: the env's own CLI subcommand (its registration's hook).

- `materialize --task N [--tier T] --out DIR` writes a task's workspace exactly as the agent
  sees it (the four files, nothing else);
- `explain --task N [--tier T]` prints the manifest and each broken partner's wrong and
  correct balances, for people debugging a task. It shows the answer key: never give its
  output to an agent.

`--task N` is the N-th task of the split, or with `--tier T` the N-th task of that tier;
`--seed S --tier T` names any world directly.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from datagauntlet.core.numbers import count, number

NAME = "event-recon"
HELP = "Look inside event-recon tasks: materialize a workspace, explain a task's answer key."


def _task_options(p: argparse.ArgumentParser) -> None:
    which = p.add_mutually_exclusive_group(required=True)
    which.add_argument("--task", type=count(0), metavar="N", help="task N of the split (of --tier)")
    which.add_argument(
        "--seed", type=number(int, 0, 2**63 - 1), metavar="S", help="any world seed (needs --tier)"
    )
    p.add_argument("--tier", type=int, choices=(1, 2, 3, 4), help="difficulty tier")
    p.add_argument("--split", default="public", help="split of --task (default: public)")
    p.add_argument("--family-module", metavar="MODULE", help="a module of extra families/splits")
    p.add_argument("--json", action="store_true", help="print JSON")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.set_defaults(event_recon_parser=parser)
    sub = parser.add_subparsers(dest="event_recon_command", metavar="COMMAND")
    m = sub.add_parser(
        "materialize",
        help="write a task's workspace (the four files) into DIR",
        description="Write one task's workspace exactly as the agent sees it.",
    )
    _task_options(m)
    m.add_argument("--out", required=True, metavar="DIR", help="directory to write into")
    m.add_argument("--force", action="store_true", help="overwrite the four files if present")
    e = sub.add_parser(
        "explain",
        help="print a task's manifest and its broken partners' balances (the answer key)",
        description=(
            "Print one task's defect manifest and, for each broken partner, the balance the "
            "shipped ledger shows and the one the contract says is owed. This is the answer "
            "key: for debugging tasks, never for an agent."
        ),
    )
    _task_options(e)


def _world(args: argparse.Namespace) -> tuple[Any, Any, Any]:
    from datagauntlet.envs.event_recon import splits
    from datagauntlet.envs.event_recon.world.generator import build_task

    if args.seed is not None:
        if args.tier is None:
            raise ValueError("--seed needs --tier")
        if args.seed < 0:
            raise ValueError("--seed must be 0 or more")
        record = splits.TaskRecord(
            -1, args.seed, args.tier, "seed", splits.CANARY, args.family_module
        )
    else:
        record = splits.task(args.split, args.task, args.tier, args.family_module)
    families = splits.families_of(record)
    return record, build_task(record.seed, record.tier, families), families


def _materialize(args: argparse.Namespace) -> int:
    from datagauntlet.envs.event_recon.world.records import FILES
    from datagauntlet.envs.event_recon.world.workspace import materialize

    out = Path(args.out)
    if out.exists() and not out.is_dir():
        raise ValueError(f"--out {out} exists and is not a directory")
    present = [n for n in FILES if (out / n).exists()]
    if present and not args.force:
        raise ValueError(f"{out} already holds {', '.join(present)}; pass --force to overwrite")
    record, world, _ = _world(args)
    try:
        materialize(world, out)
    except OSError as exc:
        raise ValueError(f"cannot write {out}: {exc.strerror or exc}") from None
    info = {
        "task": record.task_id if record.index >= 0 else None,
        "seed": world.seed,
        "tier": world.tier,
        "out": str(out),
        "files": list(FILES),
    }
    if args.json:
        print(json.dumps(info))
    else:
        print(f"wrote {', '.join(FILES)} to {out} (seed {world.seed}, tier {world.tier})")
    return 0


def _rule_and_bug(world: Any, families: Any, family: str) -> dict[str, str]:
    """The rule and bug of the defect as planted (a family's mode can change both)."""
    planted = world.notes.get("rules", {}).get(family)
    if planted:
        return dict(planted)
    fam = families.get(family)
    return {"rule": getattr(fam, "rule", ""), "latent_bug": getattr(fam, "latent_bug", "")}


def explanation(record: Any, world: Any, families: Any = None) -> dict[str, Any]:
    families = families or {}
    return {
        "task": record.task_id if record.index >= 0 else None,
        "seed": world.seed,
        "tier": world.tier,
        "zone_source": world.zone_source,
        "plan_attempts": world.attempts,
        "names": {
            **world.schema.payload_fields(),
            "amount_column": world.schema.amount_column,
            "period_column": world.schema.period_column,
        },
        "manifest": [
            {
                "family": d.family,
                "partner_id": d.partner_id,
                "evidence": list(d.evidence),
                **_rule_and_bug(world, families, d.family),
            }
            for d in world.manifest
        ],
        "broken_partners": {
            p: {"shipped": world.shipped[p], "correct": world.correct[p]}
            for p in world.broken_partners
        },
        "partners": len(world.partner_ids),
        "repairable_without_contract": list(world.notes.get("repairable_without_contract", ())),
        "held_out": _held_out(record),
    }


def _held_out(record: Any) -> str | None:
    """For a held-out split: which families it draws beyond the public twelve (or none)."""
    from datagauntlet.envs.event_recon import splits

    if record.split not in splits.HELDOUT_SPLITS:
        return None
    return splits.heldout_status(record.family_module)


def _explain(args: argparse.Namespace) -> int:
    record, world, families = _world(args)
    info = explanation(record, world, families)
    if args.json:
        print(json.dumps(info, indent=2))
        return 0
    print(
        f"{info['task'] or 'seed'} seed {world.seed} tier {world.tier} "
        f"({info['partners']} partners, zones from {world.zone_source}, "
        f"plan accepted on attempt {world.attempts})"
    )
    if info.get("held_out"):
        print(info["held_out"])
    names = info["names"]
    print("names: " + ", ".join(f"{k}={v}" for k, v in names.items()))
    print("manifest (answer key):")
    for d in info["manifest"]:
        shown = ", ".join(d["evidence"][:3]) + (" ..." if len(d["evidence"]) > 3 else "")
        why = d["rule"] + (f"/{d['latent_bug']}" if d["latent_bug"] else "")
        print(f"  {d['family']:<28} {why:<8} {d['partner_id']}  evidence: {shown}")
    print("broken partners (shipped -> correct, minor units):")
    for p, b in info["broken_partners"].items():
        periods = sorted(set(b["shipped"]) | set(b["correct"]))
        cells = ", ".join(
            f"{per}: {b['shipped'].get(per, 0)} -> {b['correct'].get(per, 0)}"
            for per in periods
            if b["shipped"].get(per, 0) != b["correct"].get(per, 0)
        )
        print(f"  {p}  {cells}")
    if info["repairable_without_contract"]:
        print("repairable without the contract: " + ", ".join(info["repairable_without_contract"]))
    return 0


def run(args: argparse.Namespace) -> int:
    command = getattr(args, "event_recon_command", None)
    if command == "materialize":
        return _materialize(args)
    if command == "explain":
        return _explain(args)
    args.event_recon_parser.print_help(sys.stderr)
    return 2
